"""ksqlDB's timestamp formats (java.time patterns) in Spark."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t


def parse_millis(value: Column, pattern: str) -> Column:
    """Epoch millis parsed from a string with a java.time ``DateTimeFormatter`` pattern (UTC)."""
    return F.unix_millis(F.to_timestamp(value, pattern))


def timestamp_millis(value: Column, type_: t.SqlType, fmt: str | None) -> Column:
    """Epoch millis from a timestamp column: BIGINT as is, TIMESTAMP converted, STRING parsed."""
    if type_.base == "TIMESTAMP":
        return F.unix_millis(value)
    if type_.base == "STRING" and fmt is not None:
        return parse_millis(value, fmt)
    return value
