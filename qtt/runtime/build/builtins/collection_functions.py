"""ARRAY and MAP functions, with Java's ``List`` and ``Map`` semantics."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.casts import java_string
from qtt.runtime.build.builtins.comparisons import comparable, has_java_order, java_order, keyed
from qtt.runtime.build.builtins.java.hashmap_order import java_map_entries
from qtt.runtime.build.builtins.registry import implements
from qtt.runtime.spark.spark_types import to_spark


@implements("ARRAY_LENGTH")
def _array_length(expr: e.Call, args: Sequence[Column]) -> Column:
    # Spark's size(null) is -1 when ANSI mode is off; ksqlDB returns null.
    return F.when(args[0].isNull(), F.lit(None)).otherwise(F.size(args[0]))


@implements("ARRAY_CONTAINS")
def _array_contains(expr: e.Call, args: Sequence[Column]) -> Column:
    # Java's List.contains: false for a null list, true for a null value the list holds.
    array, value = args
    return (
        F.when(array.isNull(), F.lit(False))
        .when(value.isNull(), F.exists(array, lambda x: x.isNull()))
        .otherwise(F.coalesce(F.array_contains(array, value), F.lit(False)))
    )


def _element_type(expr: e.Call) -> t.SqlType:
    array_type = expr.args[0].result_type
    assert isinstance(array_type, t.Array)
    return array_type.element


@implements("ARRAY_SORT")
def _array_sort(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB sorts nulls last in both directions (Java's order: java_order); an unknown or null
    # direction gives null.
    element = _element_type(expr)
    if has_java_order(element):
        array = F.transform(args[0], lambda x: keyed(x, element))
        ascending = F.transform(F.array_sort(array), lambda x: x["v"])
        descending = F.transform(F.sort_array(array, asc=False), lambda x: x["v"])
    else:
        ascending, descending = F.array_sort(args[0]), F.sort_array(args[0], asc=False)
    if len(args) == 1:
        return ascending
    direction = F.upper(args[1])
    return F.when(direction.isin("ASC", "ASCENDING"), ascending).when(direction.isin("DESC", "DESCENDING"), descending)


@implements("ARRAY_MAX")
def _array_max(expr: e.Call, args: Sequence[Column]) -> Column:
    return _array_extreme(F.array_max, expr, args[0])


@implements("ARRAY_MIN")
def _array_min(expr: e.Call, args: Sequence[Column]) -> Column:
    return _array_extreme(F.array_min, expr, args[0])


def _array_extreme(pick: Callable[[Column], Column], expr: e.Call, array: Column) -> Column:
    # Nulls are skipped, as Spark's array_max and array_min skip them; Java's order (java_order).
    element = _element_type(expr)
    if has_java_order(element):
        return pick(F.transform(array, lambda x: keyed(x, element)))["v"]
    return pick(array)


@implements("ARRAY_REMOVE")
def _array_remove(expr: e.Call, args: Sequence[Column]) -> Column:
    # Objects.equals: a null victim removes the nulls.
    array_type = expr.args[0].result_type
    assert isinstance(array_type, t.Array)
    victim = comparable(args[1], expr.args[1].result_type)
    return F.filter(args[0], lambda x: ~comparable(x, array_type.element).eqNullSafe(victim))


@implements("ARRAY_CONCAT")
def _array_concat(expr: e.Call, args: Sequence[Column]) -> Column:
    # A null array counts as empty, unless both are null.
    first, second = args
    return F.when(first.isNull(), second).when(second.isNull(), first).otherwise(F.concat(first, second))


@implements("ARRAY_JOIN")
def _array_join(expr: e.Call, args: Sequence[Column]) -> Column:
    # Elements print as Java's toString, a null element as "null"; the default delimiter is
    # "," and a null delimiter joins with nothing.
    array_type = expr.args[0].result_type
    assert isinstance(array_type, t.Array)
    element = array_type.element
    delimiter = F.coalesce(args[1], F.lit("")) if len(args) > 1 else F.lit(",")
    if element.base not in _JOINABLE:
        # ArrayJoin throws on any other non-null element (a date, bytes, a collection): null.
        nulls = F.transform(args[0], lambda x: F.lit("null"))
        return F.when(~F.exists(args[0], lambda x: x.isNotNull()), F.call_function("array_join", nulls, delimiter))
    texts = F.transform(args[0], lambda x: java_string(x, element))
    return F.call_function("array_join", texts, delimiter)


#: The element types ArrayJoin prints (its KSQL_PRIMITIVES).
_JOINABLE = frozenset(["BOOLEAN", "INTEGER", "BIGINT", "DOUBLE", "DECIMAL", "STRING", "NULL"])


@implements("MAP_UNION")
def _map_union(expr: e.Call, args: Sequence[Column]) -> Column:
    # The second map wins on a shared key; a null map counts as empty unless both are null.
    first, second = args
    merged = F.map_concat(F.map_filter(first, lambda k, v: ~F.array_contains(F.map_keys(second), k)), second)
    return F.when(first.isNull(), second).when(second.isNull(), first).otherwise(merged)


@implements("MAP_KEYS")
def _map_keys(expr: e.Call, args: Sequence[Column]) -> Column:
    # In the map's java.util.HashMap order, as ksqlDB lists ``keySet()`` (hashmap_order).
    return F.transform(java_map_entries(args[0], expr.args[0]), lambda entry: entry["key"])


@implements("MAP_VALUES")
def _map_values(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.transform(java_map_entries(args[0], expr.args[0]), lambda entry: entry["value"])


@implements("ENTRIES")
def _entries(expr: e.Call, args: Sequence[Column]) -> Column:
    # Unsorted: the map's HashMap order; sorted: by key, as String.compareTo (java_order).
    entries = F.transform(
        java_map_entries(args[0], expr.args[0]),
        lambda entry: F.struct(entry["key"].alias("K"), entry["value"].alias("V")),
    )
    by_key = F.transform(
        F.array_sort(F.transform(entries, lambda x: F.struct(java_order(x["K"], t.STRING).alias("k"), x.alias("e")))),
        lambda x: x["e"],
    )
    # ``sorted`` is a Java boolean: null fails the call.
    return F.when(args[1], by_key).when(~args[1], entries)


@implements("GENERATE_SERIES")
def _generate_series(expr: e.Call, args: Sequence[Column]) -> Column:
    start, end = args[0], args[1]
    ints = expr.args[0].result_type == t.INTEGER
    # ksqlDB's INTEGER overload computes in Java ints: end - start wraps, and so does each
    # element; the series has 1 + diff / step elements of that wrapped difference.
    diff = _java_int(end.cast("bigint") - start.cast("bigint")) if ints else end - start
    if len(args) == 2:
        step = F.when(diff > 0, F.lit(1)).otherwise(F.lit(-1)).cast(to_spark(expr.args[0].result_type))
    else:
        step = args[2]
    # ksqlDB fails (so emits null) for a zero step or one that points away from the end;
    # Spark's sequence would fail the whole query, as it would for a series longer than its
    # largest array, where ksqlDB runs out of memory: null too.
    wrong_way = (step == 0) | ((diff > 0) & (step < 0)) | ((diff < 0) & (step > 0))
    length = (end.cast("double") - start.cast("double")) / step.cast("double") + 1
    failed = start.isNull() | end.isNull() | step.isNull() | wrong_way | (length > _LARGEST_ARRAY)
    if not ints:
        # A BIGINT difference that wraps is null here (Spark's sequence cannot walk it).
        away = ((end > start) & (step < 0)) | ((end < start) & (step > 0))
        return F.when(~failed & ~away, F.sequence(start, end, step))
    size = _java_int(F.lit(1) + F.call_function("div", diff, step))
    # MIN_VALUE / -1 overflows to a negative size, and new ArrayList<>(negative) throws.
    series = F.transform(
        F.sequence(F.lit(0), size - 1), lambda i: _java_int(start.cast("bigint") + i.cast("bigint") * step)
    )
    return F.when(~failed & (size > 0), series)


def _java_int(value: Column) -> Column:
    """A BIGINT narrowed as Java's ``(int)`` narrows a long: it wraps around."""
    return (F.pmod(value + F.lit(2**31), F.lit(2**32)) - F.lit(2**31)).cast("int")


#: Spark's largest array (ByteArrayMethods.MAX_ROUNDED_ARRAY_LENGTH)
_LARGEST_ARRAY = 2_147_483_632
