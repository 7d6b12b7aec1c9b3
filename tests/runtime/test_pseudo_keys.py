"""A key column named like a pseudo column (PARTITION BY ROWTIME) lives apart from that column."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from qtt.harness.cases.loader import load_text
from qtt.harness.replay.runner import plan_variant
from qtt.runtime.build.names import ROWTIME, stored

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_only_names_of_pseudo_columns_are_stored_apart() -> None:
    assert stored("ROWTIME") != "ROWTIME"
    assert stored("ROWOFFSET") != "ROWOFFSET"
    assert stored("K") == "K"


@pytest.mark.spark
def test_partition_by_rowtime_keeps_key_and_pseudo_column_apart(spark: SparkSession) -> None:
    import qtt.runtime.operators.registered  # noqa: F401 (registers the stateful step builders)
    from qtt.runtime.build.builder import PlanBuilder

    case = {
        "tests": [
            {
                "name": "by time",
                "statements": [
                    "CREATE STREAM s (k INT KEY, v INT) WITH (kafka_topic='t', value_format='JSON');",
                    "CREATE STREAM out AS SELECT * FROM s PARTITION BY ROWTIME;",
                ],
                "inputs": [{"topic": "t", "key": 1, "value": {"v": 4}}],
            }
        ]
    }
    [variant] = load_text(json.dumps(case), file="c.json").variants
    query = plan_variant(variant).plan.statements[1].query_plan
    assert query is not None
    raw = spark.createDataFrame(
        [], "topic string, key binary, value binary, seq long, partition int, offset long, timestamp long"
    )
    builder = PlanBuilder(raw, query.query_id)
    built = builder.build(query.physical_plan)
    assert str(built.schema) == "`ROWTIME` BIGINT KEY, `V` INTEGER, `K` INTEGER"
    assert {ROWTIME, stored(ROWTIME)} <= set(built.df.columns)
