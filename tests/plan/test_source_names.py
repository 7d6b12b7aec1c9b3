"""The sources a statement names, resolved as ksqlDB's sanitizer resolves them."""

from __future__ import annotations

import pytest

from qtt.errors import StatementError
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

READINGS = "CREATE STREAM readings (id INT KEY, level BIGINT) WITH (kafka_topic='readings', value_format='JSON');"
GAUGES = "CREATE TABLE gauges (id INT PRIMARY KEY, level BIGINT) WITH (kafka_topic='gauges', value_format='JSON');"


def refusal(*statements: str) -> StatementError:
    with pytest.raises(StatementError) as raised:
        plan_statements(parse_statements("\n".join(statements)), {})
    return raised.value


def test_an_unknown_source_of_a_query_is_a_statement_error() -> None:
    error = refusal("CREATE STREAM copied AS SELECT * FROM phantom;")
    assert error.message == "Exception while preparing statement: PHANTOM does not exist."


@pytest.mark.parametrize(
    "statements",
    [
        (GAUGES, "CREATE TABLE mirrored AS SELECT * FROM gauges;", "INSERT INTO mirrored SELECT * FROM phantom;"),
        (READINGS, "INSERT INTO nowhere SELECT * FROM phantom;"),
        (READINGS, "INSERT INTO readings SELECT * FROM readings r JOIN phantom p WITHIN 1 MINUTE ON r.id = p.id;"),
    ],
)
def test_an_insert_into_reports_an_unknown_source_before_its_target(statements: tuple[str, ...]) -> None:
    assert refusal(*statements).message == "Exception while preparing statement: PHANTOM does not exist."


def test_an_insert_into_an_unknown_target_over_known_sources_names_the_target() -> None:
    error = refusal(READINGS, "INSERT INTO nowhere SELECT * FROM readings;")
    assert error.message.endswith("Source `NOWHERE` does not exist.")
