"""ksqlDB's rules for header columns: ``HEADERS`` and ``HEADER('key')``.

A source may declare one ``HEADERS`` column (every header of the record, in order, as
``ARRAY<STRUCT<KEY STRING, VALUE BYTES>>``) and ``HEADER('key')`` columns (the last value of
that key, BYTES). They are read-only: nothing writes them into a record.
"""

from __future__ import annotations

from collections.abc import Sequence

from qtt import sqltypes as t
from qtt.errors import SqlError
from qtt.plan.ir.schema import HEADER, HEADERS, Column
from qtt.sql import ast

#: The type a HEADERS column must have.
HEADERS_TYPE = t.Array(t.Struct((t.Field("KEY", t.STRING), t.Field("VALUE", t.BYTES))))


def check_header_column(element: ast.TableElement, earlier: Sequence[Column]) -> None:
    """Reject a header column of the wrong type, or one the schema already has (ksqlDB's messages).

    Raises:
        SqlError: with ksqlDB's message.
    """
    if element.constraint == HEADER:
        if element.type != t.BYTES:
            msg = f"Invalid type for HEADER('{element.header_key}') column: expected BYTES, got {element.type}"
            raise SqlError(msg)
    elif str(element.type) != str(HEADERS_TYPE):
        raise SqlError(f"Invalid type for HEADERS column: expected {HEADERS_TYPE}, got {element.type}")
    # ksqlDB's LogicalSchema.Builder: after a HEADERS column, no header column of any kind.
    if any(c.namespace == HEADERS for c in earlier):
        raise SqlError("Schema already contains a HEADERS column.")
    if element.constraint == HEADER and any(c.header_key == element.header_key for c in earlier):
        raise SqlError(f"Schema already contains a HEADER('{element.header_key}') column.")
