"""The JSON format, with ksqlDB's wrapping rules and lenient type coercion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import SerdeError
from qtt.serde import values
from qtt.serde.formats import (
    UNWRAP_SINGLE_VALUE,
    WRAP_SINGLE_VALUE,
    Deserializer,
    Format,
    Row,
    SerdeColumn,
    Serializer,
    register,
)

ALL_TYPES = frozenset(
    ["BOOLEAN", "INTEGER", "BIGINT", "DOUBLE", "DECIMAL", "STRING", "BYTES", "DATE", "TIME",
     "TIMESTAMP", "ARRAY", "MAP", "STRUCT"]
)


def is_wrapped(columns: Sequence[SerdeColumn], *, is_key: bool, features: frozenset[str]) -> bool:
    """Whether a single column is written as an object (``{"COL": v}``) or bare (``v``).

    ksqlDB wraps single values unless told not to, and leaves single keys bare.
    """
    if len(columns) != 1:
        return True
    if is_key:
        return False
    if UNWRAP_SINGLE_VALUE in features:
        return False
    return WRAP_SINGLE_VALUE in features or not features & {UNWRAP_SINGLE_VALUE}


class JsonFormat(Format):
    name: ClassVar[str] = "JSON"
    supported_types: ClassVar[frozenset[str]] = ALL_TYPES
    supports_wrapping: ClassVar[bool] = True
    supports_unwrapping: ClassVar[bool] = True

    def validate(self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Mapping[str, str]) -> None:
        super().validate(columns, is_key=is_key, properties=properties)
        for column in columns:
            if _has_non_string_map_key(column.type):
                msg = f"{self.name} only supports MAP types with STRING keys"
                from qtt.errors import StatementError

                raise StatementError(msg)

    def serializer(self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Mapping[str, str],
                   features: frozenset[str]) -> Serializer:
        wrapped = is_wrapped(columns, is_key=is_key, features=features)

        def serialize(row: Row | None) -> bytes | None:
            if row is None:
                return None
            if wrapped:
                doc: Any = {c.name: values.to_json(v, c.type) for c, v in zip(columns, row, strict=True)}
            else:
                doc = values.to_json(row[0], columns[0].type)
            return values.dumps(doc).encode("utf-8")

        return serialize

    def deserializer(self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Mapping[str, str],
                     features: frozenset[str]) -> Deserializer:
        wrapped = is_wrapped(columns, is_key=is_key, features=features)

        def deserialize(data: bytes | None) -> Row | None:
            if data is None:
                return None
            try:
                doc = values.loads(data)
            except ValueError as e:
                raise SerdeError(f"Failed to deserialize {'key' if is_key else 'value'}: invalid JSON: {e}") from None
            if doc is None:
                return None
            if not wrapped:
                return (values.from_json(doc, columns[0].type),)
            if not isinstance(doc, dict):
                msg = (f"Failed to deserialize {'key' if is_key else 'value'}: expected a JSON object "
                       f"with fields {', '.join(c.name for c in columns)}, got {values.dumps(doc)}")
                raise SerdeError(msg)
            lookup = values.field_lookup(doc)
            return tuple(values.from_json(lookup.get(c.name.upper(), lookup.get(c.name)), c.type, c.name)
                         for c in columns)

        return deserialize

    def from_document(self, document: Any, columns: Sequence[SerdeColumn], *, is_key: bool,
                      properties: Mapping[str, str]) -> bytes | None:
        if document is None:
            return None
        return values.dumps(document).encode("utf-8")

    def to_document(self, data: bytes | None, columns: Sequence[SerdeColumn], *, is_key: bool,
                    properties: Mapping[str, str]) -> Any:
        if data is None:
            return None
        return values.loads(data)


def _has_non_string_map_key(type_: t.SqlType) -> bool:
    if isinstance(type_, t.Map):
        return type_.key != t.STRING or _has_non_string_map_key(type_.value)
    if isinstance(type_, t.Array):
        return _has_non_string_map_key(type_.element)
    if isinstance(type_, t.Struct):
        return any(_has_non_string_map_key(f.type) for f in type_.fields)
    return False


JSON = register(JsonFormat())
