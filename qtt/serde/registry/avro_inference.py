"""ksqlDB's schema inference from Avro: a registered Avro schema's types as SQL types.

As Kafka Connect's ``AvroData.toConnectSchema`` reads the schema and ksqlDB's
``ConnectKsqlSchemaTranslator`` types it: field names upper-cased (kept where a schema id names
the schema), a union with null its other member, a wider union a STRUCT of its members, an
array of Connect's map entries a MAP, and a field of a type ksqlDB has no SQL type for left out.
A type given by name is first replaced by its definition (:func:`inline_named`), as Avro's
parser resolves it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.serde.excerpt import excerpt, json_value
from qtt.serde.registry.registry_format import IncompatibleSchema

#: Avro's primitive type names: any other name a schema gives as a type refers to a named type
_PRIMITIVES = frozenset(["null", "boolean", "int", "long", "float", "double", "bytes", "string"])


def inline_named(schema: Any) -> Any:
    """``schema`` with each reference to a named type (a record, enum or fixed defined before it)
    replaced by that definition, as Avro's parser resolves names before Kafka Connect's
    ``AvroData`` reads the schema: a Debezium envelope defines its row record in ``before`` and
    names it in ``after``. A name is looked up qualified by the enclosing namespace, then as it
    is; a type that refers to itself keeps its name (it has no SQL type).
    """
    defined: dict[str, Any] = {}

    def walk(node: Any, namespace: str) -> Any:
        if isinstance(node, list):
            return [walk(member, namespace) for member in node]
        if isinstance(node, str):
            if node in _PRIMITIVES:
                return node
            qualified = node if "." in node or not namespace else f"{namespace}.{node}"
            return defined.get(qualified, defined.get(node, node))
        if not isinstance(node, Mapping):
            return node
        kind = node.get("type")
        out = dict(node)
        raw_name = node.get("name")
        name = raw_name if kind in ("record", "error", "enum", "fixed") and isinstance(raw_name, str) else None
        named = name is not None
        inner = namespace
        if name is not None:
            own = node.get("namespace")
            inner = name.rpartition(".")[0] if "." in name else own if isinstance(own, str) else namespace
        if kind in ("record", "error") and isinstance(node.get("fields"), list):
            out["fields"] = [
                {**f, "type": walk(f["type"], inner)} if isinstance(f, Mapping) and "type" in f else f
                for f in node["fields"]
            ]
        elif kind == "array" and "items" in node:
            out["items"] = walk(node["items"], namespace)
        elif kind == "map" and "values" in node:
            out["values"] = walk(node["values"], namespace)
        elif isinstance(kind, (list, dict)) or (isinstance(kind, str) and kind not in _PRIMITIVES and not named):
            out["type"] = walk(kind, namespace)
        if name is not None:
            defined[name if "." in name or not inner else f"{inner}.{name}"] = out
        return out

    return walk(schema, "")


def sql_type_of(schema: Any, path: str = "$", *, upper: bool = True) -> t.SqlType:
    """The SQL type ksqlDB infers for an Avro type: its record fields' names upper-cased, or as
    they are (``upper=False``) where a schema id names the schema.

    Raises:
        StatementError: the type has no SQL type, or is not a valid Avro schema (a record without
            ``fields``, an array without ``items`` ...), naming where in the schema (``path``).
    """
    if isinstance(schema, list):
        members = [(m, f"{path}[{i}]") for i, m in enumerate(schema) if m != "null"]
        if len(members) == 1:
            return sql_type_of(*members[0], upper=upper)
        members_ = ((_union_field_name(m, where), sql_type_of(m, where, upper=upper)) for m, where in members)
        return t.Struct(tuple(t.Field(name, type_) for name, type_ in members_))
    if isinstance(schema, str):
        return _sql_primitive(schema, path)
    if not isinstance(schema, Mapping):
        raise _invalid(path, f"a type name, a union or a type object, got {json_value(schema)}")
    kind = schema.get("type")
    logical = _logical_type(schema)
    if logical is not None:
        return logical
    # Connect names the schema after "connect.name", and ksqlDB types Connect's date, time and
    # timestamp names by their name alone (ConnectKsqlSchemaTranslator)
    connect_name = schema.get("connect.name")
    connect_type = (
        _CONNECT_NAMED.get((kind, connect_name)) if isinstance(kind, str) and isinstance(connect_name, str) else None
    )
    if connect_type is not None:
        return connect_type
    if kind == "record":
        return t.Struct(tuple(t.Field(name, type_) for name, type_ in record_columns(schema, path, upper=upper)))
    if kind == "array":
        items = _member(schema, "items", "array", path)
        if _is_connect_map_entry(items):
            return _entries_map(items, f"{path}.items", upper=upper)
        return t.Array(sql_type_of(items, f"{path}.items", upper=upper))
    if kind == "map":
        return t.Map(t.STRING, sql_type_of(_member(schema, "values", "map", path), f"{path}.values", upper=upper))
    if kind == "enum":
        return t.STRING
    if kind == "fixed":
        return t.BYTES
    if isinstance(kind, (str, list, dict)):
        return sql_type_of(kind, f"{path}.type", upper=upper)
    if kind is None:
        raise StatementError(f'{INVALID} at {path}: a type object needs "type", and this one has none')
    msg = f"Avro type {json_value(kind)} at {path}.type has no SQL type"
    raise StatementError(msg)


def _logical_type(schema: Mapping[str, Any]) -> t.SqlType | None:
    """The SQL type of a logical type as Connect's ``AvroData.toConnectSchema`` reads it: its
    name in any case, and only on its own base type (a ``date`` on a long is a plain long).
    Connect knows only the millis logical types: a micros one is a plain long.

    Raises:
        IncompatibleSchema: a decimal without a numeric scale, or with a precision that is no
            number (Connect's refusals, scale first).
    """
    kind = schema.get("type")
    logical = schema.get("logicalType")
    name = logical.lower() if isinstance(logical, str) else None
    if name == "decimal" and kind in ("bytes", "fixed"):
        scale = schema.get("scale")
        if isinstance(scale, bool) or not isinstance(scale, int | float):
            raise IncompatibleSchema("scale must be specified and must be a number.")
        precision = schema.get("precision", 64)
        if isinstance(precision, bool) or not isinstance(precision, int | float):
            msg = "precision property must be a JSON Integer. https://avro.apache.org/docs/1.9.1/spec.html#Decimal"
            raise IncompatibleSchema(msg)
        return t.Decimal(int(precision), int(scale))
    return _LOGICAL.get((kind, name)) if name is not None and isinstance(kind, str) else None


#: (Avro type, logical type in lower case) -> its SQL type, for Connect's other logical types
_LOGICAL: dict[tuple[str, str], t.SqlType] = {
    ("int", "date"): t.DATE,
    ("int", "time-millis"): t.TIME,
    ("long", "timestamp-millis"): t.TIMESTAMP,
}


#: (Avro type, ``connect.name``) -> the SQL type ksqlDB gives Connect's schema of that name
_CONNECT_NAMED: dict[tuple[Any, Any], t.SqlType] = {
    ("int", "org.apache.kafka.connect.data.Date"): t.DATE,
    ("int", "org.apache.kafka.connect.data.Time"): t.TIME,
    ("long", "org.apache.kafka.connect.data.Timestamp"): t.TIMESTAMP,
}


class _UnsupportedType(StatementError):
    """A type ksqlDB's ``ConnectKsqlSchemaTranslator`` has no SQL type for: the record field
    holding it is left out of the inferred columns (ksqlDB logs it)."""


#: the map key types ksqlDB's ConnectKsqlSchemaTranslator takes (Connect's int8 to int64,
#: boolean, string; DATE, TIME and TIMESTAMP are int32 and int64 to Connect); all read as STRING
_MAP_KEY_BASES = frozenset(["INTEGER", "BIGINT", "BOOLEAN", "STRING", "DATE", "TIME", "TIMESTAMP"])


def record_columns(schema: Mapping[str, Any], path: str = "$", *, upper: bool = True) -> list[tuple[str, t.SqlType]]:
    """A record's fields as SQL columns, names upper-cased unless ``upper`` is false, without the
    fields whose type ksqlDB cannot take.

    Raises:
        IncompatibleSchema: no field is left (ksqlDB's message).
        StatementError: the schema is not valid.
    """
    columns = []
    for name, type_, at in record_fields(schema, path):
        try:
            columns.append((name.upper() if upper else name, sql_type_of(type_, at, upper=upper)))
        except _UnsupportedType:
            continue
    if not columns and path == "$":
        # ConnectKsqlSchemaTranslator.toKsqlSchema, inside the schema translation ksqlDB reports
        # as a schema it cannot verify
        raise IncompatibleSchema("Schema does not include any columns with types that ksqlDB supports.")
    return columns


def _is_connect_map_entry(items: Any) -> bool:
    """Kafka Connect's ``AvroData.isMapEntry``: a record marked ``connect.internal.type: MapEntry``
    or named ``io.confluent.connect.avro.MapEntry`` (a union of one is no entry)."""
    if not isinstance(items, Mapping) or items.get("type") != "record":
        return False
    if items.get("connect.internal.type") == "MapEntry":
        return True
    name = str(items.get("name", ""))
    full_name = name if "." in name else f"{items.get('namespace', '')}.{name}"
    return full_name == "io.confluent.connect.avro.MapEntry"


def _entries_map(entry: Mapping[str, Any], path: str, *, upper: bool) -> t.SqlType:
    """The MAP Kafka Connect reads from an array of key-value records, as ksqlDB types it."""
    fields = {name: (type_, at) for name, type_, at in record_fields(entry, path)}
    if len(fields) != 2 or "key" not in fields or "value" not in fields:
        msg = "Found map encoded as array of key-value pairs, but array elements do not match the expected format."
        raise StatementError(msg)
    key = sql_type_of(*fields["key"], upper=upper)
    if key.base not in _MAP_KEY_BASES:
        raise _UnsupportedType(f"Unsupported type for map key: {key}")
    return t.Map(t.STRING, sql_type_of(*fields["value"], upper=upper))


def record_fields(schema: Mapping[str, Any], path: str = "$") -> list[tuple[str, Any, str]]:
    """A record schema's fields as (name, type, path of the type).

    Raises:
        StatementError: the record has no ``fields`` array, or a field is not an object with a
            ``name`` and a ``type`` (Avro's parser rejects such a schema: ``Record has no fields``).
    """
    fields = _member(schema, "fields", "record", path)
    if not isinstance(fields, list):
        raise _invalid(f"{path}.fields", f"an array of fields, got {json_value(fields)}")
    out = []
    for index, field in enumerate(fields):
        where = f"{path}.fields[{index}]"
        if not isinstance(field, Mapping) or not isinstance(field.get("name"), str) or "type" not in field:
            raise _invalid(where, f'a field object with a "name" and a "type", got {json_value(field)}')
        out.append((field["name"], field["type"], f"{where}.type"))
    return out


def _member(schema: Mapping[str, Any], key: str, kind: str, path: str) -> Any:
    if key not in schema:
        msg = f'{INVALID} at {path}: an Avro {kind} needs "{key}", and this one has none'
        raise StatementError(msg)
    return schema[key]


#: how the message of a schema Avro's parser would reject begins
INVALID = "Invalid Avro schema"


def _invalid(path: str, expected: str) -> StatementError:
    return StatementError(f"{INVALID} at {path}: expected {expected}")


def _sql_primitive(name: str, path: str) -> t.SqlType:
    found = {
        "boolean": t.BOOLEAN,
        "int": t.INTEGER,
        "long": t.BIGINT,
        "float": t.DOUBLE,
        "double": t.DOUBLE,
        "string": t.STRING,
        "bytes": t.BYTES,
    }.get(name)
    if name == "null":
        # AvroData.toConnectSchema: null is only a member of a union
        raise IncompatibleSchema("Standalone null schemas are not supported by this converter")
    if found is None:
        msg = f"Avro type {excerpt(repr(name))} at {path} has no SQL type"
        raise StatementError(msg)
    return found


def _union_field_name(member: Any, path: str) -> str:
    """Connect's name for a union member's field (``io.confluent.connect.avro.Union``)."""
    if isinstance(member, str):
        return member.upper()
    if not isinstance(member, Mapping):
        raise _invalid(path, f"a type name or a type object as a union member, got {json_value(member)}")
    name = member.get("name") or member.get("type")
    return excerpt(str(name)).rpartition(".")[2].upper()
