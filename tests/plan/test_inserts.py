"""``INSERT INTO ... VALUES`` as ksqlDB's executor checks its target's topic and its ROWTIME."""

from __future__ import annotations

import pytest

from qtt.errors import SqlError, StatementError
from qtt.plan.inserts import refuse_read_only_topic
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

STREAM = "CREATE STREAM S (K INT KEY, V STRING) WITH (kafka_topic='{topic}', value_format='JSON');"


@pytest.mark.parametrize(
    "topic",
    [
        "some.ksql.service.idksql_processing_log",
        "_confluent-ksql-some.ksql.service.id_command_topic",
        "_confluent-metrics",
        "__consumer_offsets",
        "_schemas",
        "connect-statuses",
    ],
)
def test_topics_ksqldb_holds_read_only_are_refused(topic: str) -> None:
    with pytest.raises(SqlError, match=f"^Cannot insert values into read-only topic: {topic}$"):
        refuse_read_only_topic(topic, {})


@pytest.mark.parametrize("topic", ["orders", "connect-offsets-copy", "schemas", "xksql_processing_log"])
def test_other_topics_are_written(topic: str) -> None:
    refuse_read_only_topic(topic, {})


def test_settings_name_the_read_only_topics() -> None:
    settings = {"ksql.readonly.topics": "ledger_.*", "ksql.service.id": "svc_"}
    refuse_read_only_topic("connect-offsets", settings)  # the list replaces the default one
    for topic in ("ledger_1", "svc_ksql_processing_log", "_confluent-ksql-svc_query_X"):
        with pytest.raises(SqlError):
            refuse_read_only_topic(topic, settings)
    with pytest.raises(SqlError):
        refuse_read_only_topic("my_log", {"ksql.logging.processing.topic.name": "my_log"})


def test_an_insert_into_a_read_only_topic_is_refused_before_its_values_are_read() -> None:
    statements = parse_statements(STREAM.format(topic="_schemas") + "INSERT INTO S (K, NOPE) VALUES (1, 2);")
    with pytest.raises(SqlError, match="read-only topic: _schemas"):
        plan_statements(statements)


def test_a_null_rowtime_is_refused() -> None:
    statements = parse_statements(STREAM.format(topic="s") + "INSERT INTO S (ROWTIME, K) VALUES (NULL, 1);")
    with pytest.raises(StatementError, match=r"Failed to insert values into 'S'\. ROWTIME may not be null"):
        plan_statements(statements)


def test_insert_into_select_keeps_the_rowtime_whatever_timestamp_its_target_declares() -> None:
    statements = parse_statements(
        STREAM.format(topic="s")
        + "CREATE STREAM T (K INT KEY, V STRING, AT BIGINT)"
        + " WITH (kafka_topic='t', value_format='JSON', timestamp='at');"
        + "INSERT INTO T SELECT K, V, CAST(5 AS BIGINT) AS AT FROM S;"
    )
    (insert,) = [p for p in plan_statements(statements).plan.statements if p.query_plan is not None]
    assert insert.query_plan.physical_plan.timestamp_column is None


@pytest.mark.parametrize(
    ("sink", "message"),
    [
        ("(K INT KEY, V STRING, H BYTES HEADER('h'))", "Cannot insert into R because it has header columns"),
        ("(K INT KEY, V INT)", "Incompatible schema between results and sink."),
        ("(K INT KEY, V STRING)", "Cannot insert into read-only stream: R$"),
    ],
)
def test_a_read_only_insert_target_is_refused_once_the_query_plans(sink: str, message: str) -> None:
    read_only = f"CREATE SOURCE STREAM R {sink} WITH (kafka_topic='r', value_format='JSON');"
    statements = parse_statements(STREAM.format(topic="s") + read_only + "INSERT INTO R SELECT * FROM S;")
    with pytest.raises(SqlError, match=message):
        plan_statements(statements)
