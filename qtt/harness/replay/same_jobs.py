"""Equal queries of different replays run once.

A query's run depends on nothing but what it is given: the query, its input records and
micro-batch boundaries, whether its state is read back, the schema registry it sees, the
plan's settings (:class:`~qtt.runtime.jobs.QuerySettings`) and the replay mode (restart,
bounded). Historical folders often repeat all of it: a later release stored a checkpoint
next to the same plan, and the folder replays the same inputs. Such
queries run once in a round; each replay still gets a run of its own, with its share of the
seconds, and compares it with its own folder. A query that starts from or captures stored
checkpoints always runs on its own.

Within one session (:func:`sharing`) a run is also kept for the replays that follow: a case
whose plan and inputs are those of its newest historical folder runs once for both. A run that
read its state back serves a replay that does not need it (without the state); not the other
way round, so a session replays historical folders before cases.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, TypeVar

from qtt.hashable import hashable
from qtt.runtime.jobs import QueryRun, keeps_old_placement

_T = TypeVar("_T")


def runs_once(entries: Sequence[_T], key: Callable[[_T], Hashable | None]) -> tuple[list[_T], dict[int, list[_T]]]:
    """The entries to run (the first of each equal kind, in order), and by ``id`` of each, the
    entries its run serves (itself first). ``key`` gives what makes a run what it is, or None
    for an entry that must run on its own."""
    first: dict[Hashable, _T] = {}
    chosen: list[_T] = []
    served: dict[int, list[_T]] = {}
    for entry in entries:
        found = key(entry)
        if found is not None and found in first:
            served[id(first[found])].append(entry)
            continue
        if found is not None:
            first[found] = entry
        chosen.append(entry)
        served[id(entry)] = [entry]
    return chosen, served


def job_content(entry: Any) -> Hashable | None:
    """What makes the run of a round's entry (the driver's ``_Todo``) what it is; None for one
    that starts from or captures stored checkpoints."""
    found = _run_content(entry)
    return None if found is None else (found, _reads_state(entry))


def _run_content(entry: Any) -> Hashable | None:
    """What makes a run what it is but whether it reads its state back."""
    item = entry.state.item
    if item.restore is not None:
        return None
    parts = (entry.query, entry.shape, entry.records, entry.ends, entry.state.registry, entry.state.settings)
    old_placement = keeps_old_placement(item.mode, entry.records, entry.ends)
    return hashable((*parts, item.mode.restart, item.mode.bounded, old_placement))


def _reads_state(entry: Any) -> bool:
    return bool(entry.state.item.mode.capture_state and entry.shape.stateful)


class SessionRuns:
    """The runs of a session's replays so far, by what made them (:func:`sharing`)."""

    def __init__(self) -> None:
        #: each run, and whether it read its state back
        self._runs: dict[Hashable, tuple[QueryRun, bool]] = {}
        #: how many runs were served from here (tests and benchmarks read it)
        self.served = 0

    def run_for(self, entry: Any) -> QueryRun | None:
        """A kept run that does for ``entry`` (the driver's ``_Todo``), or None."""
        found = _run_content(entry)
        kept = self._runs.get(found) if found is not None else None
        wanted = _reads_state(entry)
        if kept is None or (wanted and not kept[1]):
            return None
        run, read = kept
        self.served += 1
        return run if wanted or not read else replace(run, internal_topics=[])

    def keep(self, entry: Any, run: QueryRun) -> None:
        """Keep ``entry``'s run unless it failed, was stopped at the time limit, or a kept one
        already has its state."""
        found = _run_content(entry)
        if found is None or run.error is not None or run.timed_out is not None:
            return
        kept = self._runs.get(found)
        read = _reads_state(entry)
        if kept is None or (read and not kept[1]):
            self._runs[found] = (run, read)


_SESSION_RUNS: ContextVar[SessionRuns | None] = ContextVar("qtt_session_runs", default=None)


@contextmanager
def sharing() -> Iterator[SessionRuns]:
    """Keep runs for every replay inside the block (on this thread), as one session's; an
    enclosing block's runs are shared, not replaced."""
    outer = _SESSION_RUNS.get()
    if outer is not None:
        yield outer
        return
    runs = SessionRuns()
    token = _SESSION_RUNS.set(runs)
    try:
        yield runs
    finally:
        _SESSION_RUNS.reset(token)


def session_runs() -> SessionRuns | None:
    """The runs of the session this thread replays in, if any."""
    return _SESSION_RUNS.get()


def shared(run: QueryRun, times: int) -> list[QueryRun]:
    """One run for each of ``times`` replays, each with its share of the seconds."""
    if times == 1:
        return [run]
    return [replace(run, seconds=run.seconds / times) for _ in range(times)]
