"""The plan builder: a plan that loads but does not fit together is a located build error."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from qtt.errors import RuntimeBuildError
from qtt.harness.cases.loader import load_text
from qtt.harness.replay.runner import plan_variant
from qtt.plan.ir import codec

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CASE = {
    "tests": [
        {
            "name": "doubles",
            "statements": [
                "CREATE STREAM s (k INT KEY, v INT) WITH (kafka_topic='t', value_format='JSON');",
                "CREATE STREAM out AS SELECT k, v * 2 AS w FROM s;",
            ],
            "inputs": [{"topic": "t", "key": 1, "value": {"v": 4}}],
        }
    ]
}


@pytest.mark.spark
@pytest.mark.parametrize(
    ("old", "new", "needs"),
    [
        ('"keyColumnNames": [\n              "K"', '"keyColumnNames": [\n              "NOPE"', "it needs 'NOPE'"),
        ('"name": "V"', '"name": "NOPE"', "NOPE"),
    ],
    ids=["key column", "expression column"],
)
def test_a_step_that_does_not_fit_its_source_is_a_located_build_error(
    spark: SparkSession, old: str, new: str, needs: str
) -> None:
    import qtt.runtime.operators.registered  # noqa: F401 (registers the stateful step builders)
    from qtt.runtime.build.builder import PlanBuilder

    [variant] = load_text(json.dumps(CASE), file="c.json").variants
    text = codec.dumps(plan_variant(variant).plan)
    assert text.count(old) == 1
    # The plan still loads: only building it finds that the select reads a column its source lacks.
    damaged = codec.loads(text.replace(old, new), file="h/plan.json")
    query = damaged.statements[1].query_plan
    assert query is not None
    raw = spark.createDataFrame(
        [], "topic string, key binary, value binary, seq long, partition int, offset long, timestamp long"
    )
    with pytest.raises(RuntimeBuildError, match=needs) as caught:
        PlanBuilder(raw, query.query_id).build(query.physical_plan)
    assert caught.value.path == (
        f"$.statements[?(@.queryPlan.queryId == '{query.query_id}')].queryPlan.physicalPlan.source"
    )
