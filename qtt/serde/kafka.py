"""The KAFKA format: one primitive, in Kafka's own serializers' byte layout."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import values
from qtt.serde.formats import Deserializer, Format, Row, SerdeColumn, Serializer, register

_LAYOUT = {
    "INTEGER": (">i", 4, "IntegerDeserializer"),
    "BIGINT": (">q", 8, "LongDeserializer"),
    "DOUBLE": (">d", 8, "DoubleDeserializer"),
}


def encode(value: Any, type_: t.SqlType) -> bytes | None:
    """Bytes for one primitive, as Kafka's serializers write it."""
    if value is None:
        return None
    base = type_.base
    if base in _LAYOUT:
        fmt = _LAYOUT[base][0]
        try:
            return struct.pack(fmt, float(value) if base == "DOUBLE" else int(value))
        except (struct.error, ValueError, TypeError) as e:
            raise SerdeError(f"cannot write {value!r} as KAFKA {base}: {e}") from None
    if base == "STRING":
        return str(value).encode("utf-8")
    if base == "BYTES":
        return bytes(value)
    raise SerdeError(f"The 'KAFKA' format does not support type '{base}'")


def decode(data: bytes | None, type_: t.SqlType) -> Any:
    """The primitive held in ``data``."""
    if data is None:
        return None
    base = type_.base
    if base in _LAYOUT:
        fmt, size, deserializer = _LAYOUT[base]
        if len(data) != size:
            raise SerdeError(f"Size of data received by {deserializer} is not {size}")
        return struct.unpack(fmt, data)[0]
    if base == "STRING":
        # Kafka's StringDeserializer never fails: malformed UTF-8 becomes U+FFFD
        return data.decode("utf-8", errors="replace")
    if base == "BYTES":
        return bytes(data)
    raise SerdeError(f"The 'KAFKA' format does not support type '{base}'")


class KafkaFormat(Format):
    name: ClassVar[str] = "KAFKA"
    supported_types: ClassVar[frozenset[str]] = frozenset(["INTEGER", "BIGINT", "DOUBLE", "STRING", "BYTES"])
    supports_multiple_columns: ClassVar[bool] = False
    supports_unwrapping: ClassVar[bool] = True

    def validate(self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Mapping[str, str]) -> None:
        super().validate(columns, is_key=is_key, properties=properties)
        if len(columns) > 1:
            suffix = " KEY" if is_key else ""
            shown = ", ".join(f"{t.quote(c.name)} {c.type}{suffix}" for c in columns)
            msg = f"The '{self.name}' format only supports a single field. Got: [{shown}]"
            raise StatementError(msg)

    def serializer(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str],
    ) -> Serializer:
        def serialize(row: Row | None) -> bytes | None:
            if row is None or not columns:
                return None
            return encode(row[0], columns[0].type)

        return serialize

    def deserializer(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str],
    ) -> Deserializer:
        def deserialize(data: bytes | None) -> Row | None:
            if data is None or not columns:
                return None
            return (decode(data, columns[0].type),)

        return deserialize

    def from_document(
        self,
        document: Any,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
    ) -> bytes | None:
        if document is None or not columns:
            return None
        return encode(values.from_json(document, columns[0].type), columns[0].type)

    def to_document(
        self,
        data: bytes | None,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
    ) -> Any:
        if data is None or not columns:
            return None
        return values.to_json(decode(data, columns[0].type), columns[0].type)


KAFKA = register(KafkaFormat())
