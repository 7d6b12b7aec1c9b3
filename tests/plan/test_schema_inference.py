"""ksqlDB's schema inference: columns read from the schemas a case registers, never from SQL."""

from __future__ import annotations

import pytest

from qtt.errors import StatementError
from qtt.plan.ddl.schema_inference import TopicSchema
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

READING = {
    "type": "record",
    "name": "Reading",
    "fields": [
        {"name": "sensor", "type": "string"},
        {"name": "level", "type": ["null", "int"]},
        {"name": "when", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "tags", "type": {"type": "map", "values": "string"}},
    ],
}


def _schema_of(sql: str, schemas: dict) -> str:
    planned = plan_statements(parse_statements(sql), {}, schemas)
    [source] = planned.sources.values()
    return str(source.schema)


def test_value_columns_come_from_the_value_subject_upper_cased() -> None:
    sql = "CREATE STREAM R WITH (kafka_topic='r', value_format='AVRO');"
    shown = _schema_of(sql, {("r", False): TopicSchema(document=READING)})
    assert shown == "`SENSOR` STRING, `LEVEL` INTEGER, `WHEN` TIMESTAMP, `TAGS` MAP<STRING, STRING>"


def test_a_key_schema_becomes_rowkey_and_an_unwrapped_value_rowval() -> None:
    sql = "CREATE STREAM R WITH (kafka_topic='r', format='AVRO', wrap_single_value=false);"
    schemas = {("r", True): TopicSchema(document={"type": "long"}), ("r", False): TopicSchema(document="string")}
    assert _schema_of(sql, schemas) == "`ROWKEY` BIGINT KEY, `ROWVAL` STRING"


def test_declared_columns_are_kept_and_only_the_missing_side_is_inferred() -> None:
    sql = "CREATE STREAM R (ID INT KEY) WITH (kafka_topic='r', value_format='AVRO');"
    schemas = {("r", True): TopicSchema(document={"type": "long"}), ("r", False): TopicSchema(document=READING)}
    assert _schema_of(sql, schemas).startswith("`ID` INTEGER KEY, `SENSOR` STRING")


def test_a_schema_id_property_reads_the_schema_with_that_id_keeping_its_names() -> None:
    # ksqlDB translates a schema an id names with its ORIGINAL_FIELD_NAME policy
    sql = "CREATE STREAM R WITH (kafka_topic='r', value_format='AVRO', value_schema_id=7);"
    schemas = {("elsewhere", False): TopicSchema(document=READING, schema_id=7)}
    assert _schema_of(sql, schemas).startswith("`sensor` STRING")


def test_nothing_registered_is_ksqldbs_error() -> None:
    with pytest.raises(StatementError, match="Schema for message values on topic 'r' does not exist"):
        _schema_of("CREATE STREAM R WITH (kafka_topic='r', value_format='AVRO');", {})


def test_formats_without_a_registry_do_not_infer() -> None:
    with pytest.raises(StatementError, match="does not define any columns"):
        _schema_of("CREATE STREAM R WITH (kafka_topic='r', value_format='JSON');", {})


def _sources_of(sql: str, schemas: dict) -> dict[str, str]:
    planned = plan_statements(parse_statements(sql), {}, schemas)
    return {name: str(source.schema) for name, source in planned.sources.items()}


def test_a_create_reads_the_schemas_an_earlier_create_declared_for_its_topic() -> None:
    # ksqlDB's test runner registers every CREATE's declared schemas before the statements run
    sql = (
        "CREATE STREAM A (X INT KEY, Y INT KEY, V STRING) WITH (kafka_topic='t', format='AVRO');"
        "CREATE STREAM B WITH (kafka_topic='t', format='AVRO');"
    )
    assert _sources_of(sql, {})["B"] == "`ROWKEY` STRUCT<`X` INTEGER, `Y` INTEGER> KEY, `V` STRING"


def test_a_case_schema_wins_over_a_create_and_a_cas_sink_registers_its_own() -> None:
    sql = (
        "CREATE STREAM A (V INT) WITH (kafka_topic='r', key_format='KAFKA', value_format='AVRO');"
        "CREATE STREAM B WITH (kafka_topic='r', key_format='KAFKA', value_format='AVRO');"
        "CREATE STREAM C WITH (kafka_topic='c') AS SELECT SENSOR FROM B;"
        "CREATE STREAM D WITH (kafka_topic='c', key_format='KAFKA', value_format='AVRO');"
    )
    found = _sources_of(sql, {("r", False): TopicSchema(document=READING)})
    assert found["B"].startswith("`SENSOR` STRING, `LEVEL` INTEGER")
    assert found["D"] == "`SENSOR` STRING"
