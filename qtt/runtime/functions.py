"""Scalar functions and CAST in Spark, with ksqlDB's semantics.

``RENAMES`` maps a ksqlDB function to the Spark function that behaves identically. Every
other function has its own implementation below. ``IMPLEMENTED`` must cover
``qtt.plan.functions.FUNCTIONS`` exactly; a test checks it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.errors import RuntimeBuildError
from qtt.plan import expressions as e
from qtt.runtime.types import to_spark

if TYPE_CHECKING:
    from qtt.runtime.expressions import Compiler

Impl = Callable[[e.Call, Sequence[Column]], Column]

#: ksqlDB name -> Spark function with the same semantics.
RENAMES: dict[str, Callable[..., Column]] = {
    "UCASE": F.upper,
    "LCASE": F.lower,
    "REVERSE": F.reverse,
    "SQRT": F.sqrt,
    "CBRT": F.cbrt,
    "EXP": F.exp,
    "LN": F.log,
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
    "MAP_KEYS": F.map_keys,
    "MAP_VALUES": F.map_values,
}

IMPLEMENTATIONS: dict[str, Impl] = {}


def implements(*names: str) -> Callable[[Impl], Impl]:
    def register(fn: Impl) -> Impl:
        for name in names:
            if name in IMPLEMENTATIONS or name in RENAMES:
                raise TypeError(f"function {name} implemented twice")
            IMPLEMENTATIONS[name] = fn
        return fn

    return register


def call(expr: e.Call, args: Sequence[Column], compiler: Compiler) -> Column:
    """The Spark column for a resolved call."""
    result: Column
    if expr.name in RENAMES:
        result = RENAMES[expr.name](*args)
    elif expr.name in IMPLEMENTATIONS:
        result = IMPLEMENTATIONS[expr.name](expr, args)
    else:
        msg = f"function {expr.name} has no Spark implementation"
        raise RuntimeBuildError(msg)
    return result.cast(to_spark(expr.sql_type))


def implemented() -> frozenset[str]:
    return frozenset(RENAMES) | frozenset(IMPLEMENTATIONS)


# ---------------------------------------------------------------------------- null handling


@implements("COALESCE")
def _coalesce(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.coalesce(*[a.cast(to_spark(expr.sql_type)) for a in args])


@implements("IFNULL")
def _ifnull(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.coalesce(args[0].cast(to_spark(expr.sql_type)), args[1].cast(to_spark(expr.sql_type)))


@implements("NULLIF")
def _nullif(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.when(args[0] == args[1], F.lit(None)).otherwise(args[0])


@implements("AS_VALUE")
def _as_value(expr: e.Call, args: Sequence[Column]) -> Column:
    return args[0]


# ---------------------------------------------------------------------------- strings


@implements("CONCAT")
def _concat(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB skips null arguments; Spark's concat would return null.
    if not args:
        return F.lit("")
    empty = F.lit("") if expr.sql_type == t.STRING else F.lit(b"")
    return F.concat(*[F.coalesce(a, empty) for a in args])


@implements("CONCAT_WS")
def _concat_ws(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB skips null parts and returns null for a null separator. Spark's concat_ws only
    # takes a constant separator, so fold over the non-null parts instead.
    separator, parts = args[0], args[1:]
    spark_type = to_spark(expr.sql_type)
    present = F.filter(F.array(*parts), lambda x: x.isNotNull())
    joined = F.aggregate(
        present,
        F.lit(None).cast(spark_type),
        lambda acc, x: F.when(acc.isNull(), x).otherwise(F.concat(acc, separator, x)),
    )
    empty = F.lit("") if expr.sql_type == t.STRING else F.lit(b"")
    return F.when(separator.isNull(), F.lit(None)).otherwise(F.coalesce(joined, empty))


@implements("TRIM")
def _trim(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.btrim(args[0], F.lit(" \t\n\r\f\u000b"))


@implements("LTRIM")
def _ltrim(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.ltrim(args[0], F.lit(" \t\n\r\f\u000b"))


@implements("RTRIM")
def _rtrim(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.rtrim(args[0], F.lit(" \t\n\r\f\u000b"))


@implements("LEN")
def _len(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.length(args[0]) if expr.args[0].result_type == t.STRING else F.octet_length(args[0])


@implements("INITCAP")
def _initcap(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.initcap(args[0])


@implements("SUBSTRING")
def _substring(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB: 1-based start; a negative start counts from the end; no length means to the end.
    value, start = args[0], args[1]
    length = args[2] if len(args) > 2 else F.lit(2**31 - 1)
    return F.when(start.isNull() | length.isNull(), F.lit(None)).otherwise(F.substring(value, start, length))


@implements("REPLACE")
def _replace(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.when(args[1].isNull() | args[2].isNull(), F.lit(None)).otherwise(F.replace(args[0], args[1], args[2]))


@implements("INSTR")
def _instr(expr: e.Call, args: Sequence[Column]) -> Column:
    if len(args) == 2:
        return F.position(args[1], args[0])
    raise RuntimeBuildError("INSTR with position/occurrence is not supported yet")


@implements("LPAD")
def _lpad(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.when(args[1] < 0, F.lit(None)).otherwise(F.lpad(args[0], args[1], args[2]))


@implements("RPAD")
def _rpad(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.when(args[1] < 0, F.lit(None)).otherwise(F.rpad(args[0], args[1], args[2]))


@implements("SPLIT")
def _split(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB splits on the literal delimiter; an empty delimiter splits into characters.
    quoted = F.regexp_replace(args[1], r"([\\\[\](){}.*+?^$|])", r"\\$1")
    return F.when(args[1] == "", F.split(args[0], "")).otherwise(F.split(args[0], quoted, -1))


@implements("EXTRACTJSONFIELD")
def _extract_json_field(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.get_json_object(args[0], args[1])


# ---------------------------------------------------------------------------- math


@implements("ABS")
def _abs(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.abs(args[0])


@implements("SIGN")
def _sign(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.signum(args[0])


def _java_round(value: Column) -> Column:
    # Java's Math.round rounds half up toward positive infinity: round(-2.5) = -2.
    return F.floor(value + F.lit(0.5))


@implements("ROUND")
def _round(expr: e.Call, args: Sequence[Column]) -> Column:
    arg_type = expr.args[0].result_type
    if len(args) == 1:
        if arg_type == t.DOUBLE:
            return _java_round(args[0])
        if isinstance(arg_type, t.Decimal):
            return F.round(args[0], 0)
        return args[0]
    if arg_type == t.DOUBLE:
        scale = F.pow(F.lit(10.0), args[1])
        return _java_round(args[0] * scale) / scale
    return F.round(args[0], args[1])


@implements("TRUNC")
def _trunc(expr: e.Call, args: Sequence[Column]) -> Column:
    arg_type = expr.args[0].result_type
    if len(args) == 1:
        if arg_type.base in ("DOUBLE", "DECIMAL"):
            return F.when(args[0] < 0, F.ceil(args[0])).otherwise(F.floor(args[0]))
        return args[0]
    scale = F.pow(F.lit(10.0), args[1])
    scaled = args[0] * scale
    return F.when(scaled < 0, F.ceil(scaled)).otherwise(F.floor(scaled)) / scale


@implements("FLOOR")
def _floor(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.floor(args[0])


@implements("CEIL")
def _ceil(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.ceil(args[0])


@implements("LOG")
def _log(expr: e.Call, args: Sequence[Column]) -> Column:
    if len(args) == 1:
        return F.log(args[0])
    return F.log(args[1]) / F.log(args[0])


@implements("PI")
def _pi(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.lit(math.pi)


@implements("RANDOM")
def _random(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.rand(seed=0)


# ---------------------------------------------------------------------------- collections


@implements("ARRAY_LENGTH")
def _array_length(expr: e.Call, args: Sequence[Column]) -> Column:
    # Spark's size(null) is -1 when ANSI mode is off; ksqlDB returns null.
    return F.when(args[0].isNull(), F.lit(None)).otherwise(F.size(args[0]))


@implements("ARRAY_CONTAINS")
def _array_contains(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.when(args[0].isNull(), F.lit(False)).otherwise(F.array_contains(args[0], args[1]))


@implements("ARRAY_SORT")
def _array_sort(expr: e.Call, args: Sequence[Column]) -> Column:
    ascending = F.sort_array(args[0], asc=True)
    if len(args) == 1:
        return ascending
    return F.when(F.upper(args[1]) == "DESC", F.sort_array(args[0], asc=False)).otherwise(ascending)


# ---------------------------------------------------------------------------- CAST


def cast(value: Column, source: t.SqlType, target: t.SqlType) -> Column:
    """CAST with ksqlDB's semantics for the cases where Spark's differ."""
    if target == t.STRING and source.base == "DOUBLE":
        # Java's Double.toString: Spark prints the same digits for the values ksqlDB emits.
        return value.cast("string")
    if target.base in ("INTEGER", "BIGINT") and source.base in ("DOUBLE", "DECIMAL"):
        # Java narrows by truncation toward zero, as Spark's cast does.
        return value.cast(to_spark(target))
    return value.cast(to_spark(target))
