"""A query that stops at run time (ksqlDB's StreamsException) is a verdict: expected, it passes;
unexpected, the case fails (never an error of qtt's); expected but absent, the case fails. In a
shared streaming query the stopped query fails alone, the others run on together."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from qtt.harness.status import Status

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

STOP = {
    "type": "org.apache.kafka.streams.errors.StreamsException",
    "message": "Exception caught in process",
    "cause": "io.confluent.ksql.function.KsqlFunctionException",
    "causeMessage": "Numeric field overflow",
}


def _totals(name: str, amounts: list[str], **more: Any) -> dict[str, Any]:
    """A decimal SUM per key, DECIMAL(3,1): a total of 100 or more stops its query."""
    return {
        "name": name,
        "statements": [
            "CREATE STREAM bills (shop VARCHAR KEY, amount DECIMAL(3,1)) "
            "WITH (kafka_topic='bills', value_format='JSON');",
            "CREATE TABLE totals AS SELECT shop, SUM(amount) AS total FROM bills GROUP BY shop;",
        ],
        "inputs": [{"topic": "bills", "key": "s1", "value": {"amount": a}} for a in amounts],
        **more,
    }


def _run(spark: SparkSession, tmp_path: Path, cases: list[dict[str, Any]]) -> dict[str, Any]:
    from qtt.harness.replay.runner import run_variants
    from qtt.harness.selection import load_variants

    file = tmp_path / "stops.json"
    file.write_text(json.dumps({"tests": cases}), encoding="utf-8")
    variants, errors = load_variants([str(file)])
    assert not errors
    return {result.case: result for result in run_variants(variants, lambda: spark, workdir=tmp_path)}


def test_stops_are_verdicts_and_a_stopped_query_fails_alone(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qtt.runtime.execute import executor

    def never(*_: Any) -> None:
        raise AssertionError("a query that named itself in its stop made its group run job by job")

    monkeypatch.setattr(executor, "_alone", never)
    runs_to_the_end = {"outputs": [{"topic": "TOTALS", "key": "s1", "value": {"TOTAL": 5.0}}]}
    results = _run(
        spark,
        tmp_path,
        [
            _totals("stops as expected", ["60.0", "50.0"], expectedException=STOP),
            _totals("runs to the end", ["5.0"], **runs_to_the_end),
            _totals("stops unexpectedly", ["99.0", "1.0"], outputs=[]),
            _totals("was expected to stop", ["1.0"], expectedException=STOP),
            _totals(
                "stops with another cause",
                ["60.0", "50.0"],
                expectedException={**STOP, "causeMessage": "Division by zero"},
            ),
        ],
    )

    assert results["stops as expected"].status == Status.PASSED, results["stops as expected"].reason
    assert results["stops as expected"].reason.startswith("stopped as expected: CTAS_TOTALS_0: Exception caught")
    assert results["runs to the end"].status == Status.PASSED, results["runs to the end"].reason
    unexpected = results["stops unexpectedly"]
    assert unexpected.status == Status.FAILED
    assert unexpected.reason.startswith(
        "the query stopped at run time: CTAS_TOTALS_0: Exception caught in process: Numeric field overflow: "
        "A field with precision 3 and scale 1 must round to an absolute value less than 10^2. Got 100.0"
    )
    absent = results["was expected to stop"]
    assert absent.status == Status.FAILED
    assert absent.reason == (
        "expected the query to stop at run time (org.apache.kafka.streams.errors.StreamsException containing "
        "'Exception caught in process', caused by io.confluent.ksql.function.KsqlFunctionException "
        "containing 'Numeric field overflow'), "
        "but it ran to the end"
    )
    other = results["stops with another cause"]
    assert other.status == Status.FAILED
    assert other.reason.startswith("expected a cause containing 'Division by zero' but got 'Numeric field overflow")
