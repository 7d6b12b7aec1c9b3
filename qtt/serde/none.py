"""The NONE format: a key with no columns. Nothing is written and nothing is read."""

from __future__ import annotations

from typing import Any, ClassVar

from qtt.errors import StatementError
from qtt.serde.interface import Format, Layout, Row, RowReader, RowWriter, text_of


class NoneFormat(Format):
    """NONE: no columns; every record reads as an empty row."""

    name: ClassVar[str] = "NONE"
    supported_types: ClassVar[frozenset[str]] = frozenset()
    # No columns means no bytes that could be null: a null record is an empty row, not a tombstone.
    null_record_row: ClassVar[Row | None] = ()

    def check(self, layout: Layout) -> None:
        # Replaces the default checks: ksqlDB names the columns, not their types.
        if layout.columns:
            msg = (
                f"The '{self.name}' format can only be used when no columns are defined. "
                f"Got: [{layout.shown_columns()}]"
            )
            raise StatementError(msg)

    def row_writer(self, layout: Layout) -> RowWriter:
        return lambda row: None

    def row_reader(self, layout: Layout) -> RowReader:
        return lambda data: ()

    def write_document(self, document: Any, layout: Layout) -> bytes | None:
        return str(document).encode("utf-8")

    def read_document(self, data: bytes, layout: Layout) -> Any:
        return text_of(data)
