"""JSON schemas as ksqlDB registers and reads them for JSON_SR, and documents shaped by them.

Writing (:func:`json_schema_for`) follows Kafka Connect's ``JsonSchemaData.fromConnectSchema``
over the Connect schema ksqlDB builds for its columns: every field, array element and map
value is optional, so it becomes ``{"oneOf": [{"type": "null"}, T]}``, with the field's
``connect.index`` on the ``oneOf``; numbers carry ``connect.type``; logical types carry
Connect's names as ``title``. ksqlDB's map keys are *optional* strings, which Connect cannot
write as a JSON object, so a MAP is an array of ``{"key", "value"}`` entries
(``connect.type: map``), as ksqlDB writes it.

Reading (:func:`sql_type_of`) is ``JsonSchemaData.toConnectSchema`` then ksqlDB's Connect to
SQL types: ``integer`` without ``connect.type`` is BIGINT, ``number`` is DOUBLE.
"""

from __future__ import annotations

import decimal
from collections.abc import Mapping, Sequence
from typing import Any

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import values
from qtt.serde.excerpt import json_value
from qtt.serde.interface import SerdeColumn

_NULL = {"type": "null"}
_CONNECT = "org.apache.kafka.connect.data."
_PRIMITIVES: dict[str, dict[str, Any]] = {
    "BOOLEAN": {"type": "boolean"},
    "INTEGER": {"type": "integer", "connect.type": "int32"},
    "BIGINT": {"type": "integer", "connect.type": "int64"},
    "DOUBLE": {"type": "number", "connect.type": "float64"},
    "STRING": {"type": "string"},
    "BYTES": {"type": "string", "connect.type": "bytes"},
}
_LOGICAL = {"DATE": ("Date", "int32"), "TIME": ("Time", "int32"), "TIMESTAMP": ("Timestamp", "int64")}
_INTEGERS = {"int8": t.INTEGER, "int16": t.INTEGER, "int32": t.INTEGER, "int64": t.BIGINT}


def json_schema_for(columns: Sequence[SerdeColumn], *, unwrapped: bool) -> dict[str, Any]:
    """The JSON schema (JSON-ready) ksqlDB registers for these columns.

    ksqlDB's ``JsonSchemaTranslator`` translates the columns' unnamed Connect schema and never
    reads the format's full name property: ``*_SCHEMA_FULL_NAME`` names nothing here.
    """
    if unwrapped:
        return _type_schema(columns[0].type)
    return _object([(c.name, c.type) for c in columns])


def _object(fields: Sequence[tuple[str, t.SqlType]]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    schema["properties"] = {name: _type_schema(type_, index=i) for i, (name, type_) in enumerate(fields)}
    return schema


def _type_schema(type_: t.SqlType, *, index: int | None = None) -> dict[str, Any]:
    """An optional type: ``oneOf`` null and the type, with the field's index on the ``oneOf``."""
    inner = _required_schema(type_)
    wrapper: dict[str, Any] = {} if index is None else {"connect.index": index}
    wrapper["oneOf"] = [dict(_NULL), inner]
    return wrapper


def _required_schema(type_: t.SqlType) -> dict[str, Any]:
    base = type_.base
    schema: dict[str, Any]
    if base in _PRIMITIVES:
        schema = dict(_PRIMITIVES[base])
    elif base in _LOGICAL:
        name, connect_type = _LOGICAL[base]
        schema = {"type": "integer", "title": _CONNECT + name, "connect.version": 1, "connect.type": connect_type}
    elif isinstance(type_, t.Decimal):
        schema = {
            "type": "number",
            "title": _CONNECT + "Decimal",
            "connect.version": 1,
            "connect.type": "bytes",
            "connect.parameters": {"scale": str(type_.scale), "connect.decimal.precision": str(type_.precision)},
        }
    elif isinstance(type_, t.Array):
        schema = {"type": "array", "items": _type_schema(type_.element)}
    elif isinstance(type_, t.Map):
        entry = {
            "type": "object",
            "properties": {"key": _type_schema(type_.key, index=0), "value": _type_schema(type_.value, index=1)},
        }
        schema = {"type": "array", "items": entry, "connect.type": "map"}
    elif isinstance(type_, t.Struct):
        return _object([(f.name, f.type) for f in type_.fields])
    else:  # pragma: no cover - every SQL type is handled above
        raise StatementError(f"The 'JSON_SR' format does not support type '{base}'")
    return schema


# ---- inference: JSON schema -> SQL types


def non_null(schema: Any) -> Any:
    """The schema without its null alternative (``oneOf``/``anyOf`` of null and one type)."""
    if isinstance(schema, Mapping):
        members = schema.get("oneOf", schema.get("anyOf"))
        if isinstance(members, list) and len(members) == 2:
            others = [m for m in members if not _is_null(m)]
            if len(others) == 1:
                return non_null(others[0])
        kind = schema.get("type")
        if isinstance(kind, list):
            others = [k for k in kind if k != "null"]
            if len(others) == 1:
                return {**schema, "type": others[0]}
    return schema


def _is_null(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("type") == "null"


def is_record(schema: Any) -> bool:
    """Whether a schema is an object of fields (a row), not a map or a single value."""
    schema = non_null(schema)
    return (
        isinstance(schema, Mapping)
        and _kind(schema) == "object"
        and schema.get("connect.type") != "map"
        and "properties" in schema
    )


def fields_of(schema: Any) -> list[tuple[str, Any]]:
    """An object schema's properties in Connect's field order (``connect.index``, else as written)."""
    properties = non_null(schema).get("properties") or {}
    indexed: dict[int, tuple[str, Any]] = {}
    for name, sub in properties.items():
        index = sub.get("connect.index") if isinstance(sub, Mapping) else None
        indexed[int(index) if isinstance(index, int) else len(indexed)] = (str(name), sub)
    return [indexed[i] for i in sorted(indexed)]


def _kind(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    if "properties" in schema or "additionalProperties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    if "enum" in schema:
        return "string"
    return None


#: how many ``$ref`` hops one path may take: more means the schema refers to itself
_MAX_REF_HOPS = 32


def inline_refs(schema: Any, root: Any = None, hops: int = 0) -> Any:
    """The schema with its local ``$ref`` (``#/definitions/...``) replaced by what they point at.

    Raises:
        StatementError: a reference points nowhere, or the schema refers to itself (a recursive
            type has no SQL type).
    """
    root = schema if root is None else root
    if isinstance(schema, list):
        return [inline_refs(item, root, hops) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#"):
        if hops >= _MAX_REF_HOPS:
            msg = f"JSON schema refers to itself through {ref}: a recursive type has no SQL type"
            raise StatementError(msg)
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return inline_refs({**_pointer(root, ref), **rest}, root, hops + 1)
    return {k: inline_refs(v, root, hops) for k, v in schema.items()}


def _pointer(root: Any, ref: str) -> Mapping[str, Any]:
    found = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        key = part.replace("~1", "/").replace("~0", "~")
        found = found.get(key) if isinstance(found, Mapping) else None
    if not isinstance(found, Mapping):
        msg = f"JSON schema reference {ref} points at no schema"
        raise StatementError(msg)
    return found


def sql_type_of(schema: Any, *, upper: bool = True) -> t.SqlType:
    """The SQL type ksqlDB infers for a JSON schema: its properties' names upper-cased, or as
    they are (``upper=False``) where a schema id names the schema.

    Raises:
        StatementError: the schema holds a type that has no SQL type.
    """
    schema = non_null(schema)
    if not isinstance(schema, Mapping):
        raise _no_sql_type(schema)
    kind = _kind(schema)
    connect_type = schema.get("connect.type")
    title = str(schema.get("title") or "")
    if kind == "boolean":
        return t.BOOLEAN
    if kind in ("integer", "number"):
        if title == _CONNECT + "Decimal" or connect_type == "bytes":
            params = schema.get("connect.parameters") or {}
            return t.Decimal(int(params.get("connect.decimal.precision", 64)), int(params.get("scale", 0)))
        for name, sql in (("Date", t.DATE), ("Time", t.TIME), ("Timestamp", t.TIMESTAMP)):
            if title == _CONNECT + name:
                return sql
        if connect_type in _INTEGERS:
            return _INTEGERS[connect_type]
        if connect_type in ("float32", "float64"):
            return t.DOUBLE
        return t.BIGINT if kind == "integer" else t.DOUBLE
    if kind == "string":
        return t.BYTES if connect_type == "bytes" else t.STRING
    if kind == "array":
        items = schema.get("items")
        if connect_type == "map" and isinstance(items, Mapping) and "properties" in items:
            entry = items["properties"]
            return t.Map(sql_type_of(entry.get("key"), upper=upper), sql_type_of(entry.get("value"), upper=upper))
        if items is None:
            msg = "Array schema did not specify the items type"
            raise StatementError(msg)
        return t.Array(sql_type_of(items, upper=upper))
    if kind == "object":
        if connect_type == "map" or ("properties" not in schema and "additionalProperties" in schema):
            return t.Map(t.STRING, sql_type_of(schema.get("additionalProperties"), upper=upper))
        named = ((name.upper() if upper else name, sql_type_of(sub, upper=upper)) for name, sub in fields_of(schema))
        return t.Struct(tuple(t.Field(name, type_) for name, type_ in named))
    raise _no_sql_type(schema)


def _no_sql_type(schema: Any) -> StatementError:
    return StatementError(f"JSON schema {json_value(schema)} has no SQL type (qtt reads what ksqlDB reads)")


# ---- values: a JSON-like document shaped for a schema


class RowDocument(dict[str, Any]):
    """A row's columns as a document: shaped to the schema's fields only, as ksqlDB writes rows."""


def _row_datum(row: RowDocument, upper: Mapping[str, Any], schema: Mapping[str, Any], path: str) -> dict[str, Any]:
    """A row shaped to a registered schema's fields, as ksqlDB's ``ConnectSRSchemaDataTranslator``
    and Connect's ``JsonSchemaData`` write it: a field the row has no column for takes its
    default, else null where the schema allows null, else is left out of the document."""
    out: dict[str, Any] = {}
    for name, sub in fields_of(schema):
        if name in row or name in upper:
            out[name] = datum_for_schema(values.field_value(row, upper, name), sub, f"{path}.{name}")
        elif isinstance(sub, Mapping) and "default" in sub:
            out[name] = sub["default"]
        elif _takes_null(sub):
            out[name] = None
    return out


def _takes_null(schema: Any) -> bool:
    """Whether a field's schema allows null (Connect reads it as an optional field)."""
    if _is_null(schema):
        return True
    if not isinstance(schema, Mapping):
        return False
    members = schema.get("oneOf", schema.get("anyOf"))
    if isinstance(members, list) and any(_is_null(m) for m in members):
        return True
    kind = schema.get("type")
    return isinstance(kind, list) and "null" in kind


def datum_for_schema(value: Any, schema: Any, path: str = "$") -> Any:
    """A JSON-like value shaped as Connect writes it for ``schema``.

    Object fields are looked up by name, then case-insensitively, and only the schema's own
    are kept; numbers take the schema's type; a map (an object) becomes Connect's entries
    array where the schema says so. What cannot be shaped is left as it is, for the
    serializer's validation to reject.
    """
    if value is None:
        return None
    schema = non_null(schema)
    if not isinstance(schema, Mapping):
        return value
    kind = _kind(schema)
    connect_type = schema.get("connect.type")
    if kind == "object" and isinstance(value, Mapping):
        if connect_type == "map" or ("properties" not in schema and "additionalProperties" in schema):
            item = schema.get("additionalProperties")
            return {str(k): datum_for_schema(v, item, f"{path}.{k}") for k, v in value.items()}
        upper = values.upper_case_keys(value)
        if isinstance(value, RowDocument):
            return _row_datum(value, upper, schema, path)
        # a case file's document keeps the fields it has, those the schema lacks too: ksqlDB's
        # test runner writes them, and a reader declared with other columns finds them
        properties = {name.upper(): sub for name, sub in fields_of(schema)}
        return {k: datum_for_schema(v, properties.get(str(k).upper()), f"{path}.{k}") for k, v in value.items()}
    if kind == "array":
        items = schema.get("items")
        if connect_type == "map" and isinstance(value, Mapping) and isinstance(items, Mapping):
            entry = items.get("properties") or {}
            return [
                {
                    "key": datum_for_schema(k, entry.get("key"), f"{path}.{k}.key"),
                    "value": datum_for_schema(v, entry.get("value"), f"{path}.{k}.value"),
                }
                for k, v in value.items()
            ]
        if isinstance(value, list):
            return [datum_for_schema(v, items, f"{path}[{i}]") for i, v in enumerate(value)]
        return value
    if kind in ("integer", "number"):
        return _number_datum(value, schema, kind, path)
    if kind == "string" and not isinstance(value, str) and connect_type != "bytes":
        return values.json_text(value)
    return value


def _number_datum(value: Any, schema: Mapping[str, Any], kind: str, path: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float | decimal.Decimal | str):
        return value
    try:
        number = decimal.Decimal(value) if isinstance(value, str) else value
    except decimal.InvalidOperation:
        return value
    connect_type = schema.get("connect.type")
    if connect_type == "bytes":
        scale = int((schema.get("connect.parameters") or {}).get("scale", 0))
        return decimal.Decimal(str(number)).quantize(decimal.Decimal(1).scaleb(-scale))
    if kind == "integer" or connect_type in _INTEGERS:
        if isinstance(number, float | decimal.Decimal) and number != int(number):
            raise SerdeError(f"{json_value(value)} at {path} is not a whole number")
        return int(number)
    return float(number)


def plain_of_datum(datum: Any, schema: Any) -> Any:
    """A document read with ``schema`` in the form of case files: Connect's map entries as objects."""
    if datum is None:
        return None
    schema = non_null(schema)
    if not isinstance(schema, Mapping):
        return datum
    kind = _kind(schema)
    if kind == "array" and isinstance(datum, list):
        items = schema.get("items")
        if schema.get("connect.type") == "map" and isinstance(items, Mapping):
            entry = items.get("properties") or {}
            return {
                str(e.get("key")): plain_of_datum(e.get("value"), entry.get("value"))
                for e in datum
                if isinstance(e, Mapping)
            }
        return [plain_of_datum(v, items) for v in datum]
    if kind == "object" and isinstance(datum, Mapping):
        if "properties" in schema:
            properties = schema["properties"]
            return {k: plain_of_datum(v, properties.get(k)) for k, v in datum.items()}
        item = schema.get("additionalProperties")
        return {k: plain_of_datum(v, item) for k, v in datum.items()}
    return datum
