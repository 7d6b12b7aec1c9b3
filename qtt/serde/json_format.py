"""The JSON format, with ksqlDB's wrapping rules and lenient type coercion."""

from __future__ import annotations

from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import values
from qtt.serde.excerpt import excerpt
from qtt.serde.interface import (
    UNWRAP_SINGLE_VALUE,
    Format,
    Layout,
    Row,
    RowReader,
    RowWriter,
    SerdeColumn,
    has_non_string_map_key,
)


def is_wrapped(layout: Layout) -> bool:
    """Whether a single column is written as an object (``{"COL": v}``) or bare (``v``).

    ksqlDB wraps single values unless told not to (:data:`UNWRAP_SINGLE_VALUE`), and
    leaves single keys bare.
    """
    if len(layout.columns) != 1:
        return True
    return not layout.is_key and UNWRAP_SINGLE_VALUE not in layout.features


class JsonFormat(Format):
    """JSON: rows as objects (or bare single values), read with ksqlDB's lenient coercion."""

    name: ClassVar[str] = "JSON"
    supported_types: ClassVar[frozenset[str]] = frozenset([*t.Primitive.NAMES, "DECIMAL", "ARRAY", "MAP", "STRUCT"])
    supports_wrapping: ClassVar[bool] = True
    supports_unwrapping: ClassVar[bool] = True

    def check(self, layout: Layout) -> None:
        super().check(layout)
        if any(has_non_string_map_key(column.type) for column in layout.columns):
            msg = f"{self.name} only supports MAP types with STRING keys"
            raise StatementError(msg)

    def row_writer(self, layout: Layout) -> RowWriter:
        columns = layout.columns
        wrapped = is_wrapped(layout)

        def write(row: Row) -> bytes | None:
            if wrapped:
                doc: Any = {c.name: values.to_json(v, c.type) for c, v in zip(columns, row, strict=True)}
            else:
                # an unwrapped null is a null record, as KsqlJsonSerializer writes it
                if row[0] is None:
                    return None
                doc = values.to_json(row[0], columns[0].type)
            return values.dumps(doc).encode("utf-8")

        return write

    def row_reader(self, layout: Layout) -> RowReader:
        columns = layout.columns
        wrapped = is_wrapped(layout)
        target = "key" if layout.is_key else "value"

        def read(data: bytes) -> Row | None:
            if not data.removeprefix(_UTF8_BOM).strip(_JSON_WHITESPACE):
                return _missing(columns, wrapped, target)
            doc = _parse(data, target, strict=True)
            if doc is None:
                # ksqlDB's UnwrappedDeserializer wraps a null from present bytes: a row of one null
                return None if wrapped or layout.is_key else (None,)
            try:
                with values.deep_enough():
                    return values.row_from_json(doc, columns, wrapped=wrapped)
            except SerdeError as e:
                msg = f"Failed to deserialize {target} as JSON: {e.message}"
                raise SerdeError(msg) from None
            except RecursionError:
                # a STRING column takes the text of a nested value, written out recursively
                raise SerdeError(_too_deep(target)) from None

        return read

    def write_document(self, document: Any, layout: Layout) -> bytes | None:
        return values.dumps(document).encode("utf-8")

    def read_document(self, data: bytes, layout: Layout) -> Any:
        return _parse(data, "key" if layout.is_key else "value", strict=False)


_UTF8_BOM = b"\xef\xbb\xbf"
_JSON_WHITESPACE = b" \t\r\n"


def _missing(columns: tuple[SerdeColumn, ...], wrapped: bool, target: str) -> Row:
    """The row of a record without a JSON value (empty, or white space only).

    ksqlDB's ``readTree`` gives a ``MissingNode`` for it, whose text is empty: a bare STRING
    reads as ``''``, anything else fails as a ``MissingNode`` of the wrong type.
    """
    if not wrapped and columns[0].type.base == "STRING":
        return ("",)
    type_ = t.Struct(tuple(t.Field(c.name, c.type) for c in columns)) if wrapped else columns[0].type
    msg = f"Can't convert type. sourceType: MissingNode, requiredType: {values.required_type_text(type_)}, path: $"
    raise SerdeError(f"Failed to deserialize {target} as JSON: {msg}")


def _parse(data: bytes, target: str, *, strict: bool) -> Any:
    """The JSON document in ``data``, or a :class:`SerdeError` that says why there is none."""
    try:
        with values.deep_enough():
            return values.loads_strict(data) if strict else values.loads(data)
    except RecursionError:
        raise SerdeError(_too_deep(target)) from None
    except UnicodeDecodeError as e:
        msg = f"Failed to deserialize {target} as JSON: invalid UTF-8: byte 0x{data[e.start]:02x} at offset {e.start}"
        raise SerdeError(msg) from None
    except ValueError as e:
        msg = f"Failed to deserialize {target} as JSON: invalid JSON: {excerpt(str(e))}"
        raise SerdeError(msg) from None


def _too_deep(target: str) -> str:
    return (
        f"Failed to deserialize {target} as JSON: the document nests more than {values.MAX_NESTING} levels deep, "
        f"the most qtt reads"
    )
