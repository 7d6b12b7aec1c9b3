"""The Avro schema Kafka Connect registers for records written with a declared one, and the
post-conditions that see it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.harness.cases.model import PostConditions, PostTopic, PostTopics
from qtt.harness.replay.post import check_schemas
from qtt.harness.session import run_selection, select
from qtt.harness.status import Status
from qtt.serde.registry.avro_connect import as_connect_registers
from qtt.serde.registry.schema_registry import RegisteredSchema

DECLARED = {
    "type": "record",
    "name": "Reading",
    "fields": [
        {"name": "sensor", "type": "string"},
        {"name": "celsius", "type": ["null", "double"]},
        {"name": "unit", "type": ["null", {"type": "enum", "name": "Unit", "symbols": ["C", "F"]}]},
        {"name": "tags", "type": ["null", {"type": "array", "items": ["string", "null"]}]},
        {"name": "site", "type": ["string", "null"], "default": "roof"},
        {"name": "either", "type": ["null", "int", "string"]},
    ],
}


def test_optional_fields_get_a_null_default_and_enums_become_strings() -> None:
    assert as_connect_registers(DECLARED) == {
        "type": "record",
        "name": "Reading",
        "fields": [
            {"name": "sensor", "type": "string"},
            {"name": "celsius", "type": ["null", "double"], "default": None},
            {"name": "unit", "type": ["null", {"type": "string"}], "default": None},
            {"name": "tags", "type": ["null", {"type": "array", "items": ["string", "null"]}], "default": None},
            # a default of its own, and a union of several types, are kept as declared
            {"name": "site", "type": ["string", "null"], "default": "roof"},
            {"name": "either", "type": ["null", "int", "string"]},
        ],
    }


def test_a_primitive_or_a_nested_record_keeps_its_shape() -> None:
    assert as_connect_registers("long") == "long"
    nested = {"type": "record", "name": "Outer", "fields": [{"name": "inner", "type": DECLARED}]}
    converted = as_connect_registers(nested)
    assert converted["fields"][0]["type"] == as_connect_registers(DECLARED)


def _registered(origin: str) -> RegisteredSchema:
    return RegisteredSchema(
        subject="readings-value", version=1, schema_id=1, schema_type="AVRO", schema=json.dumps(DECLARED), origin=origin
    )


def _post(schema: object) -> PostConditions:
    return PostConditions(topics=PostTopics(topics=(PostTopic(name="readings", value_schema=schema),)))


def test_a_declared_topic_written_to_holds_connect_s_schema_and_one_never_written_to_the_declared_one() -> None:
    connect = _post(as_connect_registers(DECLARED))
    declared = _post(DECLARED)
    assert check_schemas(connect, [_registered("case")], produced={"readings"}) == []
    assert "expected" in check_schemas(declared, [_registered("case")], produced={"readings"})[0]
    assert check_schemas(declared, [_registered("case")]) == []
    assert "expected" in check_schemas(connect, [_registered("case")])[0]
    # a schema a statement registered is its own, written to or not
    assert check_schemas(declared, [_registered("statement")], produced={"readings"}) == []


@pytest.mark.spark
def test_a_case_s_post_condition_sees_what_its_written_input_topic_holds(spark, tmp_path: Path) -> None:
    declared = {"type": "record", "name": "Reading", "fields": [{"name": "CELSIUS", "type": ["null", "int"]}]}
    case = {
        "name": "readings in avro",
        "topics": [{"name": "readings", "valueSchema": declared, "valueFormat": "AVRO"}],
        "statements": [
            "CREATE STREAM READINGS WITH (kafka_topic='readings', value_format='AVRO');",
            "CREATE STREAM WARM AS SELECT * FROM READINGS WHERE CELSIUS > 20;",
        ],
        "inputs": [{"topic": "readings", "value": {"CELSIUS": 25}}, {"topic": "readings", "value": {"CELSIUS": 5}}],
        "outputs": [{"topic": "WARM", "value": {"CELSIUS": 25}}],
        "post": {"topics": {"topics": [{"name": "readings", "valueSchema": as_connect_registers(declared)}]}},
    }
    declared_post = {
        **case,
        "name": "declared schema",
        "post": {"topics": {"topics": [{"name": "readings", "valueSchema": declared}]}},
    }
    file = tmp_path / "readings.json"
    file.write_text(json.dumps({"tests": [case, declared_post]}))

    results = run_selection(select([str(file)]), session=lambda: spark).results

    assert [(r.case, r.status) for r in results] == [
        ("readings in avro", Status.PASSED),
        ("declared schema", Status.FAILED),
    ]
    assert "subject readings-value holds" in results[1].problems[0]
