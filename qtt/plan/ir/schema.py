"""Logical schemas: the key, value and header columns of a source or a step."""

from __future__ import annotations

from dataclasses import dataclass

from qtt import sqltypes as t
from qtt.plan.ir.type_text import read_columns

KEY = "KEY"
VALUE = "VALUE"
HEADERS = "HEADERS"
HEADER = "HEADER"

# ksqlDB's pseudo columns: readable in queries, never stored in a record's value.
ROWTIME = "ROWTIME"
ROWPARTITION = "ROWPARTITION"
ROWOFFSET = "ROWOFFSET"
WINDOWSTART = "WINDOWSTART"
WINDOWEND = "WINDOWEND"
PSEUDO_COLUMNS: dict[str, t.SqlType] = {
    ROWTIME: t.BIGINT,
    ROWPARTITION: t.INTEGER,
    ROWOFFSET: t.BIGINT,
}
WINDOW_BOUNDS: dict[str, t.SqlType] = {WINDOWSTART: t.BIGINT, WINDOWEND: t.BIGINT}
RESERVED_NAMES = frozenset(PSEUDO_COLUMNS) | frozenset(WINDOW_BOUNDS)


@dataclass(frozen=True)
class Column:
    """One column: its name, type and where it lives (key, value or headers)."""

    name: str
    type: t.SqlType
    namespace: str = VALUE
    header_key: str | None = None

    def __str__(self) -> str:
        text = f"{t.quote(self.name)} {self.type}"
        if self.namespace == KEY:
            text += " KEY"
        elif self.namespace == HEADERS:
            text += " HEADERS"
        elif self.namespace == HEADER:
            quoted = (self.header_key or "").replace("'", "''")
            text += f" HEADER('{quoted}')"
        return text

    @property
    def is_key(self) -> bool:
        return self.namespace == KEY


@dataclass(frozen=True)
class LogicalSchema:
    """An ordered list of columns; printed and parsed as ksqlDB prints schemas."""

    columns: tuple[Column, ...]

    def __str__(self) -> str:
        return ", ".join(str(c) for c in self.columns)

    @property
    def key(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.namespace == KEY)

    @property
    def value(self) -> tuple[Column, ...]:
        """Columns stored in the record's value (not key, not headers)."""
        return tuple(c for c in self.columns if c.namespace == VALUE)

    @property
    def headers(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.namespace in (HEADERS, HEADER))

    def find(self, name: str) -> Column | None:
        """The column called ``name`` (case sensitive), or None."""
        return next((c for c in self.columns if c.name == name), None)

    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @classmethod
    def parse(cls, text: str) -> LogicalSchema:
        """Read a schema printed by :meth:`__str__` (the plan's own reader, never the SQL grammar).

        Raises:
            ValueError: ``text`` is not a schema as :meth:`__str__` prints it.
        """
        namespaces = {None: VALUE, "KEY": KEY, "HEADERS": HEADERS, "HEADER": HEADER}
        return cls(tuple(Column(c.name, c.type, namespaces[c.constraint], c.header_key) for c in read_columns(text)))
