"""Which Avro values a SQL column reads: ksqlDB's ``ConnectDataTranslator`` type check.

ksqlDB reads AVRO through Kafka Connect's ``AvroData`` (Avro types become Connect types, the
writer schema's) and then its ``ConnectDataTranslator``, which accepts only some Connect types
for each SQL type, whatever the value: a BIGINT column reads any Avro ``int`` or ``long``, an
INT only an ``int``, a DOUBLE only a ``float`` or ``double``, a STRING any number, boolean or
string (``String.valueOf``: a ``float`` as Java's ``Float.toString``), and BOOLEAN, BYTES,
DECIMAL, ARRAY, MAP and STRUCT only their own kind. Anything else fails the record with
``Cannot deserialize type string as type int32 for path: ->A``, even where the value is null.

:func:`checked_plain` applies that check to a record already in the JSON-like middle form
(:func:`~qtt.serde.registry.avro_schema.avro_to_plain`), walking the writer schema beside it;
the lenient JSON coercion that follows then only converts what Connect accepts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from qtt import sqltypes as t
from qtt.errors import SerdeError
from qtt.serde.interface import SerdeColumn
from qtt.serde.java_numbers import java_float

_AVRO_PRIMITIVES = {
    "boolean": "boolean",
    "int": "int32",
    "long": "int64",
    "float": "float32",
    "double": "float64",
    "bytes": "bytes",
    "string": "string",
}
_CONNECT_INTS = {"int8": "int8", "int16": "int16"}

# the Connect type ksqlDB's own schema gives each SQL base type
_SQL_CONNECT = {
    "BOOLEAN": "boolean",
    "INTEGER": "int32",
    "DATE": "int32",
    "TIME": "int32",
    "BIGINT": "int64",
    "TIMESTAMP": "int64",
    "DOUBLE": "float64",
    "STRING": "string",
    "BYTES": "bytes",
    "DECIMAL": "bytes",
    "ARRAY": "array",
    "MAP": "map",
    "STRUCT": "struct",
}
_NUMBERS = frozenset({"int8", "int16", "int32", "int64", "float32", "float64"})
# ConnectDataTranslator.validateSchema: the Connect types each SQL Connect type accepts
_ACCEPTS = {
    "string": _NUMBERS | {"boolean", "string"},
    "int64": frozenset({"int8", "int16", "int32", "int64"}),
    "int32": frozenset({"int8", "int16", "int32"}),
    "float64": frozenset({"float32", "float64"}),
}


def checked_plain(plain: Any, writer: Any, columns: Sequence[SerdeColumn], *, unwrapped: bool) -> Any:
    """``plain`` (a record read with the Avro schema ``writer``) if ksqlDB's translator accepts
    it for ``columns``, with each ``float`` a STRING column reads as Java prints it.

    Raises:
        SerdeError: with ksqlDB's message for the first value of a Connect type its column
            does not accept.
    """
    names = _named_types_once(writer)
    if unwrapped:
        return _checked(plain, writer, columns[0].type, "", names)
    row = t.Struct(tuple(t.Field(c.name, c.type) for c in columns))
    return _checked(plain, writer, row, "", names)


def _checked(value: Any, schema: Any, type_: t.SqlType, path: str, names: Mapping[str, Any]) -> Any:
    schema = _resolved(schema, names)
    connect = _connect_type(schema, names)
    wanted = _SQL_CONNECT[type_.base]
    if connect != wanted and connect not in _ACCEPTS.get(wanted, ()):
        msg = f"Cannot deserialize type {connect} as type {wanted} for path: {path}"
        raise SerdeError(msg)
    if value is None or isinstance(schema, list):
        # a union of several types is Connect's struct of its members: left as it was read
        return value
    if connect == "float32" and wanted == "string" and isinstance(value, float):
        return java_float(value)
    if isinstance(type_, t.Array) and isinstance(value, list):
        items = schema.get("items")
        return [_checked(v, items, type_.element, f"{path}->ARRAY", names) for v in value]
    if isinstance(type_, t.Map) and isinstance(value, Mapping):
        key_schema, value_schema = _map_schemas(schema, names)
        return {
            _checked(k, key_schema, type_.key, f"{path}->MAP_KEY", names): _checked(
                v, value_schema, type_.value, f"{path}->MAP_VAL", names
            )
            for k, v in value.items()
        }
    if isinstance(type_, t.Struct) and isinstance(value, Mapping):
        return _checked_record(value, schema, type_, path, names)
    return value


def _checked_record(
    value: Mapping[str, Any], schema: Any, type_: t.Struct, path: str, names: Mapping[str, Any]
) -> dict[str, Any]:
    """The writer's fields that match a struct field (by name, else upper-cased), checked."""
    fields = {f.name: f for f in type_.fields}
    out = dict(value)
    for field in schema.get("fields", ()):
        name = field["name"]
        target = fields.get(name) or fields.get(name.upper())
        if target is not None and name in value:
            out[name] = _checked(value[name], field["type"], target.type, f"{path}->{target.name}", names)
    return out


def _resolved(schema: Any, names: Mapping[str, Any]) -> Any:
    """``schema`` with a named type's reference replaced, a nested ``type`` unwrapped and a
    union of one type and null reduced to that type (Connect's optional schema)."""
    while True:
        if isinstance(schema, str) and schema in names:
            schema = names[schema]
        elif isinstance(schema, Mapping) and isinstance(schema.get("type"), Mapping | list):
            schema = schema["type"]
        elif isinstance(schema, Mapping) and schema.get("type") in names:
            schema = names[schema["type"]]
        elif isinstance(schema, list):
            members = [m for m in schema if m != "null"]
            if len(members) != 1:
                return schema
            schema = members[0]
        else:
            return schema


def _connect_type(schema: Any, names: Mapping[str, Any]) -> str:
    """The Connect type Kafka Connect's ``AvroData`` gives an Avro schema (resolved)."""
    if isinstance(schema, list):
        return "struct"
    if isinstance(schema, str):
        return _AVRO_PRIMITIVES.get(schema, "struct")
    kind = schema.get("type")
    if kind == "record":
        return "struct"
    if kind == "enum":
        return "string"
    if kind == "fixed":
        return "bytes"
    if kind == "map" or (kind == "array" and _is_map_entry(_resolved(schema.get("items"), names))):
        return "map"
    if kind == "array":
        return "array"
    connect = _CONNECT_INTS.get(str(schema.get("connect.type")))
    return connect or _AVRO_PRIMITIVES.get(str(kind), "struct")


def _map_schemas(schema: Mapping[str, Any], names: Mapping[str, Any]) -> tuple[Any, Any]:
    """The key and value schemas of an Avro map (string keys) or of Connect's map entries."""
    if schema.get("type") == "map":
        return "string", schema.get("values")
    entry = _resolved(schema.get("items"), names)
    types = {f["name"]: f["type"] for f in entry.get("fields", ())}
    return types.get("key", "string"), types.get("value", "null")


def _is_map_entry(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("connect.internal.type") == "MapEntry"


#: the named types of each writer schema met, by identity (the schema held, so its id stays its
#: own): a record's check must not walk its schema again, and parsed schemas are shared
_NAMES_BY_SCHEMA: dict[int, tuple[Any, dict[str, Any]]] = {}


def _named_types_once(schema: Any) -> dict[str, Any]:
    known = _NAMES_BY_SCHEMA.get(id(schema))
    if known is None or known[0] is not schema:
        known = _NAMES_BY_SCHEMA[id(schema)] = (schema, _named_types(schema))
    return known[1]


def _named_types(schema: Any) -> dict[str, Any]:
    """Every record, enum and fixed type defined in ``schema``, by its name and full name."""
    found: dict[str, Any] = {}

    def visit(node: Any, namespace: str) -> None:
        if isinstance(node, list):
            for member in node:
                visit(member, namespace)
            return
        if not isinstance(node, Mapping):
            return
        kind = node.get("type")
        if kind in ("record", "enum", "fixed") and isinstance(node.get("name"), str):
            name = node["name"]
            space = node.get("namespace", namespace) if "." not in name else name.rpartition(".")[0]
            full = name if "." in name else f"{space}.{name}" if space else name
            found[full] = found[name.rpartition(".")[2]] = node
            namespace = space or ""
        for field in node.get("fields", ()) if kind == "record" else ():
            visit(field.get("type"), namespace)
        for key in ("items", "values", "type"):
            if isinstance(node.get(key), Mapping | list):
                visit(node[key], namespace)

    visit(schema, "")
    return found


def checked_message_plain(plain: Mapping[str, Any], message: Any, columns: Sequence[SerdeColumn]) -> Any:
    """:func:`checked_plain` for PROTOBUF: ``plain`` read from a message of descriptor ``message``
    (Kafka Connect's ``ProtobufData`` types: ``uint32`` is an int64, an enum a string,
    ``google.protobuf.Timestamp`` a timestamp, a wrapper its primitive)."""
    row = t.Struct(tuple(t.Field(c.name, c.type) for c in columns))
    return _checked_message(plain, message, row, "")


def _checked_message(value: Mapping[str, Any], message: Any, type_: t.Struct, path: str) -> dict[str, Any]:
    fields = {f.name: f for f in type_.fields}
    out = dict(value)
    for field in message.fields:
        target = fields.get(field.name) or fields.get(field.name.upper())
        if target is not None and field.name in value:
            out[field.name] = _checked_field(value[field.name], field, target.type, f"{path}->{target.name}")
    return out


def _checked_field(value: Any, field: Any, type_: t.SqlType, path: str, *, single: bool = False) -> Any:
    entry = field.message_type if field.is_repeated and not single else None
    if entry is not None and (entry.GetOptions().map_entry or _is_connect_entry(field)):
        connect = "map"
    else:
        connect = "array" if field.is_repeated and not single else _proto_connect_type(field)
    wanted = _SQL_CONNECT[type_.base]
    if connect != wanted and connect not in _ACCEPTS.get(wanted, ()):
        msg = f"Cannot deserialize type {connect} as type {wanted} for path: {path}"
        raise SerdeError(msg)
    if value is None:
        return None
    if connect == "map" and isinstance(type_, t.Map) and isinstance(value, Mapping) and entry is not None:
        key_field, value_field = (entry.fields_by_name[n] for n in ("key", "value"))
        return {
            _checked_field(k, key_field, type_.key, f"{path}->MAP_KEY"): _checked_field(
                v, value_field, type_.value, f"{path}->MAP_VAL"
            )
            for k, v in value.items()
        }
    if connect == "array" and isinstance(type_, t.Array) and isinstance(value, list):
        return [_checked_field(v, field, type_.element, f"{path}->ARRAY", single=True) for v in value]
    if connect == "struct" and isinstance(type_, t.Struct) and isinstance(value, Mapping):
        return _checked_message(value, field.message_type, type_, path)
    if connect == "float32" and wanted == "string" and isinstance(value, float):
        return java_float(value)
    return value


def _is_connect_entry(field: Any) -> bool:
    """Kafka Connect's ``<Name>Entry`` message of a map it wrote as a repeated field."""
    entry = field.message_type
    return entry is not None and entry.name.endswith("Entry") and set(entry.fields_by_name) == {"key", "value"}


def _proto_connect_type(field: Any) -> str:
    """The Connect type Kafka Connect's ``ProtobufData`` gives one value of a field."""
    if field.type == field.TYPE_MESSAGE:
        return _PROTO_MESSAGES.get(field.message_type.full_name, "struct")
    if field.type == field.TYPE_ENUM:
        return "string"
    return _proto_scalars().get(field.type, "struct")


_PROTO_MESSAGES = {
    "confluent.type.Decimal": "bytes",
    "google.type.Date": "int32",
    "google.type.TimeOfDay": "int32",
    "google.protobuf.Timestamp": "int64",
    "google.protobuf.BoolValue": "boolean",
    "google.protobuf.Int32Value": "int32",
    "google.protobuf.UInt32Value": "int64",
    "google.protobuf.Int64Value": "int64",
    "google.protobuf.UInt64Value": "int64",
    "google.protobuf.FloatValue": "float32",
    "google.protobuf.DoubleValue": "float64",
    "google.protobuf.StringValue": "string",
    "google.protobuf.BytesValue": "bytes",
}


@cache
def _proto_scalars() -> dict[int, str]:
    from google.protobuf.descriptor import FieldDescriptor as F

    return {
        F.TYPE_BOOL: "boolean",
        F.TYPE_INT32: "int32",
        F.TYPE_SINT32: "int32",
        F.TYPE_SFIXED32: "int32",
        F.TYPE_UINT32: "int64",
        F.TYPE_FIXED32: "int64",
        F.TYPE_INT64: "int64",
        F.TYPE_SINT64: "int64",
        F.TYPE_SFIXED64: "int64",
        F.TYPE_UINT64: "int64",
        F.TYPE_FIXED64: "int64",
        F.TYPE_FLOAT: "float32",
        F.TYPE_DOUBLE: "float64",
        F.TYPE_STRING: "string",
        F.TYPE_BYTES: "bytes",
    }
