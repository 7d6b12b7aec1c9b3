"""The KAFKA format: one primitive, in Kafka's own serializers' byte layout."""

from __future__ import annotations

import struct
from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import values
from qtt.serde.excerpt import json_value
from qtt.serde.interface import Format, Layout, RowReader, RowWriter, text_of

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
            return struct.pack(fmt, values.double_value(value) if base == "DOUBLE" else int(value))
        except (struct.error, ValueError, TypeError, OverflowError) as e:
            raise SerdeError(f"cannot write {json_value(value)} as KAFKA {base}: {e}") from None
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
        return text_of(data)
    if base == "BYTES":
        return bytes(data)
    raise SerdeError(f"The 'KAFKA' format does not support type '{base}'")


class KafkaFormat(Format):
    """KAFKA: a single primitive column; a key or value without columns is never written."""

    name: ClassVar[str] = "KAFKA"
    supported_types: ClassVar[frozenset[str]] = frozenset(["INTEGER", "BIGINT", "DOUBLE", "STRING", "BYTES"])
    supports_unwrapping: ClassVar[bool] = True

    def check(self, layout: Layout) -> None:
        # KafkaSerdeFactory.createSerde counts the columns before it looks at their types
        if len(layout.columns) > 1:
            msg = f"The '{self.name}' format only supports a single field. Got: [{layout.shown_columns()}]"
            raise StatementError(msg)
        super().check(layout)

    def row_writer(self, layout: Layout) -> RowWriter:
        if not layout.columns:
            return lambda row: None
        type_ = layout.columns[0].type
        return lambda row: encode(row[0], type_)

    def row_reader(self, layout: Layout) -> RowReader:
        if not layout.columns:
            return lambda data: None
        type_ = layout.columns[0].type
        return lambda data: (_decode_as(data, type_, layout),)

    def write_document(self, document: Any, layout: Layout) -> bytes | None:
        if not layout.columns:
            return None
        type_ = layout.columns[0].type
        return encode(values.from_json(document, type_), type_)

    def read_document(self, data: bytes, layout: Layout) -> Any:
        if not layout.columns:
            return None
        type_ = layout.columns[0].type
        return values.to_json(_decode_as(data, type_, layout), type_)


def _decode_as(data: bytes, type_: t.SqlType, layout: Layout) -> Any:
    """:func:`decode`, with errors that name the format and the side of the record."""
    try:
        return decode(data, type_)
    except SerdeError as e:
        msg = f"Failed to deserialize {'key' if layout.is_key else 'value'} as KAFKA {type_.base}: {e.message}"
        raise SerdeError(msg) from None
