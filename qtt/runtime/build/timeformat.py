"""ksqlDB's timestamp formats (java.time patterns) in Spark."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.runtime.build.builtins.time_functions import parse_timestamp


def parse_millis(value: Column, pattern: str) -> Column:
    """Epoch millis parsed from a string with a java.time ``DateTimeFormatter`` pattern (UTC), by
    ksqlDB's ``StringToTimestampParser`` as ``PARSE_TIMESTAMP`` reads it (SMART resolver: the
    30th of February is the 28th; text fields matched case-sensitively)."""
    return F.unix_millis(parse_timestamp(value, pattern, "UTC", "TIMESTAMP_FORMAT"))


def timestamp_millis(value: Column, type_: t.SqlType, fmt: str | None) -> Column:
    """Epoch millis from a timestamp column: BIGINT as is, TIMESTAMP converted, STRING parsed."""
    if type_.base == "TIMESTAMP":
        return F.unix_millis(value)
    if type_.base == "STRING" and fmt is not None:
        return parse_millis(value, fmt)
    return value
