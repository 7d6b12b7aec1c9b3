"""Spark's SQL functions are looked up in the JVM once, and still called every time."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from qtt.runtime import jvm_functions

pytestmark = pytest.mark.spark


def test_a_function_is_looked_up_once_and_called_every_time(spark) -> None:  # type: ignore[no-untyped-def]
    import pyspark.sql.functions.builtin as builtin

    assert builtin._get_jvm_function is jvm_functions._memoized  # installed with the session
    sc = spark.sparkContext
    first = builtin._get_jvm_function("lit", sc)
    assert builtin._get_jvm_function("lit", sc) is first
    assert spark.range(1).select(F.lit(7).alias("a"), F.lit("x").alias("b")).collect()[0] == (7, "x")
