"""ksqlDB's timestamp formats (java.time patterns) in Spark."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F


def parse_millis(value: Column, pattern: str) -> Column:
    """Epoch millis parsed from a string with a java.time ``DateTimeFormatter`` pattern (UTC)."""
    return F.unix_millis(F.to_timestamp(value, pattern))
