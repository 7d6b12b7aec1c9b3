"""The driver builds the next group's plans while Spark runs this group's (no Spark here)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from qtt.runtime.execute import executor
from qtt.runtime.jobs import QueryRun


def test_the_next_group_is_built_while_this_one_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    built_second = threading.Event()
    events: list[tuple[str, str, str]] = []

    def build_jobs(session: object, jobs: list[str], checkpoint: str) -> str:
        events.append(("build", checkpoint, threading.current_thread().name))
        if checkpoint == "g1":
            built_second.set()
        return checkpoint

    def run_jobs(session: object, jobs: list[str], checkpoint: str, *, built: Any) -> dict[int, QueryRun]:
        assert built.result() == checkpoint
        if checkpoint == "g0":  # group 1 is built while group 0 runs, not after
            assert built_second.wait(timeout=30)
        events.append(("run", checkpoint, threading.current_thread().name))
        return {index: QueryRun(query_id=job, topic="") for index, job in enumerate(jobs)}

    monkeypatch.setattr(executor, "build_jobs", build_jobs)
    monkeypatch.setattr(executor, "run_jobs", run_jobs)
    groups = [["a", "b"], ["c"], ["d", "e", "f"]]
    runs = list(executor.run_groups(object(), groups, ["g0", "g1", "g2"]))  # type: ignore[arg-type]

    assert [[run.query_id for run in group.values()] for group in runs] == groups
    assert [e[1] for e in events if e[0] == "run"] == ["g0", "g1", "g2"]
    assert {e[2].split("_")[0] for e in events if e[0] == "build"} == {"qtt-build"}
    assert all(run.seconds >= 0 for group in runs for run in group.values())
