"""Equal queries of different replays run once; each replay gets its own run and its share of the time."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from qtt.harness.replay import same_jobs
from qtt.runtime.jobs import DEFAULT_SETTINGS, QueryRun, ReplayMode

HISTORICAL = Path(__file__).parents[2] / "historical_plans"
STATION = HISTORICAL / "aggregation__counts_sums_and_averages_per_station__880598fa"


def _counted_jobs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every group Spark runs from now on, one entry a group."""
    from qtt.runtime.execute import executor

    jobs: list[int] = []
    run_groups = executor.run_groups

    def counting(session, groups, checkpoints):  # type: ignore[no-untyped-def]
        jobs.extend(len(group) for group in groups)
        return run_groups(session, groups, checkpoints)

    monkeypatch.setattr(executor, "run_groups", counting)
    return jobs


def test_equal_entries_run_once_and_serve_each_other_in_order() -> None:
    entries = ["a", "b", "a2", "solo", "solo2", "b2"]
    key = {"a": 1, "a2": 1, "b": 2, "b2": 2, "solo": None, "solo2": None}
    chosen, served = same_jobs.runs_once(entries, key.__getitem__)
    assert chosen == ["a", "b", "solo", "solo2"]
    assert served[id("a")] == ["a", "a2"] and served[id("b")] == ["b", "b2"]
    assert served[id("solo")] == ["solo"] and served[id("solo2")] == ["solo2"]


def test_a_shared_run_is_a_run_for_each_with_its_share_of_the_seconds() -> None:
    run = QueryRun("Q", "T", seconds=0.9, batches=3)
    alone = same_jobs.shared(run, 1)
    assert alone == [run] and alone[0] is run
    three = same_jobs.shared(run, 3)
    assert [r.seconds for r in three] == pytest.approx([0.3] * 3)
    assert len({id(r) for r in three}) == 3 and all(r.batches == 3 for r in three)


@pytest.mark.spark
def test_two_folders_of_one_plan_replay_it_once_and_each_passes(spark, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from qtt.harness.historical import replay as historical_replay
    from qtt.harness.status import Status

    older, newer = STATION / "0.3.0_1795228811139", STATION / "0.7.0_1795620141001"
    broken = tmp_path / "broken" / older.name  # the same plan and inputs, a different recorded output
    shutil.copytree(older, broken)
    spec = json.loads((broken / "spec.json").read_text(encoding="utf-8"))
    spec["outputs"][0]["valueBytes"] = base64.b64encode(b'{"RENTALS":7}').decode()
    (broken / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    jobs = _counted_jobs(monkeypatch)
    results = historical_replay.replay_folders([older, newer, broken], lambda: spark)
    assert sum(jobs) == 1  # one query, one plan, the same inputs: one run
    assert [r.status for r in results] == [Status.PASSED, Status.PASSED, Status.FAILED], [r.reason for r in results]
    assert results[0].replay is not results[1].replay
    assert results[0].seconds > 0 and results[1].seconds > 0


class _Shape:
    stateful = True


class _Entry:
    """What :class:`same_jobs.SessionRuns` reads of a driver's round entry."""

    SHAPE = _Shape()

    def __init__(self, query: str, *, reads_state: bool, restore: object = None) -> None:
        self.query, self.records, self.ends, self.shape = query, ("r1", "r2"), (1, 2), self.SHAPE
        item = type("Item", (), {"mode": ReplayMode(capture_state=reads_state), "restore": restore})()
        self.state = type("State", (), {"item": item, "registry": None, "settings": DEFAULT_SETTINGS})()


def test_a_session_keeps_runs_and_serves_the_state_only_to_who_has_it() -> None:
    runs = same_jobs.SessionRuns()
    plain = QueryRun("Q", "T", internal_topics=[])
    runs.keep(_Entry("q", reads_state=False), plain)
    assert runs.run_for(_Entry("q", reads_state=True)) is None  # a run without its state cannot serve one with
    assert runs.run_for(_Entry("q", reads_state=False)) is plain
    captured = QueryRun("Q", "T", internal_topics=["changelog"])  # type: ignore[list-item]
    runs.keep(_Entry("q", reads_state=True), captured)
    assert runs.run_for(_Entry("q", reads_state=True)) is captured
    without = runs.run_for(_Entry("q", reads_state=False))
    assert without is not None and without.internal_topics == [] and without.query_id == "Q"
    assert runs.run_for(_Entry("other", reads_state=False)) is None
    assert runs.served == 3
    failed = QueryRun("Q", "T", error=ValueError("boom"))  # type: ignore[arg-type]
    runs.keep(_Entry("bad", reads_state=False), failed)
    assert runs.run_for(_Entry("bad", reads_state=False)) is None  # a failure is never kept
    runs.keep(_Entry("stored", reads_state=False, restore=object()), plain)
    assert runs.run_for(_Entry("stored", reads_state=False, restore=object())) is None


def test_sharing_is_one_session_per_block_and_nested_blocks_share_it() -> None:
    assert same_jobs.session_runs() is None
    with same_jobs.sharing() as outer:
        assert same_jobs.session_runs() is outer
        with same_jobs.sharing() as inner:
            assert inner is outer
    assert same_jobs.session_runs() is None


@pytest.mark.spark
def test_in_one_session_a_case_takes_the_run_of_its_newest_folder_but_not_the_reverse(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from qtt.harness.cases.loader import load_file
    from qtt.harness.historical import replay as historical_replay
    from qtt.harness.replay.runner import run_variants
    from qtt.harness.status import Status

    newest = STATION / "0.7.0_1795620141001"
    cases = Path(__file__).parents[2] / "cases" / "aggregation.json"
    variant = next(v for v in load_file(cases).variants if v.case == "counts sums and averages per station")
    jobs = _counted_jobs(monkeypatch)
    with same_jobs.sharing() as shared:
        folder = historical_replay.replay_folders([newest], lambda: spark)
        case = run_variants([variant], lambda: spark)
    assert [r.status for r in folder + case] == [Status.PASSED] * 2, [r.reason for r in folder + case]
    assert sum(jobs) == 1 and shared.served == 1  # the case ran nothing of its own
    jobs.clear()
    with same_jobs.sharing() as shared:  # the case's run has no state read back: the folder runs its own
        case = run_variants([variant], lambda: spark)
        folder = historical_replay.replay_folders([newest], lambda: spark)
    assert [r.status for r in case + folder] == [Status.PASSED] * 2
    assert sum(jobs) == 2 and shared.served == 0
