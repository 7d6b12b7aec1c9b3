"""A query's topology is described once per Spark, however many plans hold it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from qtt.harness.historical.replay import load
from qtt.runtime.execute import topology

pytestmark = pytest.mark.spark

FOLDER = Path(__file__).parents[2] / "historical_plans" / "aggregation__counts_sums_and_averages_per_station__880598fa"


def test_an_equal_query_is_described_once_and_each_caller_gets_its_own_copy(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    older, newer = (load(FOLDER / name).plan for name in ("0.3.0_1795228811139", "0.7.0_1795620141001"))
    assert older == newer  # the later release stored a checkpoint beside the same plan
    explained: list[object] = []
    explain = topology._explain
    monkeypatch.setattr(topology, "_explain", lambda df: explained.append(df) or explain(df))
    fresh = dataclasses.replace(newer.queries()[0], query_id="CTAS_NOT_SEEN_BEFORE")
    first = topology.describe_query(spark, fresh)
    second = topology.describe_query(spark, fresh)
    assert len(explained) == 1
    assert first == second and first is not second
    first.plan.append("changed by a caller")
    assert topology.describe_query(spark, fresh).plan == second.plan
    assert topology.describe(spark, older) == topology.describe(spark, newer)
