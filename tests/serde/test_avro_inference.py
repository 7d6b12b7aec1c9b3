"""Avro schema inference: Connect's reading of logical types and map entries, as ksqlDB types it."""

from __future__ import annotations

from typing import Any

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.serde.registry.avro_inference import inline_named, record_columns, sql_type_of
from qtt.serde.registry.registry_format import IncompatibleSchema


def _entries(key: Any) -> dict[str, Any]:
    entry = {"name": "key", "type": key}, {"name": "value", "type": ["null", "long"], "default": None}
    items = {"type": "record", "name": "E", "connect.internal.type": "MapEntry", "fields": list(entry)}
    return {"type": "array", "items": items}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "long", "logicalType": "timestamp-micros"}, t.BIGINT),
        ({"type": "long", "logicalType": "time-micros"}, t.BIGINT),
        ({"type": "long", "logicalType": "timestamp-millis"}, t.TIMESTAMP),
        ({"type": "long", "logicalType": "Timestamp-Millis"}, t.TIMESTAMP),
        ({"type": "int", "logicalType": "DATE"}, t.DATE),
        ({"type": "long", "logicalType": "date"}, t.BIGINT),
        ({"type": "int", "logicalType": "timestamp-millis"}, t.INTEGER),
        ({"type": "string", "logicalType": "decimal", "precision": 4, "scale": 1}, t.STRING),
        ({"type": "bytes", "logicalType": "DECIMAL", "precision": 4, "scale": 1}, t.Decimal(4, 1)),
        ({"type": "int", "connect.name": "org.apache.kafka.connect.data.Date"}, t.DATE),
        ({"type": "long", "connect.name": "org.apache.kafka.connect.data.Timestamp"}, t.TIMESTAMP),
        ({"type": "long", "connect.name": "org.apache.kafka.connect.data.Date"}, t.BIGINT),
        (_entries("string"), t.Map(t.STRING, t.BIGINT)),
        (_entries("int"), t.Map(t.STRING, t.BIGINT)),
        (
            {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "MapEntry",
                    "namespace": "io.confluent.connect.avro",
                    "fields": [{"name": "key", "type": "boolean"}, {"name": "value", "type": "int"}],
                },
            },
            t.Map(t.STRING, t.INTEGER),
        ),
        (
            {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Pair",
                    "fields": [{"name": "key", "type": "string"}, {"name": "value", "type": "int"}],
                },
            },
            t.Array(t.Struct((t.Field("KEY", t.STRING), t.Field("VALUE", t.INTEGER)))),
        ),
    ],
)
def test_avro_types_infer_as_connect_reads_them(schema: Any, expected: t.SqlType) -> None:
    assert sql_type_of(schema) == expected


def test_a_field_of_entries_whose_keys_ksqldb_cannot_take_is_left_out() -> None:
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "a", "type": "int"}, {"name": "w", "type": _entries("double")}],
    }
    assert record_columns(schema) == [("A", t.INTEGER)]


def test_a_record_with_no_field_left_is_refused() -> None:
    schema = {"type": "record", "name": "R", "fields": [{"name": "w", "type": _entries("bytes")}]}
    with pytest.raises(StatementError, match=r"Schema does not include any columns with types that ksqlDB supports\."):
        record_columns(schema)


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "bytes", "logicalType": "decimal", "precision": 4}, "scale must be specified and must be a number."),
        ("null", "Standalone null schemas are not supported by this converter"),
    ],
)
def test_what_kafka_connect_cannot_translate_is_an_incompatible_schema(schema: Any, reason: str) -> None:
    with pytest.raises(IncompatibleSchema) as raised:
        sql_type_of(schema)
    assert raised.value.message == reason


def _row(name: str, **extra: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": [{"name": "id", "type": "int"}], **extra}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        # Debezium's envelope: after names the record before defines, in the envelope's namespace
        (
            {
                "type": "record",
                "name": "Envelope",
                "namespace": "db.t",
                "fields": [
                    {"name": "before", "type": ["null", _row("Value")]},
                    {"name": "after", "type": ["null", "Value"]},
                    {"name": "also", "type": "db.t.Value"},
                ],
            },
            [(name, t.Struct((t.Field("ID", t.INTEGER),))) for name in ("BEFORE", "AFTER", "ALSO")],
        ),
        # a definition's own namespace qualifies it; an enum and a fixed are named types too
        (
            {
                "type": "record",
                "name": "R",
                "fields": [
                    {"name": "a", "type": _row("Inner", namespace="other")},
                    {"name": "b", "type": "other.Inner"},
                    {"name": "c", "type": {"type": "enum", "name": "Colour", "symbols": ["RED"]}},
                    {"name": "d", "type": {"type": "array", "items": "Colour"}},
                    {"name": "e", "type": {"type": "fixed", "name": "Four", "size": 4}},
                    {"name": "f", "type": {"type": "map", "values": "Four"}},
                ],
            },
            [
                ("A", t.Struct((t.Field("ID", t.INTEGER),))),
                ("B", t.Struct((t.Field("ID", t.INTEGER),))),
                ("C", t.STRING),
                ("D", t.Array(t.STRING)),
                ("E", t.BYTES),
                ("F", t.Map(t.STRING, t.BYTES)),
            ],
        ),
    ],
)
def test_a_named_type_is_read_where_a_later_field_names_it(schema: Any, expected: Any) -> None:
    assert record_columns(inline_named(schema)) == expected


def test_a_type_that_refers_to_itself_keeps_its_name() -> None:
    node = {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]}
    assert inline_named(node)["fields"][0]["type"] == ["null", "Node"]
    with pytest.raises(StatementError, match=r"Avro type 'Node' at .* has no SQL type"):
        sql_type_of(inline_named(node))
