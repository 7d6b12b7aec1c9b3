"""JSON_SR: ksqlDB's registered schemas, schema inference, the wire format, coercion on read and errors."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import SerdeColumn, get_format
from qtt.serde.interface import UNWRAP_SINGLE_VALUE, Layout
from qtt.serde.registry.schema_registry import Registry

JSON_SR = get_format("JSON_SR")
SCHEMAS = json.loads((Path(__file__).parent / "data" / "json_sr_schemas.json").read_text())
EVERY_TYPE = (
    SerdeColumn("B", t.BOOLEAN),
    SerdeColumn("I", t.INTEGER),
    SerdeColumn("L", t.BIGINT),
    SerdeColumn("D", t.DOUBLE),
    SerdeColumn("S", t.STRING),
    SerdeColumn("Y", t.BYTES),
    SerdeColumn("C", t.Decimal(6, 2)),
    SerdeColumn("DT", t.DATE),
    SerdeColumn("TM", t.TIME),
    SerdeColumn("TS", t.TIMESTAMP),
    SerdeColumn("A", t.Array(t.STRING)),
    SerdeColumn("M", t.Map(t.STRING, t.INTEGER)),
    SerdeColumn("ST", t.Struct((t.Field("X", t.INTEGER),))),
)
KILN = (SerdeColumn("FIRING", t.INTEGER), SerdeColumn("GLAZE", t.STRING))


def schema_of(columns: tuple[SerdeColumn, ...], *, unwrapped: bool = False, **properties: str) -> Any:
    return json.loads(JSON_SR.schema_text(columns, is_key=unwrapped, properties=properties, unwrapped=unwrapped))


def layout_for(
    columns: tuple[SerdeColumn, ...],
    schema: Any | None = None,
    *,
    features: frozenset[str] = frozenset(),
    schema_id: int | None = None,
) -> Layout:
    """A value layout over topic ``kilns`` whose subject holds ``schema`` (ksqlDB's own by default)."""
    registry = Registry()
    text = json.dumps(schema) if schema is not None else None
    unwrapped = UNWRAP_SINGLE_VALUE in features and len(columns) == 1
    registry.register(
        "kilns-value",
        "JSON",
        text or JSON_SR.schema_text(columns, is_key=False, properties={}, unwrapped=unwrapped),
        schema_id=schema_id,
    )
    properties = {"schemaId": str(schema_id)} if schema_id is not None else {}
    return Layout(
        columns=columns,
        is_key=False,
        properties=properties,
        features=features,
        topic="kilns",
        registry=registry.snapshot(),
    )


def framed(schema_id: int, text: str) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + text.encode()


# ---- the schemas ksqlDB registers


def test_every_type_has_connects_json_schema() -> None:
    assert schema_of(EVERY_TYPE) == SCHEMAS["every_type_row"]


def test_an_unwrapped_single_value_is_optional() -> None:
    assert schema_of(EVERY_TYPE[1:2], unwrapped=True) == SCHEMAS["unwrapped_integer"]


def test_the_full_schema_name_names_nothing() -> None:
    # ksqlDB's JsonSchemaTranslator translates the unnamed Connect schema: no title from the property
    assert schema_of(EVERY_TYPE[-1:], unwrapped=True, fullSchemaName="com.example.Rack") == SCHEMAS["unwrapped_struct"]
    assert schema_of(EVERY_TYPE[4:5], fullSchemaName="com.example.Row") == SCHEMAS["row_s"]


# ---- inference


def test_inference_reads_back_the_registered_columns() -> None:
    text = json.dumps(SCHEMAS["every_type_row"])
    assert JSON_SR.infer_columns(text, is_key=False, unwrapped=False, properties={}) == [
        (c.name, c.type) for c in EVERY_TYPE
    ]


def test_inference_of_plain_json_schema_types() -> None:
    schema = {
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "shade": {"type": "string", "enum": ["red", "blue"]},
            "tags": {"type": "object", "additionalProperties": {"type": "boolean"}},
            "parts": {"type": ["array", "null"], "items": {"type": "integer", "connect.type": "int8"}},
        },
    }
    assert JSON_SR.infer_columns(json.dumps(schema), is_key=False, unwrapped=False, properties={}) == [
        ("COUNT", t.BIGINT),
        ("RATIO", t.DOUBLE),
        ("SHADE", t.STRING),
        ("TAGS", t.Map(t.STRING, t.BOOLEAN)),
        ("PARTS", t.Array(t.INTEGER)),
    ]


def test_inference_orders_fields_by_connect_index() -> None:
    schema = {
        "type": "object",
        "properties": {"B": {"connect.index": 1, "type": "string"}, "A": {"connect.index": 0, "type": "boolean"}},
    }
    assert JSON_SR.infer_columns(json.dumps(schema), is_key=False, unwrapped=False, properties={}) == [
        ("A", t.BOOLEAN),
        ("B", t.STRING),
    ]


def test_an_unwrapped_or_non_object_schema_is_one_nameless_column() -> None:
    text = json.dumps(SCHEMAS["unwrapped_integer"])
    assert JSON_SR.infer_columns(text, is_key=False, unwrapped=False, properties={}) == [(None, t.INTEGER)]
    row = json.dumps(SCHEMAS["row_s"])
    assert JSON_SR.infer_columns(row, is_key=False, unwrapped=True, properties={}) == [
        (None, t.Struct((t.Field("S", t.STRING),)))
    ]


def test_inference_follows_local_references() -> None:
    schema = {
        "type": "object",
        "definitions": {"Maker": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "properties": {"maker": {"$ref": "#/definitions/Maker"}, "years": {"type": "integer"}},
    }
    assert JSON_SR.infer_columns(json.dumps(schema), is_key=False, unwrapped=False, properties={}) == [
        ("MAKER", t.Struct((t.Field("NAME", t.STRING),))),
        ("YEARS", t.BIGINT),
    ]


def test_a_recursive_or_dangling_reference_is_a_statement_error() -> None:
    node = {"type": "object", "properties": {"next": {"$ref": "#"}}}
    with pytest.raises(StatementError, match="refers to itself"):
        JSON_SR.infer_columns(json.dumps(node), is_key=False, unwrapped=False, properties={})
    dangling = {"type": "object", "properties": {"x": {"$ref": "#/definitions/Nope"}}}
    with pytest.raises(StatementError, match="points at no schema"):
        JSON_SR.infer_columns(json.dumps(dangling), is_key=False, unwrapped=False, properties={})


def test_a_schema_without_a_sql_type_is_a_statement_error() -> None:
    with pytest.raises(StatementError, match="has no SQL type"):
        JSON_SR.infer_columns(
            '{"type": "object", "properties": {"N": {"type": "null"}}}', is_key=False, unwrapped=False, properties={}
        )


# ---- bytes


def test_rows_round_trip_in_the_confluent_wire_format() -> None:
    layout = layout_for(EVERY_TYPE[:11])
    row = (
        True,
        7,
        2**40,
        1.5,
        "celadon",
        b"\x01\x02",
        Decimal("12.50"),
        dt.date(2022, 1, 8),
        dt.time(1, 0),
        dt.datetime(2022, 1, 8, 0, 0, 0),
        ["a", None],
    )
    data = JSON_SR.row_writer(layout)(row)
    assert data is not None
    assert data[:5] == b"\x00\x00\x00\x00\x01"
    assert json.loads(data[5:])["C"] == 12.5
    assert b'"C":12.50' in data
    assert JSON_SR.row_reader(layout)(data) == row


def test_reading_coerces_like_json_and_does_not_validate() -> None:
    layout = layout_for(KILN)
    data = framed(1, '{"firing": "3", "Glaze": 42, "extra": true}')
    assert JSON_SR.row_reader(layout)(data) == (3, "42")


def test_unwrapped_values_are_bare() -> None:
    columns = KILN[:1]
    layout = layout_for(columns, features=frozenset([UNWRAP_SINGLE_VALUE]))
    data = JSON_SR.row_writer(layout)((5,))
    assert data is not None and data[5:] == b"5"
    assert JSON_SR.row_writer(layout)((None,)) is None
    assert JSON_SR.row_reader(layout)(data) == (5,)


def test_a_map_is_written_as_connects_entries_and_read_back_only_as_a_document() -> None:
    columns = (SerdeColumn("M", t.Map(t.STRING, t.INTEGER)),)
    layout = layout_for(columns)
    data = JSON_SR.row_writer(layout)(({"cup": 9},))
    assert data is not None
    assert json.loads(data[5:]) == {"M": [{"key": "cup", "value": 9}]}
    assert JSON_SR.read_document(data, layout) == {"M": {"cup": 9}}
    # ksqlDB's JSON_SR reader wants an object for a MAP, so it cannot read its own maps
    with pytest.raises(SerdeError, match="sourceType: ArrayNode, requiredType: MAP<VARCHAR, INT>"):
        JSON_SR.row_reader(layout)(data)


def test_documents_keep_fields_the_registered_schema_lacks() -> None:
    schema = {"type": "object", "properties": {"OTHER": {"type": "integer"}}}
    layout = layout_for(KILN, schema)
    data = JSON_SR.write_document({"firing": 2, "glaze": "ash"}, layout)
    assert data is not None
    assert json.loads(data[5:]) == {"firing": 2, "glaze": "ash"}


def test_writing_with_a_schema_id_validates_against_that_schema() -> None:
    schema = {"type": "object", "properties": {"FIRING": {"type": "integer"}, "GLAZE": {"type": "integer"}}}
    layout = layout_for(KILN, schema, schema_id=72)
    data = JSON_SR.row_writer(layout)((3, "9"))
    assert data is not None and data[:5] == b"\x00\x00\x00\x00\x48"
    with pytest.raises(SerdeError, match="Failed to serialize value as JSON_SR: 'ash' is not of type 'integer'"):
        JSON_SR.row_writer(layout)((3, "ash"))


def test_bytes_without_the_magic_byte_are_ksqldbs_error() -> None:
    with pytest.raises(SerdeError, match="did not start with the magic byte"):
        JSON_SR.row_reader(layout_for(KILN))(b'{"FIRING": 1}')


def test_an_unknown_schema_id_is_never_looked_up_as_ksqldbs_read_json_sr() -> None:
    reader = JSON_SR.row_reader(layout_for((SerdeColumn("FIRING", t.INTEGER),)))
    assert reader(framed(99, '{"firing": "7"}')) == (7,)


def test_an_unwrapped_null_is_a_row_of_one_null() -> None:
    single = (SerdeColumn("FIRING", t.INTEGER),)
    unwrapped = layout_for(single, features=frozenset([UNWRAP_SINGLE_VALUE]))
    assert JSON_SR.row_reader(unwrapped)(framed(5, "null")) == (None,)
    assert JSON_SR.row_reader(layout_for(single))(framed(5, "null")) is None


def test_invalid_json_is_a_serde_error() -> None:
    with pytest.raises(SerdeError, match="Failed to deserialize value as JSON_SR"):
        JSON_SR.row_reader(layout_for(KILN))(framed(1, "{nope"))


def test_deeply_nested_documents_read_into_a_string_column_or_fail_cleanly() -> None:
    layout = layout_for((SerdeColumn("NOTE", t.STRING),))
    nested = "[" * 900 + "]" * 900
    assert JSON_SR.row_reader(layout)(framed(1, '{"NOTE": ' + nested + "}"))[0].startswith("[[[")
    too_deep = "[" * 5000 + "]" * 5000
    with pytest.raises(SerdeError, match="Failed to deserialize value as JSON_SR"):
        JSON_SR.row_reader(layout)(framed(1, '{"NOTE": ' + too_deep + "}"))


# ---- statements


def test_maps_need_string_keys() -> None:
    layout = Layout(columns=(SerdeColumn("M", t.Map(t.INTEGER, t.DOUBLE)),), is_key=False, properties={})
    with pytest.raises(StatementError, match=r"^JSON only supports MAP types with STRING keys$"):
        JSON_SR.check(layout)


def test_an_empty_full_schema_name_is_rejected() -> None:
    layout = Layout(columns=KILN, is_key=False, properties={"fullSchemaName": " "})
    with pytest.raises(StatementError, match="fullSchemaName cannot be empty"):
        JSON_SR.check(layout)
