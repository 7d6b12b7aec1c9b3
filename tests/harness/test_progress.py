"""The progress contract: ``progress(done, total)`` counts the items given, not queries."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from qtt.harness.cases.loader import load_file
from qtt.harness.replay import driver
from qtt.harness.replay.driver import ReplayItem
from qtt.harness.replay.restored_runs import Restore
from qtt.harness.replay.runner import plan_variant, run_variants
from qtt.runtime.jobs import Job, QueryRun
from qtt.runtime.spark import scratch

FIXTURES = Path(__file__).parents[1] / "fixtures" / "cases"
CASES = Path(__file__).parents[2] / "cases"


class FakeRuntime:
    """A runtime without Spark: every query runs and writes nothing; it records the group sizes."""

    def __init__(self) -> None:
        self.groups: list[int] = []
        self.alone: list[str] = []

    def run_jobs(self, jobs: Sequence[Job], checkpoint: str, *, seed: object = None) -> dict[int, QueryRun]:
        assert Path(checkpoint).parent.name.startswith(driver.REPLAY_PREFIX)
        self.alone += [job.query.query_id for job in jobs]
        return {job.job_id: QueryRun(query_id=job.query.query_id, topic="", batches=1) for job in jobs}

    def run_groups(self, groups: Sequence[Sequence[Job]], checkpoints: Sequence[str]) -> Iterator[dict[int, QueryRun]]:
        for jobs, checkpoint in zip(groups, checkpoints, strict=True):
            assert Path(checkpoint).parent.name.startswith(driver.REPLAY_PREFIX)
            self.groups.append(len(jobs))
            yield {job.job_id: QueryRun(query_id=job.query.query_id, topic="", batches=1) for job in jobs}

    def unreadable_state(self, checkpoint: Path, error: object) -> str | None:
        return None


@pytest.fixture
def fake_runtime() -> FakeRuntime:
    return FakeRuntime()


def test_variants_are_counted_when_their_last_query_ran(fake_runtime: FakeRuntime, tmp_path: Path) -> None:
    loaded = load_file(FIXTURES / "replays.json")
    variants = loaded.variants * 3
    calls: list[tuple[int, int]] = []
    progress = lambda d, t: calls.append((d, t))  # noqa: E731
    run_variants(variants, _no_spark, workdir=tmp_path, progress=progress, runtime=fake_runtime)
    assert calls[-1] == (len(variants), len(variants))
    assert all(total == len(variants) for _, total in calls)
    assert [done for done, _ in calls] == sorted({done for done, _ in calls})


def test_a_variant_without_a_replay_is_done_at_once(tmp_path: Path) -> None:
    variants = [v for v in load_file(FIXTURES / "named.json").variants]
    disabled = [v.__class__(**{**v.__dict__, "enabled": False}) for v in variants]
    calls: list[tuple[int, int]] = []
    run_variants(disabled, _no_spark, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(len(disabled), len(disabled))]


def test_a_killed_replays_folder_is_cleaned_by_the_next_replay(fake_runtime: FakeRuntime, tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    killed = tmp_path / f"{driver.REPLAY_PREFIX}killed"
    (killed / "round0-group0").mkdir(parents=True)
    (killed / scratch.OWNER_FILE).write_text(f"{child.pid}\n")
    running = tmp_path / f"{driver.REPLAY_PREFIX}running"
    running.mkdir()
    (running / scratch.OWNER_FILE).write_text(f"{os.getppid()}\n")
    run_variants(load_file(FIXTURES / "replays.json").variants, _no_spark, workdir=tmp_path, runtime=fake_runtime)
    assert sorted(p.name for p in tmp_path.iterdir()) == [running.name]


def test_restored_queries_count_as_each_one_ends(fake_runtime: FakeRuntime, tmp_path: Path) -> None:
    # a restored query runs alone: a run of 40 of them must not stay silent until the last ends
    variants = load_file(CASES / "aggregation.json").variants[:1] * 12
    restore = Restore(point=1, folder=tmp_path / "stored", capture=False)
    items = [replace(ReplayItem.from_case(plan_variant(v).plan, v.inputs), restore=restore) for v in variants]
    calls: list[tuple[int, int]] = []
    driver.replay_many(items, runtime=fake_runtime, workdir=tmp_path, progress=lambda d, t: calls.append((d, t)))
    assert fake_runtime.groups == [], "a stateful query with a stored checkpoint runs alone"
    assert len(fake_runtime.alone) == len(variants)
    assert calls[-1] == (len(variants), len(variants))
    assert len(calls) >= len(variants) // 2, calls


def _no_spark() -> Any:
    raise AssertionError("the fake runtime needs no SparkSession")
