"""Equal queries of different replays run once.

A query's run depends on nothing but what it is given: the query, its input records and
micro-batch boundaries, whether its state is read back, the schema registry it sees, and the
replay mode (restart, bounded). Historical folders often repeat all of it: a later release
stored a checkpoint next to the same plan, and the folder replays the same inputs. Such
queries run once in a round; each replay still gets a run of its own, with its share of the
seconds, and compares it with its own folder. A query that starts from or captures stored
checkpoints always runs on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from qtt.hashable import hashable
from qtt.runtime.jobs import QueryRun

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
    item = entry.state.item
    if item.restore is not None:
        return None
    captures = item.mode.capture_state and entry.shape.stateful
    parts = (entry.query, entry.shape, entry.records, entry.ends, captures, entry.state.registry)
    return hashable((*parts, item.mode.restart, item.mode.bounded))


def shared(run: QueryRun, times: int) -> list[QueryRun]:
    """One run for each of ``times`` replays, each with its share of the seconds."""
    if times == 1:
        return [run]
    return [replace(run, seconds=run.seconds / times) for _ in range(times)]
