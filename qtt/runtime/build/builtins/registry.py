"""The table of scalar function implementations, and what every implementation shares.

``RENAMES`` maps a ksqlDB function to the Spark function that behaves identically; every
other function registers its own implementation with :func:`implements`. A name can be in
one table only: registering it twice fails at import.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.errors import RuntimeBuildError
from qtt.plan.ir import expressions as e
from qtt.runtime.spark.spark_types import to_spark

#: An implementation: the resolved call and its compiled arguments -> the result column.
Impl = Callable[[e.Call, Sequence[Column]], Column]

#: ksqlDB name -> Spark function with the same semantics.
RENAMES: dict[str, Callable[..., Column]] = {
    "UCASE": F.upper,
    "LCASE": F.lower,
    "SQRT": F.sqrt,
    "CBRT": F.cbrt,
    "EXP": F.exp,
    "ACOS": F.acos,
    "ASIN": F.asin,
    "ATAN": F.atan,
    "ATAN2": F.atan2,
    "COS": F.cos,
    "SIN": F.sin,
    "TAN": F.tan,
    "COT": F.cot,
    "COSH": F.cosh,
    "SINH": F.sinh,
    "TANH": F.tanh,
    "DEGREES": F.degrees,
    "RADIANS": F.radians,
    "POWER": F.pow,
    "ABS": F.abs,
    "ARRAY_DISTINCT": F.array_distinct,
    "ARRAY_UNION": F.array_union,
    "ARRAY_INTERSECT": F.array_intersect,
    "ARRAY_EXCEPT": F.array_except,
}

#: ksqlDB name -> its own implementation; filled by :func:`implements`.
IMPLEMENTATIONS: dict[str, Impl] = {}


def implements(*names: str) -> Callable[[Impl], Impl]:
    """Register the decorated function as the implementation of the functions ``names``."""

    def register(fn: Impl) -> Impl:
        for name in names:
            if name in IMPLEMENTATIONS or name in RENAMES:
                msg = f"function {name} implemented twice: {fn.__module__}.{fn.__qualname__} and an earlier one"
                raise TypeError(msg)
            IMPLEMENTATIONS[name] = fn
        return fn

    return register


def null_of(type_: t.SqlType) -> Column:
    """A null of SQL type ``type_``."""
    return F.lit(None).cast(to_spark(type_))


def constant(expr: e.Expression) -> object:
    """The value of an argument the planner guarantees to be a literal."""
    if not isinstance(expr, e.Literal):  # pragma: no cover - the analyzer rejects these
        msg = f"expected a constant argument, got {type(expr).type_tag}"
        raise RuntimeBuildError(msg)
    return expr.value
