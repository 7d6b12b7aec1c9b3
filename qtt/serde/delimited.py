"""The DELIMITED format: one CSV line, parsed with Python's ``csv`` and quoted like
Apache Commons CSV's MINIMAL mode, which ksqlDB uses."""

from __future__ import annotations

import base64
import csv
import decimal
import io
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import values
from qtt.serde.formats import Deserializer, Format, Row, SerdeColumn, Serializer, register

_NAMED_DELIMITERS = {"TAB": "\t", "SPACE": " "}


def parse_delimiter(value: str) -> str:
    """The delimiter character for a ``VALUE_DELIMITER`` property value.

    Raises:
        StatementError: with ksqlDB's message for an empty, blank or multi-character value.
    """
    if value.upper() in _NAMED_DELIMITERS:
        return _NAMED_DELIMITERS[value.upper()]
    if value.strip() == "":
        msg = ("Failed to prepare statement: Configuration VALUE_DELIMITER is invalid: Delimiter cannot be "
               "empty, if you meant to have a tab or space for delimiter, please use the special values "
               "'TAB' or 'SPACE'")
        raise StatementError(msg)
    if len(value) != 1:
        msg = (f"Failed to prepare statement: Configuration VALUE_DELIMITER is invalid: Invalid delimiter "
               f"value: '{value}'. Delimiter must be a single character or TAB,SPACE")
        raise StatementError(msg)
    return value


def _needs_quotes(text: str, delimiter: str) -> bool:
    # Commons CSV, QuoteMode.MINIMAL: special characters anywhere, a first character at or
    # below '#', or trailing whitespace.
    if text == "":
        return False
    if text[0] <= "#":
        return True
    if any(c in text for c in (delimiter, '"', "\r", "\n")):
        return True
    return text[-1] <= " "


def _format_field(value: Any, type_: t.SqlType) -> str | None:
    if value is None:
        return None
    base = type_.base
    if base == "DOUBLE":
        return values.java_double(float(value))
    if base == "DECIMAL":
        return values.java_decimal(value)
    if base == "BOOLEAN":
        return "true" if value else "false"
    if base == "BYTES":
        return base64.b64encode(bytes(value)).decode("ascii")
    if base in ("TIMESTAMP", "DATE", "TIME"):
        return str(values.to_json(value, type_))
    return str(value)


def _parse_field(text: str, column: SerdeColumn) -> Any:
    if text == "":
        return None
    base = column.type.base
    try:
        if base in ("INTEGER", "BIGINT"):
            return values.from_json(int(text.strip()), column.type, column.name)
        if base == "DOUBLE":
            return float(text)
        if base == "DECIMAL":
            assert isinstance(column.type, t.Decimal)
            return values.fit_decimal(decimal.Decimal(text.strip()), column.type, column.name)
        if base == "BOOLEAN":
            return values.from_json(text.strip(), column.type, column.name)
        if base == "BYTES":
            return base64.b64decode(text, validate=True)
        if base in ("TIMESTAMP", "DATE", "TIME"):
            return values.from_json(int(text.strip()), column.type, column.name)
    except (ValueError, decimal.InvalidOperation):
        msg = f"Failed to deserialize DELIMITED field {column.name}: {text!r} is not a valid {column.type}"
        raise SerdeError(msg) from None
    return text


class DelimitedFormat(Format):
    name: ClassVar[str] = "DELIMITED"
    supported_types: ClassVar[frozenset[str]] = frozenset(
        ["BOOLEAN", "INTEGER", "BIGINT", "DOUBLE", "DECIMAL", "STRING", "BYTES", "DATE", "TIME", "TIMESTAMP"]
    )
    supported_properties: ClassVar[frozenset[str]] = frozenset(["delimiter"])
    supports_unwrapping: ClassVar[bool] = True

    @staticmethod
    def _delimiter(properties: Mapping[str, str]) -> str:
        return parse_delimiter(properties.get("delimiter", ","))

    def serializer(self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Mapping[str, str],
                   features: frozenset[str]) -> Serializer:
        delimiter = self._delimiter(properties)

        def serialize(row: Row | None) -> bytes | None:
            if row is None:
                return None
            parts = []
            for column, value in zip(columns, row, strict=True):
                text = _format_field(value, column.type)
                if text is None:
                    parts.append("")
                elif _needs_quotes(text, delimiter):
                    parts.append('"' + text.replace('"', '""') + '"')
                else:
                    parts.append(text)
            return delimiter.join(parts).encode("utf-8")

        return serialize

    def deserializer(self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Mapping[str, str],
                     features: frozenset[str]) -> Deserializer:
        delimiter = self._delimiter(properties)

        def deserialize(data: bytes | None) -> Row | None:
            if data is None:
                return None
            text = data.decode("utf-8")
            try:
                records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True))
            except csv.Error as e:
                raise SerdeError(f"Failed to deserialize DELIMITED: {e}") from None
            fields = records[0] if records else [""]
            if len(records) > 1 or len(fields) != len(columns):
                msg = f"Unexpected field count, csvFields:{len(fields)} schemaFields:{len(columns)}"
                raise SerdeError(msg)
            return tuple(_parse_field(f, c) for f, c in zip(fields, columns, strict=True))

        return deserialize

    def from_document(self, document: Any, columns: Sequence[SerdeColumn], *, is_key: bool,
                      properties: Mapping[str, str]) -> bytes | None:
        if document is None:
            return None
        if isinstance(document, bool):
            document = "true" if document else "false"
        return str(document).encode("utf-8")

    def to_document(self, data: bytes | None, columns: Sequence[SerdeColumn], *, is_key: bool,
                    properties: Mapping[str, str]) -> Any:
        if data is None:
            return None
        return data.decode("utf-8")

    def validate(self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Mapping[str, str]) -> None:
        super().validate(columns, is_key=is_key, properties=properties)
        if "delimiter" in properties:
            parse_delimiter(properties["delimiter"])


DELIMITED = register(DelimitedFormat())
