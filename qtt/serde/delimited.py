"""The DELIMITED format: one CSV record, as ksqlDB reads and writes it with Apache Commons CSV.

Writing quotes fields the way Commons CSV 1.4's ``QuoteMode.MINIMAL`` does (ksqlDB's
expected outputs show it: ``"-1",a``), and writes no record separator. Reading takes the
first record, turns empty fields into nulls and parses each field with the Java parser
ksqlDB uses (``Integer.parseInt``, ``Boolean.parseBoolean``, ``new BigDecimal`` ...).
"""

from __future__ import annotations

import base64
import csv
import decimal
import io
import re
import sys
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import java_numbers, values
from qtt.serde.excerpt import excerpt
from qtt.serde.interface import Format, Layout, Row, RowReader, RowWriter, SerdeColumn, text_of

_NAMED_DELIMITERS = {"TAB": "\t", "SPACE": " "}
_QUOTE = '"'


def parse_delimiter(value: str) -> str:
    """The delimiter character for a ``VALUE_DELIMITER`` / ``KEY_DELIMITER`` value.

    Raises:
        ValueError: with ksqlDB's reason for an empty, blank or multi-character value.
    """
    if value.upper() in _NAMED_DELIMITERS:
        return _NAMED_DELIMITERS[value.upper()]
    if value.strip() == "":
        msg = (
            "Delimiter cannot be empty, if you meant to have a tab or space for delimiter, please "
            "use the "
            "special values 'TAB' or 'SPACE'"
        )
        raise ValueError(msg)
    if len(value) != 1:
        msg = f"Invalid delimiter value: '{value}'. Delimiter must be a single character or TAB,SPACE"
        raise ValueError(msg)
    return value


def _needs_quotes(text: str, delimiter: str, *, first: bool) -> bool:
    """Commons CSV 1.4, ``QuoteMode.MINIMAL``, for a non-null value."""
    if text == "":
        # an empty first token is quoted, else an empty record would read as no record
        return first
    c = text[0]
    if first and not (c.isascii() and c.isalnum()):
        return True
    if c <= "#":
        return True
    if any(ch in text for ch in ("\n", "\r", _QUOTE, delimiter)):
        return True
    return text[-1] <= " "


def format_field(value: Any, type_: t.SqlType) -> str | None:
    """The text ksqlDB writes for one typed value (None for null)."""
    if value is None:
        return None
    base = type_.base
    if base == "DOUBLE":
        return java_numbers.java_double(float(value))
    if base == "DECIMAL":
        return java_numbers.java_decimal(value)
    if base == "BOOLEAN":
        return "true" if value else "false"
    if base == "BYTES":
        return base64.b64encode(bytes(value)).decode("ascii")
    if base in ("TIMESTAMP", "DATE", "TIME"):
        return str(values.to_json(value, type_))
    return str(value)


def format_record(fields: Sequence[str | None], delimiter: str) -> str:
    """One CSV record without a record separator; None fields are written empty."""
    parts = []
    for i, text in enumerate(fields):
        if text is None:
            parts.append("")
        elif _needs_quotes(text, delimiter, first=i == 0):
            parts.append(_QUOTE + text.replace(_QUOTE, _QUOTE * 2) + _QUOTE)
        else:
            parts.append(text)
    return delimiter.join(parts)


_FIELD_SIZE_LIMIT = min(sys.maxsize, 2**31 - 1)


def parse_record(text: str, delimiter: str) -> list[str]:
    """The fields of the first non-empty record in ``text``.

    Raises:
        SerdeError: the text holds no record or is not valid CSV.
    """
    # Commons CSV has no field size limit; Python's csv module stops at 131,072 characters.
    if csv.field_size_limit() < _FIELD_SIZE_LIMIT:
        csv.field_size_limit(_FIELD_SIZE_LIMIT)
    try:
        records = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True) if r]
    except csv.Error:
        # what Python's strict mode rejects, Commons CSV may still read (`"a" ,b`)
        try:
            records = _commons_records(text, delimiter)
        except ValueError as e:
            msg = f"Error deserializing delimited: {e}"
            raise SerdeError(msg) from None
    if not records:
        msg = "Error deserializing delimited: No fields in record"
        raise SerdeError(msg)
    return records[0]


def _line_end(text: str, i: int) -> int:
    """The length of the line break at ``text[i]`` (CRLF, CR or LF), 0 for none."""
    if text.startswith("\r\n", i):
        return 2
    return 1 if text[i] in "\r\n" else 0


def _java_whitespace(c: str) -> bool:
    """Java's ``Character.isWhitespace``: Unicode spaces but the non-breaking ones, and controls 9-13, 28-31."""
    if c in "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f":
        return True
    return unicodedata.category(c) in ("Zs", "Zl", "Zp") and c not in "\xa0\u2007\u202f"


def _commons_records(text: str, delimiter: str) -> list[list[str]]:
    """The records of ``text`` as Commons CSV's ``CSVFormat.DEFAULT`` lexer reads them.

    Used for the texts Python's strict ``csv`` rejects: Commons CSV skips white space between
    a closing quote and the delimiter or the line's end (``"a" ,b``), and fails only on
    another character there or on a quoted field the text ends inside.

    Raises:
        ValueError: with Commons CSV's message.
    """
    records: list[list[str]] = []
    record: list[str] = []
    i, n, line = 0, len(text), 1
    while True:
        if not record:  # ignoreEmptyLines
            while i < n and _line_end(text, i):
                i, line = i + _line_end(text, i), line + 1
            if i >= n:
                return records
        if i >= n:  # a delimiter ended the text: one more, empty, field
            records.append([*record, ""])
            return records
        if text[i] == _QUOTE:
            start, parts = line, []
            i += 1
            while True:
                if i >= n:
                    msg = f"(startline {start}) EOF reached before encapsulated token finished"
                    raise ValueError(msg)
                if text[i] != _QUOTE:
                    line += text[i] == "\n"
                    parts.append(text[i])
                    i += 1
                elif text.startswith(_QUOTE * 2, i):
                    parts.append(_QUOTE)
                    i += 2
                else:
                    i += 1
                    while i < n and text[i] != delimiter and not _line_end(text, i):
                        if not _java_whitespace(text[i]):
                            msg = f"(line {line}) invalid char between encapsulated token and delimiter"
                            raise ValueError(msg)
                        i += 1
                    break
            record.append("".join(parts))
        else:
            end = i
            while end < n and text[end] != delimiter and not _line_end(text, end):
                end += 1
            record.append(text[i:end])
            i = end
        if i >= n:
            records.append(record)
            return records
        if text[i] == delimiter:
            i += 1
            continue
        i, line = i + _line_end(text, i), line + 1
        records.append(record)
        record = []


def _boolean(text: str) -> bool:
    # Boolean.parseBoolean: anything but "true" (any case) is false
    return text.lower() == "true"


def _decimal(type_: t.SqlType) -> Callable[[str], decimal.Decimal]:
    assert isinstance(type_, t.Decimal)
    return lambda text: values.fit_decimal(java_numbers.java_big_decimal(text), type_)


# java.util.Base64's basic decoder: whole 4-character units, then a last unit of 2 or 3
# characters whose padding may be left out, but if written must be whole ("xx=" is refused)
_JAVA_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?")


def _bytes(text: str) -> bytes:
    """A BYTES field as ``Base64.getDecoder().decode`` reads it (KsqlDelimitedDeserializer)."""
    if _JAVA_BASE64.fullmatch(text):
        return base64.b64decode(text + "=" * (-len(text) % 4))
    msg = f"Value is not a valid Base64 encoded string: {excerpt(text)}"
    raise ValueError(msg)


_PARSERS: dict[str, Callable[[t.SqlType], Callable[[str], Any]]] = {
    "BOOLEAN": lambda _t: _boolean,
    "INTEGER": lambda _t: java_numbers.java_parse_int,
    "BIGINT": lambda _t: java_numbers.java_parse_long,
    "DOUBLE": lambda _t: java_numbers.java_parse_double,
    "STRING": lambda _t: str,
    "DECIMAL": _decimal,
    "TIMESTAMP": lambda ty: lambda text: values.from_json(java_numbers.java_parse_long(text), ty),
    # Integer.parseInt: a count of days past the INT range is no number to ksqlDB
    "DATE": lambda ty: lambda text: values.from_json(java_numbers.java_parse_int(text), ty),
    "TIME": lambda ty: lambda text: values.from_json(java_numbers.java_parse_long(text), ty),
    "BYTES": lambda _t: _bytes,
}


class DelimitedFormat(Format):
    """DELIMITED: one CSV record per key or value; an empty field is null."""

    name: ClassVar[str] = "DELIMITED"
    supported_types: ClassVar[frozenset[str]] = frozenset(_PARSERS)
    supported_properties: ClassVar[frozenset[str]] = frozenset(["delimiter"])
    supports_unwrapping: ClassVar[bool] = True
    #: its field-count error names the topic, as ksqlDB's does
    reads_topic: ClassVar[bool] = True

    def check(self, layout: Layout) -> None:
        super().check(layout)
        if "delimiter" in layout.properties:
            try:
                parse_delimiter(layout.properties["delimiter"])
            except ValueError as e:
                raise StatementError(str(e)) from None

    def unsupported_type_message(self, base: str, column: SerdeColumn) -> str:
        return f"The '{self.name}' format does not support type '{base}', column: {t.quote(column.name)}"

    def row_writer(self, layout: Layout) -> RowWriter:
        columns = layout.columns
        delimiter = _delimiter(layout)

        def write(row: Row) -> bytes | None:
            fields = [format_field(v, c.type) for c, v in zip(columns, row, strict=True)]
            return format_record(fields, delimiter).encode("utf-8")

        return write

    def row_reader(self, layout: Layout) -> RowReader:
        columns = layout.columns
        delimiter = _delimiter(layout)
        parsers = [_PARSERS[c.type.base](c.type) for c in columns]
        topic = layout.topic

        def read(data: bytes) -> Row | None:
            fields = parse_record(text_of(data), delimiter)
            if len(fields) != len(columns):
                # SerdeUtils.throwOnColumnCountMismatch, with the topic Kafka Streams passes
                msg = (
                    f"Error deserializing delimited: Column count mismatch on deserialization. "
                    f"topic: {topic}, expected: {len(columns)}, got: {len(fields)}"
                )
                raise SerdeError(msg)
            out: list[Any] = []
            for text, column, parse in zip(fields, columns, parsers, strict=True):
                if text == "":
                    out.append(None)
                    continue
                try:
                    out.append(parse(text))
                except (ValueError, ArithmeticError, decimal.InvalidOperation, SerdeError) as e:
                    detail = e.message if isinstance(e, SerdeError) else str(e)
                    msg = f"Error deserializing delimited field {column.name} ({column.type}): {detail}"
                    raise SerdeError(msg) from None
            return tuple(out)

        return read

    def write_document(self, document: Any, layout: Layout) -> bytes | None:
        if isinstance(document, bool):
            document = "true" if document else "false"
        return str(document).encode("utf-8")

    def read_document(self, data: bytes, layout: Layout) -> Any:
        return text_of(data)


def _delimiter(layout: Layout) -> str:
    return parse_delimiter(layout.properties.get("delimiter", ","))
