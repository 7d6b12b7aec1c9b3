"""Avro schemas as ksqlDB writes and reads them, and values between Avro and SQL.

Writing (:func:`avro_schema_for`) follows ksqlDB's ``AvroSchemas`` over Kafka Connect's
``AvroData``: the root is never optional; every field, array element and map value is
``["null", T]`` with a null default; a STRUCT is a record named after its path
(``<root>_<FIELD>``); logical types carry Connect's names. Schema inference (Avro types to
SQL types) is :mod:`.avro_inference`.

Values pass through a JSON-like middle form (:func:`avro_to_plain`), so that the SQL side
reuses :func:`qtt.serde.values.from_json`, ksqlDB's coercion rules, once the writer schema's
types are checked as ksqlDB's Connect translator checks them (:mod:`.connect_types`).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import values
from qtt.serde.excerpt import excerpt, json_value
from qtt.serde.interface import SerdeColumn
from qtt.serde.registry import connect_types

NAMESPACE = "io.confluent.ksql.avro_schemas"
DEFAULT_FULL_NAME = f"{NAMESPACE}.KsqlDataSourceSchema"

_PRIMITIVES = {
    "BOOLEAN": "boolean",
    "INTEGER": "int",
    "BIGINT": "long",
    "DOUBLE": "double",
    "STRING": "string",
    "BYTES": "bytes",
}
_LOGICAL = {
    "DATE": ("int", "date", "org.apache.kafka.connect.data.Date"),
    "TIME": ("int", "time-millis", "org.apache.kafka.connect.data.Time"),
    "TIMESTAMP": ("long", "timestamp-millis", "org.apache.kafka.connect.data.Timestamp"),
}


def key_schema_name(source_name: str) -> str:
    """ksqlDB's record name for an AVRO key: ``OUTPUT`` -> ``io.confluent.ksql.avro_schemas.OutputKey``."""
    camel = "".join(part[:1].upper() + part[1:].lower() for part in source_name.split("_"))
    return f"{NAMESPACE}.{camel}Key"


# ---- names: Avro's rules for the records and fields ksqlDB's schemas hold

#: how ksqlDB's ``AvroSchemas`` names a map's value schema in a path
_MAP_VALUE = "MapValue"


def check_avro_names(columns: Sequence[SerdeColumn], *, full_name: str, unwrapped: bool) -> None:
    """Reject the first record or field name Avro cannot hold (ksqlDB's message).

    ksqlDB's ``AvroSchemaTranslator`` hands its columns' schema to Kafka Connect's ``AvroData``,
    which builds each record (named after its path, ``<full name>_<FIELD>``) before its fields,
    and each field's type before the field itself; Avro refuses the first name that is not a
    letter or ``_`` followed by letters, digits or ``_`` (Java's ``Character`` classes, so any
    Unicode letter). A bare key or value is no record: its column's name is never written.

    Raises:
        StatementError: ``Schema is not compatible with Avro: Illegal ...``.
    """
    if unwrapped:
        _walk(columns[0].type, full_name)
        return
    _check_record(full_name)
    for column in columns:
        _field(column.name, column.type, full_name)


def _field(name: str, type_: t.SqlType, path: str) -> None:
    _walk(type_, f"{path}_{name}")
    _check(name.replace(".", "_"))  # ksqlDB's AvroSchemas writes a dot as an underscore


def _walk(type_: t.SqlType, path: str) -> None:
    if isinstance(type_, t.Struct):
        _check_record(path)
        for field in type_.fields:
            _field(field.name, field.type, path)
    elif isinstance(type_, t.Array):
        _walk(type_.element, path)
    elif isinstance(type_, t.Map):
        # ksqlDB's map keys are optional strings: Connect writes a map as a record of entries
        _check_record(path)
        _walk(type_.value, f"{path}_{_MAP_VALUE}")


def _check_record(full_name: str) -> None:
    """A record's name, the part after the last dot (Connect passes the rest as its namespace)."""
    _check(full_name.rpartition(".")[2])


def _check(name: str) -> None:
    problem = None
    if not name:
        problem = "Empty name"
    elif not (_is_letter(name[0]) or name[0] == "_"):
        problem = f"Illegal initial character: {name}"
    elif not all(_is_letter(c) or _is_digit(c) or c == "_" for c in name[1:]):
        problem = f"Illegal character in: {name}"
    if problem is not None:
        msg = f"Schema is not compatible with Avro: {problem}"
        raise StatementError(msg)


def _is_letter(char: str) -> bool:
    # Java's Character.isLetter(char): a letter category, one UTF-16 unit (no surrogate pairs)
    return ord(char) <= 0xFFFF and unicodedata.category(char) in ("Lu", "Ll", "Lt", "Lm", "Lo")


def _is_digit(char: str) -> bool:
    return ord(char) <= 0xFFFF and unicodedata.category(char) == "Nd"


def avro_schema_for(
    columns: Sequence[SerdeColumn], *, full_name: str, unwrapped: bool, map_entries: bool = False
) -> Any:
    """The Avro schema (JSON-ready) ksqlDB registers for these columns.

    With ``map_entries``, a MAP is what Kafka Connect's ``AvroData`` makes of ksqlDB's maps,
    whose keys are optional strings: an array of records named after the map's path, of an
    optional ``key`` and ``value`` (``connect.internal.type: MapEntry``). Without, qtt's first
    writer's Avro map.
    """
    if unwrapped:
        return _type_schema(columns[0].type, full_name, optional=False, map_entries=map_entries)
    return _record(full_name, [(c.name, c.type) for c in columns], map_entries=map_entries)


def _record(
    full_name: str, fields: Sequence[tuple[str, t.SqlType]], enclosing: str = "", *, map_entries: bool = False
) -> dict[str, Any]:
    namespace, _, name = full_name.rpartition(".")
    record: dict[str, Any] = {"type": "record", "name": name}
    if namespace != enclosing:
        # Avro writes a nested record's namespace only where it differs from its parent's
        record["namespace"] = namespace
    record["fields"] = [
        {
            "name": field_name.replace(".", "_"),
            "type": _type_schema(type_, f"{full_name}_{field_name}", enclosing=namespace, map_entries=map_entries),
            "default": None,
        }
        for field_name, type_ in fields
    ]
    record["connect.name"] = full_name
    return record


def _type_schema(
    type_: t.SqlType, path_name: str, *, optional: bool = True, enclosing: str = "", map_entries: bool = False
) -> Any:
    schema: Any
    base = type_.base
    if base in _PRIMITIVES:
        schema = _PRIMITIVES[base]
    elif base in _LOGICAL:
        avro_type, logical, connect_name = _LOGICAL[base]
        schema = {"type": avro_type, "connect.version": 1, "connect.name": connect_name, "logicalType": logical}
    elif isinstance(type_, t.Decimal):
        schema = {
            "type": "bytes",
            "scale": type_.scale,
            "precision": type_.precision,
            "connect.version": 1,
            "connect.parameters": {"scale": str(type_.scale), "connect.decimal.precision": str(type_.precision)},
            "connect.name": "org.apache.kafka.connect.data.Decimal",
            "logicalType": "decimal",
        }
    elif isinstance(type_, t.Array):
        items = _type_schema(type_.element, path_name, enclosing=enclosing, map_entries=map_entries)
        schema = {"type": "array", "items": items}
    elif isinstance(type_, t.Map) and map_entries:
        schema = _map_entries(type_, path_name, enclosing)
    elif isinstance(type_, t.Map):
        schema = {"type": "map", "values": _type_schema(type_.value, f"{path_name}_MapValue", enclosing=enclosing)}
    elif isinstance(type_, t.Struct):
        schema = _record(path_name, [(f.name, f.type) for f in type_.fields], enclosing, map_entries=map_entries)
    else:  # pragma: no cover - every SQL type is handled above
        raise StatementError(f"The 'AVRO' format does not support type '{base}'")
    return ["null", schema] if optional else schema


def _map_entries(type_: t.Map, path_name: str, enclosing: str) -> dict[str, Any]:
    namespace, _, name = path_name.rpartition(".")
    entry: dict[str, Any] = {"type": "record", "name": name}
    if namespace != enclosing:
        entry["namespace"] = namespace
    value = _type_schema(type_.value, f"{path_name}_MapValue", enclosing=namespace, map_entries=True)
    entry["fields"] = [
        {"name": "key", "type": _type_schema(type_.key, f"{path_name}_MapKey", enclosing=namespace), "default": None},
        {"name": "value", "type": value, "default": None},
    ]
    entry["connect.internal.type"] = "MapEntry"  # Connect names the array, not its entry record
    return {"type": "array", "items": entry, "connect.name": path_name}


# ---- values


def avro_to_plain(datum: Any) -> Any:
    """An Avro datum (as fastavro reads it) in the JSON-like form of case files.

    Bytes become base64 text, dates days, times and timestamps milliseconds; records stay
    mappings with their Avro field names.
    """
    if datum is None or isinstance(datum, bool | int | float | str | decimal.Decimal):
        return datum
    if isinstance(datum, bytes | bytearray):
        return base64.b64encode(bytes(datum)).decode("ascii")
    if isinstance(datum, dt.datetime):
        return values.timestamp_millis(datum)
    if isinstance(datum, dt.date):
        return (datum - values.EPOCH_DATE).days
    if isinstance(datum, dt.time):
        return values.time_millis(datum)
    if isinstance(datum, Mapping):
        return {str(k): avro_to_plain(v) for k, v in datum.items()}
    if isinstance(datum, list | tuple):
        return [avro_to_plain(v) for v in datum]
    return datum


def maps_from_entries(datum: Any, schema: Any) -> Any:
    """``datum`` with Kafka Connect's map entry arrays read back as maps, as Connect's AvroData does.

    A writer that is not ksqlDB (a case's registered schema, Connect's converter) writes a map
    whose keys may be null as an array of ``{"key": ..., "value": ...}`` records marked
    ``connect.internal.type: MapEntry``; ksqlDB reads the column as a MAP.
    """
    if datum is None:
        return None
    if isinstance(schema, list):
        for member in schema:
            if member != "null" and _holds(member, datum):
                return maps_from_entries(datum, member)
        return datum
    if not isinstance(schema, Mapping):
        return datum
    kind = schema.get("type")
    if isinstance(kind, Mapping | list):
        return maps_from_entries(datum, kind)
    if kind == "array" and isinstance(datum, list):
        items: Any = schema.get("items")
        if _is_map_entry(items):
            entry: Mapping[str, Any] = next(m for m in items if m != "null") if isinstance(items, list) else items
            types = {field["name"]: field["type"] for field in entry.get("fields", ())}
            return {e["key"]: maps_from_entries(e.get("value"), types.get("value")) for e in datum}
        return [maps_from_entries(v, items) for v in datum]
    if kind == "map" and isinstance(datum, Mapping):
        return {k: maps_from_entries(v, schema.get("values")) for k, v in datum.items()}
    if kind == "record" and isinstance(datum, Mapping):
        types = {field["name"]: field["type"] for field in schema.get("fields", ())}
        return {k: maps_from_entries(v, types.get(k)) for k, v in datum.items()}
    return datum


def _holds(schema: Any, datum: Any) -> bool:
    """Whether a union member could have read ``datum`` (by its container kind)."""
    kind = schema.get("type") if isinstance(schema, Mapping) else schema
    if kind in ("record", "map"):
        return isinstance(datum, Mapping)
    if kind == "array":
        return isinstance(datum, list)
    return not isinstance(datum, Mapping | list)


def row_from_datum(
    datum: Any, columns: Sequence[SerdeColumn], *, unwrapped: bool, target: str, writer: Any = None
) -> tuple[Any, ...]:
    """A row of SQL values from an Avro datum, with ksqlDB's coercion and case-insensitive fields.

    With its ``writer`` schema, the datum's types are first checked as ksqlDB's Connect
    translator checks them (:mod:`qtt.serde.registry.connect_types`).
    """
    plain = avro_to_plain(datum)
    try:
        if writer is not None:
            plain = connect_types.checked_plain(plain, writer, columns, unwrapped=unwrapped)
        return values.row_from_json(plain, columns, wrapped=not unwrapped)
    except SerdeError as e:
        msg = f"Failed to deserialize {target} as AVRO: {e.message}"
        raise SerdeError(msg) from None


#: the logical types whose datum is a whole number, on their own base types
_WHOLE_LOGICAL = frozenset(
    [
        ("int", "date"),
        ("int", "time-millis"),
        ("long", "timestamp-millis"),
        ("long", "time-micros"),
        ("long", "timestamp-micros"),
    ]
)


def datum_for_schema(value: Any, schema: Any, path: str = "$") -> Any:
    """A JSON-like value (a case file's document, or SQL values made plain) shaped for an Avro schema.

    Record fields are looked up by name, then case-insensitively; unions take their first
    member that fits; numbers and text convert as Avro's JSON encoding allows.
    """
    if isinstance(schema, list):
        if value is None:
            if "null" in schema:
                return None
            raise SerdeError(f"null where {path} must be one of {schema}")
        problems = []
        for member in schema:
            if member == "null":
                continue
            try:
                return datum_for_schema(value, member, path)
            except (SerdeError, ValueError, TypeError, KeyError) as e:
                problems.append(str(e))
        raise SerdeError(f"{json_value(value)} fits no member of the union at {path}: {'; '.join(problems)}")
    if isinstance(schema, str):
        return _primitive_datum(value, schema, path)
    kind = schema.get("type")
    logical = schema.get("logicalType")
    if value is None:
        if kind == "null":
            return None
        raise SerdeError(f"null where {path} must be {kind}")
    # a logical type on another base type than its own is no logical type (Avro, Connect)
    if logical == "decimal" and kind in ("bytes", "fixed"):
        return _decimal_datum(value, schema, path)
    if (kind, logical) in _WHOLE_LOGICAL:
        return int(value)
    if kind == "record":
        if not isinstance(value, Mapping):
            raise SerdeError(f"expected an object at {path}, got {json_value(value)}")
        upper = {str(k).upper(): v for k, v in value.items()}
        out = {}
        for field in schema.get("fields", []):
            name = field["name"]
            if name in value:
                item = value[name]
            elif name.upper() in upper:
                item = upper[name.upper()]
            else:
                item = None
            if item is None and "default" in field and not _takes_null(field["type"]):
                # a null where the schema cannot hold one takes the field's default, as ksqlDB writes it
                item = field["default"]
            out[name] = datum_for_schema(item, field["type"], f"{path}.{name}")
        return out
    if kind == "array":
        if isinstance(value, Mapping) and _is_map_entry(schema["items"]):
            # Kafka Connect writes a map whose keys Avro cannot hold as an array of entries
            value = [{"key": k, "value": v} for k, v in value.items()]
        if not isinstance(value, list):
            raise SerdeError(f"expected an array at {path}, got {json_value(value)}")
        return [datum_for_schema(v, schema["items"], f"{path}[{i}]") for i, v in enumerate(value)]
    if kind == "map":
        if not isinstance(value, Mapping):
            raise SerdeError(f"expected an object at {path}, got {json_value(value)}")
        return {str(k): datum_for_schema(v, schema["values"], f"{path}.{k}") for k, v in value.items()}
    if kind == "enum":
        return str(value)
    if kind == "fixed":
        return _primitive_datum(value, "bytes", path)
    if isinstance(kind, (str, list, dict)):
        return datum_for_schema(value, kind, path)
    raise SerdeError(f"unsupported Avro type {kind!r} at {path}")


def _is_map_entry(items: Any) -> bool:
    """Kafka Connect's map entry record (``connect.internal.type: MapEntry``)."""
    if isinstance(items, list):
        return any(_is_map_entry(member) for member in items if member != "null")
    return (
        isinstance(items, Mapping)
        and items.get("type") == "record"
        and items.get("connect.internal.type") == "MapEntry"
    )


def _decimal_datum(value: Any, schema: Mapping[str, Any], path: str) -> decimal.Decimal:
    """A value at the scale of a decimal schema, within its precision (as fastavro checks it)."""
    shown = excerpt(str(value)) if isinstance(value, int | float | decimal.Decimal) else json_value(value)
    number = _as_decimal(value)
    if number is None:
        raise SerdeError(f"cannot write {shown} as an Avro decimal at {path}")
    precision, scale = int(schema.get("precision", 0)), int(schema.get("scale", 0))
    msg = f"{shown} does not fit the Avro decimal({precision}, {scale}) at {path}"
    # checked before quantizing too: 1E+999999999 would be written out to a billion digits
    if not number.is_finite() or (precision and number.adjusted() >= precision - scale):
        raise SerdeError(msg)
    # quantize within the schema's precision, not Python's default 28 digits
    # (a schema without a precision, which Avro requires and ksqlDB's own tests hold once, bounds nothing)
    context = decimal.Context(prec=max(precision, number.adjusted() + 1 + max(scale, 0), 1) + 1)
    fitted = number.quantize(decimal.Decimal(1).scaleb(-scale), context=context)
    if precision and len(fitted.as_tuple().digits) > precision:  # rounded up past the precision
        raise SerdeError(msg)
    return fitted


def _as_decimal(value: Any) -> decimal.Decimal | None:
    if isinstance(value, decimal.Decimal):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return decimal.Decimal(str(value))
    except decimal.InvalidOperation:
        return None


def root_datum(value: Any, schema: Any) -> Any:
    """:func:`datum_for_schema` for a whole key or value.

    A schema whose root is ``bytes`` is written as the bytes themselves, not Avro-encoded:
    Confluent's serializers (Java's and Python's alike) write a bare ``bytes`` schema's payload
    as it is. A decimal's bytes are then its unscaled value, as Kafka Connect's
    ``Decimal.fromLogical`` gives them to ksqlDB's serializer.
    """
    datum = datum_for_schema(value, schema)
    if isinstance(datum, decimal.Decimal) and _bare_bytes(schema):
        return unscaled_bytes(datum, int(schema.get("scale", 0)))
    return datum


def root_value(datum: Any, schema: Any) -> Any:
    """A datum Confluent's deserializer returned, with a bare decimal's bytes read as its number."""
    if isinstance(datum, bytes | bytearray) and _bare_bytes(schema) and schema.get("logicalType") == "decimal":
        return decimal_of(bytes(datum), int(schema.get("scale", 0)))
    return datum


def _bare_bytes(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("type") == "bytes"


def unscaled_bytes(number: decimal.Decimal, scale: int) -> bytes:
    """``number``'s unscaled value at ``scale`` as Java's ``BigInteger.toByteArray()`` writes it:
    big-endian two's complement in the fewest bytes that keep the sign."""
    sign, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int) and exponent == -scale, "quantized to the schema's scale"
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    size = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
    return unscaled.to_bytes(size, "big", signed=True)


def decimal_of(data: bytes, scale: int) -> decimal.Decimal:
    """The decimal whose unscaled value ``data`` holds (``new BigInteger(bytes)``), at ``scale``.

    Raises:
        ValueError: no bytes, as Java's ``BigInteger`` rejects them.
    """
    if not data:
        msg = "Zero length BigInteger"
        raise ValueError(msg)
    return decimal.Decimal(int.from_bytes(data, "big", signed=True)).scaleb(-scale, decimal.Context(prec=len(data) * 3))


def _takes_null(schema: Any) -> bool:
    return schema == "null" or (isinstance(schema, list) and "null" in schema)


def _primitive_datum(value: Any, name: str, path: str) -> Any:
    if value is None:
        if name == "null":
            return None
        raise SerdeError(f"null where {path} must be {name}")
    if name == "boolean":
        if isinstance(value, bool):
            return value
    elif name in ("int", "long"):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, decimal.Decimal | float) and value == int(value):
            return int(value)
        if isinstance(value, str):
            return int(value)
    elif name in ("float", "double"):
        if isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool):
            return values.double_value(value)
        if isinstance(value, str):
            return float(value)
    elif name == "string":
        return value if isinstance(value, str) else values.json_text(value)
    elif name == "bytes":
        if isinstance(value, bytes | bytearray):
            return bytes(value)
        if isinstance(value, str):
            return base64.b64decode(value)
    elif name == "null":
        raise SerdeError(f"{json_value(value)} where {path} must be null")
    raise SerdeError(f"cannot write {json_value(value)} as Avro {name} at {path}")


def plain_row(row: Sequence[Any], columns: Sequence[SerdeColumn]) -> dict[str, Any]:
    """A row of SQL values as a JSON-like object keyed by column name."""
    return {c.name.replace(".", "_"): values.to_json(v, c.type) for c, v in zip(columns, row, strict=True)}
