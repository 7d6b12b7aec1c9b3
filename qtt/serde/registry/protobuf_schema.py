"""Protobuf schemas as ksqlDB writes and reads them.

Writing (:func:`proto_schema_for`) follows Kafka Connect's ``ProtobufData`` as ksqlDB uses it:
``syntax = "proto3"``, one message named ``ConnectDefault1`` (or the ``*_SCHEMA_FULL_NAME``),
fields numbered in column order, a STRUCT as a message nested in its parent
(``ConnectDefault2``, ...), DECIMAL as ``confluent.type.Decimal`` with its precision and scale
in ``confluent.field_meta``, DATE as ``google.type.Date``, TIME as ``google.type.TimeOfDay``,
TIMESTAMP as ``google.protobuf.Timestamp``. A nullable representation property makes fields
``optional`` (``OPTIONAL``) or wrapper messages (``WRAPPER``), so that null survives.

Reading (:func:`columns_of`) is ksqlDB's schema inference from a message descriptor.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.serde.interface import SerdeColumn

DEFAULT_MESSAGE = "ConnectDefault"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: ksqlDB's format properties for Protobuf
UNWRAP_PRIMITIVES = "unwrapPrimitives"
NULLABLE_REPRESENTATION = "nullableRepresentation"
NULLABLE_AS_OPTIONAL = "optional"
NULLABLE_AS_WRAPPER = "wrapper"

_SCALARS = {
    "BOOLEAN": "bool",
    "INTEGER": "int32",
    "BIGINT": "int64",
    "DOUBLE": "double",
    "STRING": "string",
    "BYTES": "bytes",
}
_WRAPPERS = {
    "BOOLEAN": "google.protobuf.BoolValue",
    "INTEGER": "google.protobuf.Int32Value",
    "BIGINT": "google.protobuf.Int64Value",
    "DOUBLE": "google.protobuf.DoubleValue",
    "STRING": "google.protobuf.StringValue",
    "BYTES": "google.protobuf.BytesValue",
}
_MESSAGES = {
    "DATE": ("google.type.Date", "google/type/date.proto"),
    "TIME": ("google.type.TimeOfDay", "google/type/timeofday.proto"),
    "TIMESTAMP": ("google.protobuf.Timestamp", "google/protobuf/timestamp.proto"),
}
DECIMAL_TYPE = "confluent.type.Decimal"
#: the writer version (``FormatInfo.writer_version``) that writes a MAP as ksqlDB does, as
#: Connect's repeated entry messages; the first writer wrote a protobuf ``map`` field
MAP_ENTRIES_WRITER = 2
WRAPPERS_FILE = "google/protobuf/wrappers.proto"


def bad_name(columns: Sequence[SerdeColumn]) -> str | None:
    """The first column or field name that is not a Protobuf identifier, if any."""

    def walk(type_: t.SqlType) -> str | None:
        if isinstance(type_, t.Struct):
            for field in type_.fields:
                found = field.name if not _IDENTIFIER.fullmatch(field.name) else walk(field.type)
                if found:
                    return found
        elif isinstance(type_, t.Array):
            return walk(type_.element)
        elif isinstance(type_, t.Map):
            return walk(type_.value)
        return None

    for column in columns:
        found = column.name if not _IDENTIFIER.fullmatch(column.name) else walk(column.type)
        if found:
            return found
    return None


def unsupported_reason(type_: t.SqlType, *, top: bool = True) -> str | None:
    """Why Protobuf cannot hold ``type_``, in ksqlDB's words, or None."""
    if isinstance(type_, t.Map):
        if type_.key != t.STRING:
            return "PROTOBUF format only supports MAP types with STRING keys. See https://github.com/confluentinc/ksql/issues/6177."
        if isinstance(type_.value, t.Array | t.Map):
            return "Protobuf does not support a MAP whose values are ARRAYs or MAPs"
        return unsupported_reason(type_.value, top=False)
    if isinstance(type_, t.Array):
        if isinstance(type_.element, t.Array):
            # Kafka Connect's ProtobufData words, as the CREATE's schema registration meets them
            return "Array cannot be nested"
        if isinstance(type_.element, t.Map):
            return "Protobuf does not support an ARRAY of ARRAYs or MAPs"
        return unsupported_reason(type_.element, top=False)
    if isinstance(type_, t.Struct):
        for field in type_.fields:
            found = unsupported_reason(field.type, top=False)
            if found:
                return found
    return None


class _Writer:
    """Builds one schema text: messages numbered depth-first, imports collected on the way."""

    def __init__(self, nullable: str | None, *, map_entries: bool = False) -> None:
        self.nullable = nullable
        self.map_entries = map_entries
        self.counter = 0
        self.imports: set[str] = set()

    def message(self, name: str, fields: Sequence[tuple[str, t.SqlType]], indent: str) -> list[str]:
        lines = [f"{indent}message {name} {{"]
        nested: list[list[str]] = []
        for number, (field_name, type_) in enumerate(fields, start=1):
            declared, options = self.field_type(type_, nested, indent + "  ")
            lines.append(f"{indent}  {declared} {field_name} = {number}{options};")
        for block in nested:
            lines.append("")
            lines.extend(block)
        lines.append(f"{indent}}}")
        return lines

    def field_type(self, type_: t.SqlType, nested: list[list[str]], indent: str) -> tuple[str, str]:
        if isinstance(type_, t.Array):
            # Connect's ProtobufData types the (optional) element as a field: a wrapper under WRAPPER
            element, options = self.value_type(type_.element, nested, indent, wrap=True)
            return f"repeated {element}", options
        if isinstance(type_, t.Map) and self.map_entries:
            return f"repeated {self.entry(type_, nested, indent)}", ""
        if isinstance(type_, t.Map):
            # the first writer: a protobuf map, its entry message neither written nor numbered
            value, options = self.value_type(type_.value, nested, indent, wrap=False)
            return f"map<string, {value}>", options
        declared, options = self.value_type(type_, nested, indent, wrap=True)
        if self.nullable not in (None, NULLABLE_AS_WRAPPER):
            # OPTIONAL labels every singular field, message-typed ones too (ProtobufData)
            declared = f"optional {declared}"
        return declared, options

    def entry(self, type_: t.Map, nested: list[list[str]], indent: str) -> str:
        """Kafka Connect's ``ProtobufData`` writes a map as repeated ``ConnectDefault<n>Entry``
        messages of a ``key`` and a ``value``, the entry numbered like a nested message (in
        depth-first order) and nested in the message whose field it is; the same bytes as a
        protobuf ``map`` field."""
        self.counter += 1
        name = f"{DEFAULT_MESSAGE}{self.counter}Entry"
        inner: list[list[str]] = []
        value, options = self.value_type(type_.value, inner, indent + "  ", wrap=False)
        lines = [f"{indent}message {name} {{", f"{indent}  string key = 1;", f"{indent}  {value} value = 2{options};"]
        for block in inner:
            lines.append("")
            lines.extend(block)
        nested.append([*lines, f"{indent}}}"])
        return name

    def value_type(self, type_: t.SqlType, nested: list[list[str]], indent: str, *, wrap: bool) -> tuple[str, str]:
        base = type_.base
        if base in _SCALARS:
            if wrap and self.nullable == NULLABLE_AS_WRAPPER:
                self.imports.add(WRAPPERS_FILE)
                return _WRAPPERS[base], ""
            return _SCALARS[base], ""
        if base in _MESSAGES:
            name, file = _MESSAGES[base]
            self.imports.add(file)
            return name, ""
        if isinstance(type_, t.Decimal):
            self.imports.update(["confluent/meta.proto", "confluent/type/decimal.proto"])
            params = f'{{ key: "precision", value: "{type_.precision}" }}, {{ key: "scale", value: "{type_.scale}" }}'
            options = f" [(confluent.field_meta) = {{ params: [{params}] }}]"
            return DECIMAL_TYPE, options
        if isinstance(type_, t.Struct):
            self.counter += 1
            name = f"{DEFAULT_MESSAGE}{self.counter}"
            nested.append(self.message(name, [(f.name, f.type) for f in type_.fields], indent))
            return name, ""
        msg = f"The 'PROTOBUF' format does not support type '{base}'"
        raise StatementError(msg)


def schema_full_name(full_name: str | None) -> str | None:
    """The full name ksqlDB's ``ProtobufSchemaTranslator`` uses: trimmed, and none at all when
    empty or a Connect default name (``ConnectDefault...``), which it ignores."""
    trimmed = (full_name or "").strip()
    return None if not trimmed or trimmed.startswith(DEFAULT_MESSAGE) else trimmed


def proto_schema_for(
    columns: Sequence[SerdeColumn],
    *,
    full_name: str | None = None,
    nullable: str | None = None,
    map_entries: bool = False,
) -> str:
    """The ``.proto`` text ksqlDB registers for these columns; ``map_entries``: a MAP as Connect's
    entry messages, as ksqlDB writes it (:data:`MAP_ENTRIES_WRITER`), else as a protobuf map."""
    writer = _Writer(nullable, map_entries=map_entries)
    full_name = schema_full_name(full_name)
    package, _, name = (full_name or "").rpartition(".")
    # Connect's ProtobufData numbers only the messages it names itself: under a full name, the
    # first nested message is ConnectDefault1
    writer.counter = 0 if full_name else 1
    body = writer.message(name or f"{DEFAULT_MESSAGE}1", [(c.name, c.type) for c in columns], "")
    head = ['syntax = "proto3";']
    if package:
        head.append(f"package {package};")
    head.append("")
    if writer.imports:
        head.extend(f'import "{file}";' for file in sorted(writer.imports))
        head.append("")
    return "\n".join([*head, *body]) + "\n"


# ---- inference: descriptors -> SQL types


def columns_of(descriptor: Any, *, upper: bool = True) -> list[tuple[str, t.SqlType]]:
    """A message's fields as (name, SQL type), as ksqlDB infers columns from it: names
    upper-cased, except where a schema id names the schema (ksqlDB keeps its names then)."""
    return [(_named(field.name, upper), sql_type_of(field, upper=upper)) for field in descriptor.fields]


def _named(name: str, upper: bool) -> str:
    return name.upper() if upper else name


def sql_type_of(field: Any, *, upper: bool = True) -> t.SqlType:
    """The SQL type ksqlDB infers for a field (repeated and map fields included)."""
    if _is_map(field):
        entry = field.message_type
        key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
        return t.Map(_single_type(key, upper), _single_type(value, upper))
    single = _single_type(field, upper)
    return t.Array(single) if _is_repeated(field) else single


def _is_repeated(field: Any) -> bool:
    return bool(field.is_repeated)


def _is_map(field: Any) -> bool:
    message = field.message_type
    return _is_repeated(field) and message is not None and message.GetOptions().map_entry


def _single_type(field: Any, upper: bool) -> t.SqlType:
    kind = field.type
    if kind == field.TYPE_MESSAGE:
        return _message_type(field.message_type, field, upper)
    if kind == field.TYPE_ENUM:
        return t.STRING
    found = _PROTO_SCALARS.get(kind)
    if found is None:
        msg = f"Protobuf type {kind} of field {field.name} has no SQL type"
        raise StatementError(msg)
    return found


def _message_type(message: Any, field: Any, upper: bool) -> t.SqlType:
    name = message.full_name
    if name == DECIMAL_TYPE:
        params = decimal_params(field)
        return t.Decimal(params[0], params[1])
    if name == "google.type.Date":
        return t.DATE
    if name == "google.type.TimeOfDay":
        return t.TIME
    if name == "google.protobuf.Timestamp":
        return t.TIMESTAMP
    if name in WRAPPER_TYPES:
        return WRAPPER_TYPES[name]
    return t.Struct(tuple(t.Field(_named(f.name, upper), sql_type_of(f, upper=upper)) for f in message.fields))


def decimal_params(field: Any) -> tuple[int, int]:
    """A ``confluent.type.Decimal`` field's (precision, scale) from its ``confluent.field_meta``."""
    from confluent_kafka.schema_registry.confluent import meta_pb2

    params: dict[str, str] = {}
    options = field.GetOptions()
    extension = meta_pb2.field_meta  # type: ignore[attr-defined]
    if options.HasExtension(extension):
        params = dict(options.Extensions[extension].params)
    return int(params.get("precision", 64)), int(params.get("scale", 0))


def _scalars() -> dict[int, t.SqlType]:
    from google.protobuf.descriptor import FieldDescriptor as F

    return {
        F.TYPE_BOOL: t.BOOLEAN,
        F.TYPE_INT32: t.INTEGER,
        F.TYPE_SINT32: t.INTEGER,
        F.TYPE_SFIXED32: t.INTEGER,
        F.TYPE_UINT32: t.BIGINT,
        F.TYPE_FIXED32: t.BIGINT,
        F.TYPE_INT64: t.BIGINT,
        F.TYPE_SINT64: t.BIGINT,
        F.TYPE_SFIXED64: t.BIGINT,
        F.TYPE_UINT64: t.BIGINT,
        F.TYPE_FIXED64: t.BIGINT,
        F.TYPE_FLOAT: t.DOUBLE,
        F.TYPE_DOUBLE: t.DOUBLE,
        F.TYPE_STRING: t.STRING,
        F.TYPE_BYTES: t.BYTES,
    }


_PROTO_SCALARS = _scalars()
WRAPPER_TYPES = {
    "google.protobuf.BoolValue": t.BOOLEAN,
    "google.protobuf.Int32Value": t.INTEGER,
    "google.protobuf.UInt32Value": t.BIGINT,
    "google.protobuf.Int64Value": t.BIGINT,
    "google.protobuf.UInt64Value": t.BIGINT,
    "google.protobuf.FloatValue": t.DOUBLE,
    "google.protobuf.DoubleValue": t.DOUBLE,
    "google.protobuf.StringValue": t.STRING,
    "google.protobuf.BytesValue": t.BYTES,
}
