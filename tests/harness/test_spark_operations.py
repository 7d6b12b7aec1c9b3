"""Spark's upgrade operations at the restore: each proven on real stored checkpoints, or Spark's
documented refusal.

Two folders of the project's own ``historical_plans/`` (a grouped aggregation, and a stream-table
join with a repartition) are restored under every operation; the folders are only read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qtt.harness.historical.restored import restore_folders
from qtt.harness.historical.spark_operations import OPERATIONS
from qtt.harness.status import Status
from qtt.runtime.spark import lines

ROOT = Path(__file__).parents[2] / "historical_plans"
FOLDERS = [
    ROOT / "aggregation__counts_sums_and_averages_per_station__880598fa" / "0.7.0_1795620141001",
    ROOT
    / "joins__a_full_outer_stream-stream_join_on_value_columns_re-keys_both_sides_and_has_a_sy__5302bf5e"
    / "0.9.0_1795661597511",
]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
@pytest.mark.parametrize("scenario", ["restored-partitions", "restored-hdfs", "restored-format2"])
def test_an_operation_spark_allows_resumes_with_the_recorded_outputs_and_state(spark, scenario: str) -> None:  # type: ignore[no-untyped-def]
    results = restore_folders(FOLDERS, lambda: spark, scenario=scenario)
    line = lines.line(lines.pyspark_version())
    if scenario == "restored-format2" and line == (4, 1):  # Spark's documented refusal, a dated entry
        assert all(r.status == Status.SKIPPED and "refused by Spark (INVALID_LOG_VERSION)" in r.reason for r in results)
        return
    if scenario == "restored-format2" and line == (4, 2):
        # Spark 4.2 fails to commit a format 1 checkpoint's first batch under format 2 (a
        # NoSuchElementException at the commit): a failure there, naming Spark's error class
        assert all(r.status == Status.FAILED and "CANNOT_WRITE_STATE_STORE.CANNOT_COMMIT" in r.reason for r in results)
        return
    assert [r.status for r in results] == [Status.PASSED] * len(FOLDERS), [r.reason for r in results]
    title = OPERATIONS[scenario].title
    assert all(r.kind == scenario and f"restored {title}, written by spark" in r.variant for r in results)
    assert all(r.replay is not None and r.replay.internal_topics for r in results)  # the state was compared
    assert spark.conf.get("spark.sql.shuffle.partitions") == "1"  # the operation's settings stay its own


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_changelog_checkpointing_off_is_spark_s_documented_refusal(spark) -> None:  # type: ignore[no-untyped-def]
    results = restore_folders(FOLDERS[:1], lambda: spark, scenario="restored-no-changelog")
    assert [r.status for r in results] == [Status.SKIPPED], [r.reason for r in results]
    assert results[0].reason.startswith("refused by Spark (CANNOT_LOAD_STATE_STORE), as documented since 2026-")
