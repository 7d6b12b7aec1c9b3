"""Groups of jobs: built ahead on one thread, run two at a time, yielded in order (no Spark here)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from qtt.runtime.execute import executor
from qtt.runtime.jobs import QueryRun


def _runs(jobs: list[str]) -> dict[int, QueryRun]:
    return {index: QueryRun(query_id=job, topic="") for index, job in enumerate(jobs)}


def test_the_next_group_is_built_while_this_one_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    built_third = threading.Event()
    events: list[tuple[str, str, str]] = []

    def build_jobs(session: object, jobs: list[str], checkpoint: str) -> str:
        events.append(("build", checkpoint, threading.current_thread().name))
        if checkpoint == "g2":
            built_third.set()
        return checkpoint

    def run_jobs(session: object, jobs: list[str], checkpoint: str, *, built: Any) -> dict[int, QueryRun]:
        assert built.result() == checkpoint
        if checkpoint == "g0":  # group 2 is built while group 0 runs, not after
            assert built_third.wait(timeout=30)
        events.append(("run", checkpoint, threading.current_thread().name))
        return _runs(jobs)

    monkeypatch.setattr(executor, "build_jobs", build_jobs)
    monkeypatch.setattr(executor, "run_jobs", run_jobs)
    groups = [["a", "b"], ["c"], ["d", "e", "f"]]
    runs = list(executor.run_groups(object(), groups, ["g0", "g1", "g2"]))  # type: ignore[arg-type]

    assert [[run.query_id for run in group.values()] for group in runs] == groups, "yielded in order"
    assert [e[1] for e in events if e[0] == "build"] == ["g0", "g1", "g2"]
    assert {e[2].split("_")[0] for e in events if e[0] == "build"} == {"qtt-build"}
    assert all(run.seconds >= 0 for group in runs for run in group.values())


def test_two_groups_run_at_once_and_come_back_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    second_started = threading.Event()
    running: set[str] = set()
    most = [0]
    lock = threading.Lock()

    def run_jobs(session: object, jobs: list[str], checkpoint: str, *, built: Any) -> dict[int, QueryRun]:
        with lock:
            running.add(checkpoint)
            most[0] = max(most[0], len(running))
        if checkpoint == "g1":
            second_started.set()
        if checkpoint == "g0":  # the first group ends only once the second one has started
            assert second_started.wait(timeout=30)
        with lock:
            running.discard(checkpoint)
        return _runs(jobs)

    monkeypatch.setattr(executor, "build_jobs", lambda session, jobs, checkpoint: checkpoint)
    monkeypatch.setattr(executor, "run_jobs", run_jobs)
    groups = [["a"], ["b"], ["c"], ["d"]]
    runs = list(executor.run_groups(object(), groups, ["g0", "g1", "g2", "g3"]))  # type: ignore[arg-type]

    assert [[run.query_id for run in group.values()] for group in runs] == groups
    assert most[0] == executor.GROUP_THREADS == 2
