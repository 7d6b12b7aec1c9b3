"""Spark implementations of ksqlDB's lambda invocation functions (TRANSFORM, REDUCE, FILTER).

Registered with :func:`qtt.runtime.build.builtins.registry.implements`; the signatures are in
:mod:`qtt.plan.functions.invocation_signatures`. Spark's higher-order functions do the work; what
ksqlDB's UDFs (``io.confluent.ksql.function.udf.lambda``) do differently is compensated here:

- a lambda that throws (see :mod:`qtt.runtime.build.lambda_failures`) makes the whole call null;
- FILTER unboxes the predicate: a null predicate throws;
- a map result is collected with ``Collectors.toMap``: a null value or two equal keys throw
  (Spark would keep the null, or the last duplicate);
- REDUCE of a null collection is the initial state, and a null initial state gives null;
- REDUCE over a map visits the entries in ``java.util.HashMap`` order, as ksqlDB does.

A compiled lambda argument is a Python function of Columns with a ``failed`` attribute: the
same function returning where the body throws, or None where it never can.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.plan.functions.invocation_signatures import LAMBDA_SIGNATURES
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.java.hashmap_order import java_map_entries
from qtt.runtime.build.builtins.registry import implements, null_of
from qtt.runtime.spark.spark_types import to_spark


def is_lambda_call(expr: e.Call) -> bool:
    """Whether ``expr`` calls a lambda function."""
    return expr.name in LAMBDA_SIGNATURES


def _failed(fn: Any, *columns: Column) -> Column | None:
    failed: Callable[..., Column | None] = fn.failed
    return failed(*columns)


def _or(*conditions: Column | None) -> Column | None:
    present = [c for c in conditions if c is not None]
    if not present:
        return None
    result = present[0]
    for c in present[1:]:
        result = result | c
    return result


def _exists(collection: Column, test: Callable[[Column], Column | None], probe: Column) -> Column | None:
    # ``probe`` only tells whether ``test`` can fail at all; Spark's exists is null when
    # no element passes and one test is null, so the tests never are.
    if test(probe) is None:
        return None
    return F.coalesce(F.exists(collection, lambda x: F.coalesce(_known(test(x)), F.lit(False))), F.lit(False))


def _known(column: Column | None) -> Column:
    assert column is not None
    return column


def _lambda(arg: object) -> Any:
    # A compiled lambda argument is a Python function of Columns, not a Column.
    return arg


def call_failure(expr: e.Call, args: Sequence[Any]) -> Column | None:
    """True where the call throws in ksqlDB (its lambda or its result collection)."""
    collection_type = expr.args[0].result_type
    if expr.name == "REDUCE":
        return _reduce(expr, args)[1]
    if isinstance(collection_type, t.Array):
        fn = args[1]
        if expr.name == "FILTER":
            return _exists(args[0], lambda x: _or(_failed(fn, x), fn(x).isNull()), F.lit(None))
        return _exists(args[0], lambda x: _failed(fn, x), F.lit(None))
    entries = F.map_entries(args[0])
    if expr.name == "FILTER":
        fn = args[1]

        def filter_fails(entry: Column) -> Column | None:
            k, v = entry.getField("key"), entry.getField("value")
            return _or(_failed(fn, k, v), fn(k, v).isNull(), fn(k, v) & v.isNull())

        return _exists(entries, filter_fails, F.lit(None))
    key_fn, value_fn = args[1], args[2]
    keys = F.transform(entries, lambda x: key_fn(x.getField("key"), x.getField("value")))
    values = F.transform(entries, lambda x: value_fn(x.getField("key"), x.getField("value")))
    lambda_fails = _exists(
        entries,
        lambda x: _or(
            _failed(key_fn, x.getField("key"), x.getField("value")),
            _failed(value_fn, x.getField("key"), x.getField("value")),
        ),
        F.lit(None),
    )
    collected = (
        F.exists(keys, lambda k: k.isNull())
        | F.exists(values, lambda v: v.isNull())
        | (F.size(F.array_distinct(keys)) != F.size(keys))
    )
    return _or(lambda_fails, F.coalesce(collected, F.lit(False)))


def _null_unless_ok(expr: e.Call, failed: Column | None, result: Column) -> Column:
    if failed is None:
        return result
    return F.when(failed, null_of(expr.sql_type)).otherwise(result)


@implements("TRANSFORM")
def transform(expr: e.Call, args: Sequence[Column]) -> Column:
    collection, functions = args[0], list[Any](args[1:])
    failed = call_failure(expr, args)
    if isinstance(expr.args[0].result_type, t.Array):
        return _null_unless_ok(expr, failed, F.transform(collection, functions[0]))
    key_fn, value_fn = functions
    entries = F.map_entries(collection)
    keys = F.transform(entries, lambda x: key_fn(x.getField("key"), x.getField("value")))
    values = F.transform(entries, lambda x: value_fn(x.getField("key"), x.getField("value")))
    return _null_unless_ok(expr, failed, F.map_from_arrays(keys, values))


@implements("FILTER")
def filter_(expr: e.Call, args: Sequence[Column]) -> Column:
    collection, fn = args[0], _lambda(args[1])
    failed = call_failure(expr, args)
    if isinstance(expr.args[0].result_type, t.Array):
        return _null_unless_ok(expr, failed, F.filter(collection, fn))
    return _null_unless_ok(expr, failed, F.map_filter(collection, fn))


def _reduce(expr: e.Call, args: Sequence[Any]) -> tuple[Column, Column | None]:
    """REDUCE's value and where it throws, from one Spark ``aggregate`` carrying both."""
    collection, initial, fn = args
    state_type = to_spark(expr.sql_type)
    is_map = isinstance(expr.args[0].result_type, t.Map)
    items = java_map_entries(collection, expr.args[0]) if is_map else collection

    def step(acc: Column, item: Column) -> Column:
        state = acc.getField("s")
        params = (state, item.getField("key"), item.getField("value")) if is_map else (state, item)
        fails = _failed(fn, *params)
        failed = acc.getField("f") if fails is None else acc.getField("f") | F.coalesce(fails, F.lit(False))
        return F.struct(fn(*params).cast(state_type).alias("s"), failed.alias("f"))

    zero = F.struct(initial.cast(state_type).alias("s"), F.lit(False).alias("f"))
    folded = F.aggregate(items, zero, step)
    value = (
        F.when(initial.isNull(), null_of(expr.sql_type))
        .when(collection.isNull(), initial.cast(state_type))
        .when(folded.getField("f"), null_of(expr.sql_type))
        .otherwise(folded.getField("s"))
    )
    failed = F.when(initial.isNull() | collection.isNull(), F.lit(False)).otherwise(
        F.coalesce(folded.getField("f"), F.lit(False))
    )
    return value, failed


@implements("REDUCE")
def reduce_(expr: e.Call, args: Sequence[Column]) -> Column:
    return _reduce(expr, args)[0]
