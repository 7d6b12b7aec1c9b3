"""Equal queries of different replays run once; each replay gets its own run and its share of the time."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from qtt.harness.replay import same_jobs
from qtt.runtime.jobs import QueryRun

HISTORICAL = Path(__file__).parents[2] / "historical_plans"
STATION = HISTORICAL / "aggregation__counts_sums_and_averages_per_station__880598fa"


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
    from qtt.runtime.execute import executor

    older, newer = STATION / "0.3.0_1795228811139", STATION / "0.7.0_1795620141001"
    broken = tmp_path / "broken" / older.name  # the same plan and inputs, a different recorded output
    shutil.copytree(older, broken)
    spec = json.loads((broken / "spec.json").read_text(encoding="utf-8"))
    spec["outputs"][0]["valueBytes"] = base64.b64encode(b'{"RENTALS":7}').decode()
    (broken / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    jobs: list[int] = []
    run_groups = executor.run_groups

    def counting(session, groups, checkpoints):  # type: ignore[no-untyped-def]
        jobs.extend(len(group) for group in groups)
        return run_groups(session, groups, checkpoints)

    monkeypatch.setattr(executor, "run_groups", counting)
    results = historical_replay.replay_folders([older, newer, broken], lambda: spark)
    assert sum(jobs) == 1  # one query, one plan, the same inputs: one run
    assert [r.status for r in results] == [Status.PASSED, Status.PASSED, Status.FAILED], [r.reason for r in results]
    assert results[0].replay is not results[1].replay
    assert results[0].seconds > 0 and results[1].seconds > 0
