"""Logical schemas: the key, value and header columns of a source or a step."""

from __future__ import annotations

from dataclasses import dataclass

from qtt import sqltypes as t

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
            text += f" HEADER('{self.header_key}')"
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
        """Read a schema printed by :meth:`__str__`."""
        from qtt.sql import parse_schema

        columns = []
        for element in parse_schema(text):
            namespace = {"KEY": KEY, "PRIMARY KEY": KEY, "HEADERS": HEADERS, "HEADER": HEADER}.get(
                element.constraint or "", VALUE
            )
            columns.append(Column(element.name, element.type, namespace, element.header_key))
        return cls(tuple(columns))
