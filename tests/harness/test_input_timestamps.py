"""An input with a negative timestamp fails its case before any replay, as Kafka's
``ProducerRecord`` fails ksqlDB's runner; a case that expects that message passes."""

from __future__ import annotations

import json
from typing import Any

from qtt.harness.cases.loader import load_text
from qtt.harness.replay.runner import run_variants
from qtt.harness.status import Status

STATEMENTS = [
    "CREATE STREAM s (id INT KEY, v INT) WITH (kafka_topic='s', value_format='JSON');",
    "CREATE STREAM o AS SELECT * FROM s;",
]


def _no_spark() -> Any:
    raise AssertionError("a case refused before its replay needs no SparkSession")


def _run(**extra: Any) -> Any:
    inputs = [{"topic": "s", "key": 1, "value": {"v": 1}, "timestamp": 5}, {"topic": "s", "value": {}, "timestamp": -1}]
    case = {"name": "c", "statements": STATEMENTS, "inputs": inputs, **extra}
    (result,) = run_variants(load_text(json.dumps({"tests": [case]}), file="f.json").variants, _no_spark)
    return result


def test_a_negative_input_timestamp_fails_the_case_and_names_the_record() -> None:
    result = _run(outputs=[{"topic": "O", "key": 1, "value": {"V": 1}}])
    assert result.status is Status.FAILED
    message = "Invalid timestamp: -1. Timestamp should always be non-negative or null."
    assert result.reason == f"$.tests[0].inputs[1].timestamp: {message}"


def test_a_case_that_expects_kafkas_refusal_passes() -> None:
    assert _run(expectedException={"message": "Invalid timestamp: -1"}).status is Status.PASSED
    other = _run(expectedException={"message": "something else"})
    assert other.status is Status.FAILED
    assert "expected a message containing 'something else'" in other.reason
