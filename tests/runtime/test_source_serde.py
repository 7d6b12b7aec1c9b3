"""Sources and sinks on Spark: undecodable records, null keys and PARTITION BY tombstones."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from qtt.harness.cases.model import Record
from qtt.harness.replay.driver import replay
from qtt.plan.statements import plan_statements
from qtt.runtime.execute.spark_runtime import SparkRuntime
from qtt.sql import parse_statements

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

STATEMENTS = """
CREATE STREAM INPUT (K STRING KEY, ID INT, NAME STRING) WITH (kafka_topic='in', format='JSON');
CREATE STREAM OUTPUT AS SELECT * FROM INPUT PARTITION BY NAME;
CREATE STREAM COPY WITH (key_format='KAFKA') AS SELECT * FROM INPUT;
"""


@pytest.mark.usefixtures("no_active_streams")
def test_undecodable_records_are_skipped_and_logged(spark: SparkSession) -> None:
    plan = plan_statements(parse_statements(STATEMENTS), {}).plan
    inputs = [
        Record(topic="in", key="a", value={"ID": 1, "NAME": "x"}),
        Record(topic="in", key="b", value={"ID": "not a number", "NAME": "y"}),
        Record(topic="in", key=None, value={"ID": 3, "NAME": "z"}),
        Record(topic="in", key="d", value=None),
    ]
    result = replay(plan, inputs, runtime=SparkRuntime(spark))

    repartitioned = [(r.key, r.value) for r in result.outputs["OUTPUT"]]
    assert repartitioned == [
        ("x", {"ID": 1, "K": "a"}),
        ("z", {"ID": 3, "K": None}),
        # a tombstone has no value to compute the new key from
        (None, None),
    ]
    # a null source key stays a null key, whatever the sink's key format
    assert [r.key for r in result.outputs["COPY"]] == ["a", None, "d"]

    logged = sorted({(entry.seq, entry.message) for entry in result.processing_log})
    assert [seq for seq, _ in logged] == [1]
    assert "Can't coerce string to type. targetType: INTEGER" in logged[0][1]
