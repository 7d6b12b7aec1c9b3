"""Stateful replays share streaming queries, and a replay's result never depends on its company.

The same historical plans are replayed alone, together, and together in another order; every
fact a replay records (output bytes, processing log, internal topics, step schemas, registry
subjects) must be the same each time. A group whose query fails is retried job by job, so
that only the broken replay fails.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from qtt.errors import QttError
from qtt.harness.historical import plan_store
from qtt.harness.historical.replay import inputs_of, load
from qtt.harness.replay.driver import ReplayItem, ReplayResult, replay_many
from qtt.runtime.execute.spark_runtime import SparkRuntime
from qtt.runtime.jobs import CAPTURE
from qtt.runtime.operators import stateful
from tests.harness.groupings import assert_same_facts, facts, replay_in_three_groupings
from tests.harness.replaced_aggregate import replaced_aggregate

ROOT = Path(__file__).parents[2] / "historical_plans"
#: two operators (a table group-by feeding an aggregate), one operator, and no state at all
FOLDERS = (
    "tables__a_table_aggregation_retracts_a_row_from_its_old_group__7a2d000b/0.4.0_1795233834361",
    "aggregation__counts_sums_and_averages_per_station__880598fa/0.3.0_1795228811139",
    "smoke__",
)


def _folder(prefix: str) -> Path:
    slug, _, version = prefix.partition("/")
    matches = [f for f in plan_store.folders(ROOT) if f.parent.name.startswith(slug) and f.name.startswith(version)]
    assert matches, f"no historical folder {prefix}"
    return matches[0]


def _items(paths: list[Path]) -> list[ReplayItem]:
    items = []
    for path in paths:
        loaded = load(path)
        items.append(ReplayItem.from_recorded(loaded.plan, inputs_of(loaded.spec), loaded.spec.schemas))
    return items


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_a_replay_records_the_same_facts_alone_and_in_any_group(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    paths = [_folder(prefix) for prefix in FOLDERS]
    alone, together, reversed_ = replay_in_three_groupings(lambda: _items(paths), spark, monkeypatch)

    assert all(isinstance(r, ReplayResult) and r.runs for r in together)
    # they did share one streaming query
    assert [r.runs[-1].group_size for r in together] == [3, 3, 3]  # type: ignore[union-attr]
    assert [r.runs[-1].group_size for r in alone] == [1, 1, 1]  # type: ignore[union-attr]
    # together, their operators ran as stages, one wide operator per stage; alone, in their own query
    assert [r.runs[-1].stages for r in together] == [2, 1, 0]  # type: ignore[union-attr]
    assert [r.runs[-1].stages for r in alone] == [0, 0, 0]  # type: ignore[union-attr]
    # each stage ran in one micro-batch, its replays' micro-batches unit by unit inside it
    assert max(r.runs[-1].batches for r in together) > 1  # type: ignore[union-attr]
    assert together[0].runs[-1].stage_batches == 2  # type: ignore[union-attr]
    assert_same_facts(alone, together, reversed_)
    assert all(facts(r)["internal"] for r in alone[:2])


class PoisonedAggregate(stateful.AggregateProcessor):
    """An aggregate that fails on the group key ``poison``: a query that breaks while running."""

    poison = "B"

    def handleInputRows(self, key, rows, timerValues):  # type: ignore[no-untyped-def]
        if self.poison in [str(part) for part in key]:
            raise RuntimeError("poisoned group")
        yield from super().handleInputRows(key, rows, timerValues)


@pytest.fixture
def poisoned(monkeypatch):  # type: ignore[no-untyped-def]
    with replaced_aggregate(monkeypatch, PoisonedAggregate):
        yield


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams", "poisoned")
def test_a_group_whose_query_fails_is_retried_job_by_job(spark) -> None:  # type: ignore[no-untyped-def]
    paths = [_folder(prefix) for prefix in FOLDERS[:2]]
    items = _items(paths)
    keys = [{r.key for r in load(p).spec.outputs} for p in paths]
    PoisonedAggregate.poison = next(iter(sorted(map(str, keys[1] - keys[0]))))
    good, bad = replay_many([replace(i, mode=CAPTURE) for i in items], runtime=SparkRuntime(spark))
    assert isinstance(bad, QttError) and "CTAS_PER_STATION_0: streaming query failed" in str(bad)
    assert isinstance(good, ReplayResult)
    assert good.runs[0].group_size == 1  # run again on its own, after the group failed
    assert facts(good)["internal"]


_TIME_CASES = """{"tests": [
 {"name": "latest time", "statements": [
  "CREATE STREAM S (ID INT KEY, T TIME) WITH (kafka_topic='s', value_format='JSON');",
  "CREATE TABLE A AS SELECT ID, LATEST_BY_OFFSET(T) AS T FROM S GROUP BY ID;"],
  "inputs": [{"topic": "s", "key": 1, "value": {"T": 1000}}],
  "outputs": [{"topic": "A", "key": 1, "value": {"T": 1000}}]},
 {"name": "count beside it", "statements": [
  "CREATE STREAM S (ID INT KEY, T TIME) WITH (kafka_topic='s', value_format='JSON');",
  "CREATE TABLE B AS SELECT ID, COUNT(*) AS C FROM S GROUP BY ID;"],
  "inputs": [{"topic": "s", "key": 1, "value": {"T": 1000}}],
  "outputs": [{"topic": "B", "key": 1, "value": {"C": 1}}]}
]}"""


@pytest.mark.spark
def test_a_time_column_keeps_its_group_shared(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The shared column layout fills the other slots' TIME columns with a null TIME literal,
    # which Spark 4.3 refuses unless spark.sql.timeType.enabled is set; the group would then
    # fall back to running each job alone
    from qtt.harness.cases.loader import load_file
    from qtt.harness.replay.runner import run_variants
    from qtt.harness.status import Status

    case_file = tmp_path / "time.json"
    case_file.write_text(_TIME_CASES, encoding="utf-8")
    results = run_variants(load_file(case_file).variants, lambda: spark, workdir=tmp_path)
    assert [r.status for r in results] == [Status.PASSED, Status.PASSED], [r.reason for r in results]
    assert [run.group_size for r in results for run in r.replay.runs] == [2, 2]  # type: ignore[union-attr]


@pytest.mark.spark
def test_a_stage_input_spark_cannot_build_runs_its_jobs_alone(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A session without spark.sql.timeType.enabled refuses the stage input's null TIME filler:
    # the group must fall back to running each job alone, never end the run
    from qtt.harness.cases.loader import load_file
    from qtt.harness.replay.runner import run_variants
    from qtt.harness.status import Status

    case_file = tmp_path / "time.json"
    case_file.write_text(_TIME_CASES, encoding="utf-8")
    spark.conf.set("spark.sql.timeType.enabled", "false")
    try:
        results = run_variants(load_file(case_file).variants, lambda: spark, workdir=tmp_path)
    finally:
        spark.conf.set("spark.sql.timeType.enabled", "true")
    assert [r.status for r in results] == [Status.PASSED, Status.PASSED], [r.reason for r in results]
    assert [run.group_size for r in results for run in r.replay.runs] == [1, 1]  # type: ignore[union-attr]
