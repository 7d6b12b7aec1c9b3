"""The progress contract: ``progress(done, total)`` counts the items given, not queries."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from qtt.harness.cases.loader import load_file
from qtt.harness.replay import driver
from qtt.harness.replay.runner import run_variants
from qtt.runtime.jobs import Job, QueryRun
from qtt.runtime.spark import scratch

FIXTURES = Path(__file__).parents[1] / "fixtures" / "cases"


@pytest.fixture
def fake_spark(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``run_jobs`` without Spark: every query runs and writes nothing; records the group sizes."""
    groups: list[int] = []

    def run_jobs(session: object, jobs: Sequence[Job], checkpoint: str, **_: object) -> dict[int, QueryRun]:
        assert Path(checkpoint).parent.name.startswith(driver.REPLAY_PREFIX)
        groups.append(len(jobs))
        return {job.job_id: QueryRun(query_id=job.query.query_id, topic="", batches=1) for job in jobs}

    monkeypatch.setattr("qtt.runtime.execute.executor.run_jobs", run_jobs)
    monkeypatch.setattr("qtt.runtime.execute.executor.build_jobs", lambda *_: None)
    return groups


def test_variants_are_counted_when_their_last_query_ran(fake_spark: list[int], tmp_path: Path) -> None:
    loaded = load_file(FIXTURES / "replays.json")
    variants = loaded.variants * 3
    calls: list[tuple[int, int]] = []
    run_variants(variants, lambda: object(), workdir=tmp_path, progress=lambda d, t: calls.append((d, t)))  # type: ignore[arg-type,return-value]
    assert calls[-1] == (len(variants), len(variants))
    assert all(total == len(variants) for _, total in calls)
    assert [done for done, _ in calls] == sorted({done for done, _ in calls})


def test_a_variant_without_a_replay_is_done_at_once(tmp_path: Path) -> None:
    variants = [v for v in load_file(FIXTURES / "named.json").variants]
    disabled = [v.__class__(**{**v.__dict__, "enabled": False}) for v in variants]
    calls: list[tuple[int, int]] = []
    run_variants(disabled, lambda: object(), progress=lambda d, t: calls.append((d, t)))  # type: ignore[arg-type,return-value]
    assert calls == [(len(disabled), len(disabled))]


def test_a_killed_replays_folder_is_cleaned_by_the_next_replay(fake_spark: list[int], tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    killed = tmp_path / f"{driver.REPLAY_PREFIX}killed"
    (killed / "round0-group0").mkdir(parents=True)
    (killed / scratch.OWNER_FILE).write_text(f"{child.pid}\n")
    running = tmp_path / f"{driver.REPLAY_PREFIX}running"
    running.mkdir()
    (running / scratch.OWNER_FILE).write_text(f"{os.getppid()}\n")
    run_variants(load_file(FIXTURES / "replays.json").variants, lambda: object(), workdir=tmp_path)  # type: ignore[arg-type,return-value]
    assert sorted(p.name for p in tmp_path.iterdir()) == [running.name]


def test_restored_queries_count_as_each_one_ends(
    fake_spark: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a restored query runs alone: a run of 40 of them must not stay silent until the last ends
    monkeypatch.setattr(driver, "_restores", lambda entry: True)
    monkeypatch.setattr(driver, "_restore_point", lambda entry: None)
    monkeypatch.setattr(
        driver.restored_runs,
        "run_restored",
        lambda session, query, *_: (QueryRun(query_id=query.query_id, topic="", batches=1), None),
    )
    variants = load_file(FIXTURES / "replays.json").variants * 3
    calls: list[tuple[int, int]] = []
    run_variants(variants, lambda: object(), workdir=tmp_path, progress=lambda d, t: calls.append((d, t)))  # type: ignore[arg-type,return-value]
    assert fake_spark == []
    assert calls[-1] == (len(variants), len(variants))
    assert len(calls) >= len(variants) // 2, calls
