"""The metastore: the streams and tables that a case's statements have created so far."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from qtt.errors import did_you_mean
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import LogicalSchema

STREAM, TABLE = "STREAM", "TABLE"


@dataclass(frozen=True)
class DataSource:
    """A stream or table in the metastore."""

    name: str
    kind: str
    schema: LogicalSchema
    topic: str
    formats: s.Formats
    timestamp_column: s.TimestampColumn | None = None
    is_source: bool = False
    partitions: int | None = None
    sql: str = ""


def unknown_source_hint(name: str, known: Iterable[str]) -> str | None:
    """``Did you mean 'X'?`` for a source name that is not in the metastore, if one is close."""
    return did_you_mean(name, known).strip() or None
