"""Constant expressions evaluated by Spark, as ksqlDB's interpreter evaluates an
``INSERT INTO ... VALUES`` value that calls functions or computes (``1 + 2``,
``SUBSTRING('foo', 2)``): the same compiled expression a query would run, over one row."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Row

from qtt.plan.ir import expressions as e
from qtt.runtime.build.compiler import Compiler
from qtt.runtime.spark.session import get_session


def evaluate(expr: e.Expression) -> Any:
    """The value of a typed expression that reads no column: structs as dicts of their fields,
    TIMESTAMP, DATE and TIME values as Python's (UTC), BYTES as bytes."""
    row = get_session().range(1).select(Compiler()(expr).alias("value")).collect()[0]
    return _plain(row["value"])


def _plain(value: Any) -> Any:
    if isinstance(value, Row):
        return {name: _plain(field) for name, field in value.asDict(recursive=False).items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if isinstance(value, bytearray):
        return bytes(value)
    return value
