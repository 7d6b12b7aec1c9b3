"""AVRO: DECIMAL keys and values in the bytes ksqlDB writes, and registered schemas Avro rejects."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from decimal import Decimal
from typing import Any

import fastavro
import pytest

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import get_format
from qtt.serde.formats import UNWRAP_SINGLE_VALUE
from qtt.serde.interface import SerdeColumn
from qtt.serde.registry.schema_registry import Registry, RegistrySnapshot

AVRO = get_format("AVRO")
PRICE = (SerdeColumn("PRICE", t.Decimal(5, 2)),)


def _registered(is_key: bool, features: frozenset[str] = frozenset()) -> tuple[RegistrySnapshot, int]:
    registry = Registry()
    unwrapped = is_key or UNWRAP_SINGLE_VALUE in features
    text = AVRO.schema_text(PRICE, is_key=is_key, properties={}, unwrapped=unwrapped)
    registered = registry.register(f"t-{'key' if is_key else 'value'}", "AVRO", text)
    return registry.snapshot(), registered.schema_id


def _side(is_key: bool, snapshot: RegistrySnapshot, features: frozenset[str] = frozenset()) -> dict[str, Any]:
    return {"is_key": is_key, "properties": {}, "features": features, "topic": "t", "registry": snapshot}


@pytest.mark.parametrize(
    ("number", "unscaled"),
    [(Decimal("123.45"), b"\x30\x39"), (Decimal("-1.29"), b"\xff\x7f"), (Decimal("1.28"), b"\x00\x80"), (0, b"\x00")],
)
def test_a_decimal_key_is_its_unscaled_value_in_the_fewest_twos_complement_bytes(number: Any, unscaled: bytes) -> None:
    # A bare bytes schema's payload is the bytes themselves (Confluent's serializers, Java's as
    # Python's); Connect's Decimal.fromLogical gives BigInteger.toByteArray() of the unscaled value.
    snapshot, schema_id = _registered(is_key=True)
    side = _side(True, snapshot)
    data = AVRO.serializer(PRICE, **side)((number,))
    assert data == b"\x00" + schema_id.to_bytes(4, "big") + unscaled
    assert AVRO.deserializer(PRICE, **side)(data) == (Decimal(number).quantize(Decimal("0.01")),)
    assert AVRO.to_document(data, PRICE, **side) == Decimal(number).quantize(Decimal("0.01"))


def test_a_decimal_key_from_a_case_file_is_written_as_ksqldb_writes_it() -> None:
    snapshot, schema_id = _registered(is_key=True)
    data = AVRO.from_document(123.45, PRICE, **_side(True, snapshot))
    assert data == b"\x00" + schema_id.to_bytes(4, "big") + b"\x30\x39"


def test_an_unwrapped_decimal_value_round_trips_as_its_unscaled_bytes() -> None:
    features = frozenset([UNWRAP_SINGLE_VALUE])
    snapshot, schema_id = _registered(is_key=False, features=features)
    side = _side(False, snapshot, features)
    data = AVRO.serializer(PRICE, **side)((Decimal("-7.5"),))
    assert data == b"\x00" + schema_id.to_bytes(4, "big") + (-750).to_bytes(2, "big", signed=True)
    assert AVRO.deserializer(PRICE, **side)(data) == (Decimal("-7.50"),)


def test_a_wrapped_decimal_value_is_avro_bytes_with_its_logical_type() -> None:
    snapshot, schema_id = _registered(is_key=False)
    side = _side(False, snapshot)
    data = AVRO.serializer(PRICE, **side)((Decimal("123.45"),))
    assert data is not None and data[:5] == b"\x00" + schema_id.to_bytes(4, "big")
    # the union's branch 1, the length 2 (zigzag varints), then the unscaled value
    assert data[5:] == b"\x02\x04\x30\x39"
    (schema,) = snapshot.schemas
    parsed = fastavro.parse_schema(json.loads(schema.schema))
    assert fastavro.schemaless_reader(io.BytesIO(data[5:]), parsed) == {"PRICE": Decimal("123.45")}
    assert AVRO.deserializer(PRICE, **side)(data) == (Decimal("123.45"),)


def test_a_decimal_past_its_precision_is_a_serde_error_that_names_the_type() -> None:
    snapshot, _ = _registered(is_key=True)
    with pytest.raises(SerdeError) as raised:
        AVRO.serializer(PRICE, **_side(True, snapshot))((Decimal("1000"),))
    assert "1000 does not fit the Avro decimal(5, 2) at $" in raised.value.message
    with pytest.raises(SerdeError, match=r"1E\+999999999 does not fit the Avro decimal\(5, 2\)"):
        AVRO.from_document(Decimal("1E+999999999"), PRICE, **_side(True, snapshot))


def test_a_bare_decimal_key_of_no_bytes_is_a_serde_error() -> None:
    snapshot, schema_id = _registered(is_key=True)
    framed = b"\x00" + schema_id.to_bytes(4, "big")
    with pytest.raises(SerdeError, match="Failed to deserialize key as AVRO"):
        AVRO.deserializer(PRICE, **_side(True, snapshot))(framed)


@pytest.mark.parametrize(
    ("schema", "is_key", "where"),
    [
        ({"type": "record", "name": "K"}, True, 'Invalid Avro key schema at $: an Avro record needs "fields"'),
        (
            {"type": "record", "name": "V", "fields": [{"name": "a", "type": {"type": "record", "name": "B"}}]},
            False,
            'Invalid Avro value schema at $.fields[0].type: an Avro record needs "fields"',
        ),
        (
            {"type": "record", "name": "V", "fields": [{"name": "a", "type": ["null", {"type": "array"}]}]},
            False,
            'Invalid Avro value schema at $.fields[0].type[1]: an Avro array needs "items"',
        ),
        ({"type": "map"}, True, 'Invalid Avro key schema at $: an Avro map needs "values"'),
        ({"type": "record", "name": "V", "fields": [{"type": "int"}]}, False, "at $.fields[0]: expected a field"),
        (
            {"type": "bytes", "logicalType": "decimal", "precision": "x", "scale": 1},
            True,
            "precision property must be a JSON Integer.",
        ),
    ],
)
def test_a_registered_schema_avro_rejects_is_a_statement_error_naming_where(
    schema: Any, is_key: bool, where: str
) -> None:
    with pytest.raises(StatementError) as raised:
        AVRO.infer_columns(json.dumps(schema), is_key=is_key, unwrapped=is_key, properties={})
    assert where in raised.value.message


def test_a_map_that_kafka_connect_wrote_as_an_array_of_entries_takes_a_json_object() -> None:
    from qtt.serde.registry.avro_schema import datum_for_schema

    entry = {
        "type": "record",
        "name": "E",
        "fields": [{"name": "key", "type": ["null", "string"]}, {"name": "value", "type": ["null", "double"]}],
        "connect.internal.type": "MapEntry",
    }
    schema = ["null", {"type": "array", "items": entry}]
    assert datum_for_schema({"a": 1.5}, schema) == [{"key": "a", "value": 1.5}]
    plain = {"type": "array", "items": {**entry, "connect.internal.type": None}}
    with pytest.raises(SerdeError, match=r"expected an array at \$"):
        datum_for_schema({"a": 1.5}, plain)


def test_map_entries_that_kafka_connect_wrote_read_back_as_maps_wherever_they_nest() -> None:
    from qtt.serde.registry.avro_schema import maps_from_entries

    entry = {
        "type": "record",
        "name": "E",
        "fields": [{"name": "key", "type": ["null", "string"]}, {"name": "value", "type": ["null", "double"]}],
        "connect.internal.type": "MapEntry",
    }
    schema = {
        "type": "record",
        "name": "V",
        "fields": [
            {"name": "M", "type": ["null", {"type": "array", "items": entry}]},
            {"name": "L", "type": ["null", {"type": "array", "items": {"type": "array", "items": entry}}]},
            {"name": "R", "type": ["null", {"type": "array", "items": {**entry, "connect.internal.type": None}}]},
        ],
    }
    datum = {
        "M": [{"key": "a", "value": 1.5}, {"key": "b", "value": None}],
        "L": [[{"key": "c", "value": 2.0}]],
        "R": [{"key": "d", "value": 3.0}],
    }
    assert maps_from_entries(datum, schema) == {
        "M": {"a": 1.5, "b": None},
        "L": [{"c": 2.0}],
        "R": [{"key": "d", "value": 3.0}],  # records of another kind stay records
    }
    assert maps_from_entries({"M": None, "L": None, "R": None}, schema) == {"M": None, "L": None, "R": None}


def test_a_decimal_schema_without_its_precision_takes_a_value_at_its_scale() -> None:
    from qtt.serde.registry.avro_schema import datum_for_schema

    assert datum_for_schema(65.21, {"type": "bytes", "logicalType": "decimal", "scale": 2}) == Decimal("65.21")


STOCK = (
    SerdeColumn("LEVELS", t.Map(t.STRING, t.INTEGER)),
    SerdeColumn("BINS", t.Array(t.Map(t.STRING, t.Struct((t.Field("ROW", t.INTEGER),))))),
)


def test_the_second_writer_writes_a_map_as_connect_s_map_entries_where_the_first_wrote_an_avro_map() -> None:
    assert AVRO.writer_version_for(STOCK) == 2
    assert AVRO.writer_version_for(PRICE) == 1  # no map: the bytes are the first writer's
    first = json.loads(AVRO.schema_text(STOCK, is_key=False, properties={}, unwrapped=False))
    assert first["fields"][0]["type"] == ["null", {"type": "map", "values": ["null", "int"]}]
    second = json.loads(AVRO.schema_text(STOCK, is_key=False, properties={}, unwrapped=False, writer_version=2))
    levels, bins = (field["type"][1] for field in second["fields"])
    assert levels == {
        "type": "array",
        "items": {
            "type": "record",
            "name": "KsqlDataSourceSchema_LEVELS",
            "fields": [
                {"name": "key", "type": ["null", "string"], "default": None},
                {"name": "value", "type": ["null", "int"], "default": None},
            ],
            "connect.internal.type": "MapEntry",
        },
        "connect.name": "io.confluent.ksql.avro_schemas.KsqlDataSourceSchema_LEVELS",
    }
    nested_value = bins["items"][1]["items"]["fields"][1]["type"][1]
    assert nested_value["name"] == "KsqlDataSourceSchema_BINS_MapValue"

    registry = Registry()
    registered = registry.register("t-value", "AVRO", json.dumps(second))
    side = _side(False, registry.snapshot())
    row = ({"nails": 4, "bolts": None}, [{"a": (2,)}])  # a struct is a tuple of its fields
    data = AVRO.serializer(STOCK, **side)(row)
    assert data is not None and data[:5] == b"\x00" + registered.schema_id.to_bytes(4, "big")
    written = fastavro.schemaless_reader(io.BytesIO(data[5:]), fastavro.parse_schema(second))
    assert written["LEVELS"] == [{"key": "nails", "value": 4}, {"key": "bolts", "value": None}]
    assert AVRO.deserializer(STOCK, **side)(data) == row


def _read_field(avro_type: Any, value: Any, sql_type: t.SqlType) -> tuple | None:
    """A record ``{"A": value}`` written with ``avro_type``, read as a column ``A sql_type``."""
    registry = Registry()
    schema = {"type": "record", "name": "R", "fields": [{"name": "A", "type": ["null", avro_type], "default": None}]}
    registered = registry.register("t-value", "AVRO", json.dumps(schema))
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(schema), {"A": value})
    data = b"\x00" + registered.schema_id.to_bytes(4, "big") + body.getvalue()
    side = _side(False, registry.snapshot())
    return AVRO.deserializer((SerdeColumn("A", sql_type),), **side)(data)


@pytest.mark.parametrize(
    ("avro_type", "value", "sql_type", "expected"),
    [
        ("int", 5, t.BIGINT, 5),
        ("float", 0.1, t.DOUBLE, 0.10000000149011612),
        ("float", 0.1, t.STRING, "0.1"),
        ("long", 7, t.STRING, "7"),
        ("boolean", False, t.STRING, "false"),
        ({"type": "enum", "name": "E", "symbols": ["ON"]}, "ON", t.STRING, "ON"),
        ("long", 1000, t.TIMESTAMP, dt.datetime(1970, 1, 1, 0, 0, 1)),
    ],
)
def test_avro_types_connect_lets_a_column_take(avro_type: Any, value: Any, sql_type: t.SqlType, expected: Any) -> None:
    assert _read_field(avro_type, value, sql_type) == (expected,)


@pytest.mark.parametrize(
    ("avro_type", "value", "sql_type", "message"),
    [
        ("string", "12", t.INTEGER, "Cannot deserialize type string as type int32 for path: ->A"),
        ("long", None, t.INTEGER, "Cannot deserialize type int64 as type int32"),
        ("int", 3, t.DOUBLE, "Cannot deserialize type int32 as type float64"),
        ("double", 1.5, t.BIGINT, "Cannot deserialize type float64 as type int64"),
        ("string", "AQI=", t.BYTES, "Cannot deserialize type string as type bytes"),
        ("string", "1.5", t.Decimal(4, 2), "Cannot deserialize type string as type bytes"),
        ({"type": "array", "items": "int"}, [1], t.STRING, "Cannot deserialize type array as type string"),
        ({"type": "array", "items": "long"}, [1], t.Array(t.INTEGER), "int64 as type int32 for path: ->A->ARRAY"),
    ],
)
def test_avro_types_connect_refuses_a_column_fail_the_record(
    avro_type: Any, value: Any, sql_type: t.SqlType, message: str
) -> None:
    # ksqlDB's ConnectDataTranslator checks the writer's type, even for a null value
    with pytest.raises(SerdeError, match=re.escape(message)):
        _read_field(avro_type, value, sql_type)


def test_a_bare_value_from_the_null_branch_of_its_union_is_a_row_of_one_null() -> None:
    registry = Registry()
    registered = registry.register("t-value", "AVRO", json.dumps(["null", "int"]))
    framing = b"\x00" + registered.schema_id.to_bytes(4, "big")
    column = (SerdeColumn("NOTCH", t.INTEGER),)
    unwrapped = _side(False, registry.snapshot(), frozenset([UNWRAP_SINGLE_VALUE]))
    assert AVRO.deserializer(column, **unwrapped)(framing + b"\x00") == (None,)
    assert AVRO.deserializer(column, **unwrapped)(framing + b"\x02\x0e") == (7,)
