"""Constant expressions evaluated by Spark, as ksqlDB's ``GenericRecordFactory`` evaluates an
``INSERT INTO ... VALUES`` value that calls functions or computes (``1 + 2``,
``SUBSTRING('foo', 2)``), with its code generator: the same compiled expression a query would
run, over one row."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Row
from pyspark.sql import functions as F

from qtt.errors import StatementError
from qtt.plan.ir import expressions as e
from qtt.runtime.build.compiler import Compiler
from qtt.runtime.build.lambda_failures import failure
from qtt.runtime.spark.session import get_session


def evaluate(expr: e.Expression) -> Any:
    """The value of a typed expression that reads no column: structs as dicts of their fields,
    TIMESTAMP, DATE and TIME values as Python's (UTC), BYTES as bytes.

    Raises:
        StatementError: the expression throws in ksqlDB's Java (a division by zero, arithmetic
            on a null ...), even in a part a query would only make null: the resolver's logger
            throws with its empty message.
    """
    session = get_session()  # before any column is built
    compiler = Compiler()
    fails = failure(expr, compiler, caught=False)
    failed = F.lit(False) if fails is None else F.coalesce(fails, F.lit(False))
    row = session.range(1).select(compiler(expr).alias("value"), failed.alias("failed")).collect()[0]
    if row["failed"]:
        raise StatementError("")
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
