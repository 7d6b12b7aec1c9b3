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
    [
        "BOOLEAN",
        "INTEGER",
        "BIGINT",
        "DOUBLE",
        "DECIMAL",
        "STRING",
        "BYTES",
        "DATE",
        "TIME",
        "TIMESTAMP",
        "ARRAY",
        "MAP",
        "STRUCT",
    ]
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

    def serializer(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str],
    ) -> Serializer:
        wrapped = is_wrapped(columns, is_key=is_key, features=features)

        def serialize(row: Row | None) -> bytes | None:
            if row is None:
                return None
            if wrapped:
                doc: Any = {c.name: values.to_json(v, c.type) for c, v in zip(columns, row, strict=True)}
            else:
                # an unwrapped null is a null record, as KsqlJsonSerializer writes it
                if row[0] is None:
                    return None
                doc = values.to_json(row[0], columns[0].type)
            return values.dumps(doc).encode("utf-8")

        return serialize

    def deserializer(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str],
    ) -> Deserializer:
        wrapped = is_wrapped(columns, is_key=is_key, features=features)
        target = "key" if is_key else "value"
        row_type = t.Struct(tuple(t.Field(c.name, c.type) for c in columns))

        def deserialize(data: bytes | None) -> Row | None:
            if data is None:
                return None
            try:
                doc = values.loads_strict(data)
            except ValueError as e:
                msg = f"Failed to deserialize {target}: invalid JSON: {e}"
                raise SerdeError(msg) from None
            if doc is None:
                return None
            try:
                if not wrapped:
                    return (values.from_json(doc, columns[0].type, "$"),)
                if not isinstance(doc, dict):
                    raise values.from_json_failure(doc, row_type, "$")
                upper = values.upper_case_keys(doc)
                return tuple(
                    values.from_json(values.field_value(doc, upper, c.name), c.type, f"$.{c.name}") for c in columns
                )
            except SerdeError as e:
                msg = f"Failed to deserialize {target}: {e.message}"
                raise SerdeError(msg) from None

        return deserialize

    def from_document(
        self,
        document: Any,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
    ) -> bytes | None:
        if document is None:
            return None
        return values.dumps(document).encode("utf-8")

    def to_document(
        self,
        data: bytes | None,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
    ) -> Any:
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
