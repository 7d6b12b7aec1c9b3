"""UDAF implementations: ksqlDB's results, null handling, undo, merge and Java arithmetic."""

from __future__ import annotations

import itertools
import math
import re
from collections import namedtuple
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from qtt import sqltypes as t
from qtt.errors import QueryStoppedError, QueryStops, UnsupportedFeatureError
from qtt.plan.functions.aggregate_signatures import (
    AGGREGATE_NAMES,
    COLLECT_LIST_LIMIT,
    COLLECT_SET_LIMIT,
    NOT_LITERAL,
    Aggregate,
    resolve_aggregate,
)
from qtt.runtime.aggregates.aggregators import Udaf, udaf_for

N = NOT_LITERAL


def agg(name: str, *args: t.SqlType, params: tuple[Any, ...] = (), config: dict[str, Any] | None = None) -> Aggregate:
    literals = [N] * len(args) + list(params)
    types = list(args) + [t.BOOLEAN if isinstance(p, bool) else t.INTEGER for p in params]
    return resolve_aggregate(name, types, literals, config=config)


def run(udaf: Udaf, values: list[Any], acc: Any = None) -> list[Any]:
    """The result after each value, the way the stateful operator calls a UDAF."""
    acc = udaf.initial() if acc is None else acc
    results = []
    for value in values:
        acc = udaf.aggregate(acc, value)
        results.append(udaf.result(acc))
    return results


def fold(udaf: Udaf, values: list[Any]) -> Any:
    acc = udaf.initial()
    for value in values:
        acc = udaf.aggregate(acc, value)
    return acc


def counter(start: int = 1) -> Any:
    numbers = itertools.count(start)
    return lambda: next(numbers)


# ---------------------------------------------------------------------------- COUNT, SUM, AVG


def test_count_star_counts_rows_and_count_column_skips_nulls() -> None:
    star = udaf_for(agg("COUNT"))
    assert star.result(star.aggregate(star.aggregate(star.initial()))) == 2
    assert run(udaf_for(agg("COUNT", t.STRING)), ["a", None, "b"]) == [1, 1, 2]


def test_count_undo_goes_back_to_zero() -> None:
    udaf = udaf_for(agg("COUNT", t.BIGINT))
    acc = fold(udaf, [3, 3])
    acc = udaf.undo(udaf.undo(acc, 3), 3)
    assert udaf.result(acc) == 0
    assert udaf.undo(acc, None) == 0


@pytest.mark.parametrize(
    ("type_", "values", "expected"),
    [
        (t.INTEGER, [0, 100, None], [0, 100, 100]),
        (t.BIGINT, [2147483648, 100], [2147483648, 2147483748]),
        (t.DOUBLE, [500.9, 300.8], [500.9, 801.7]),
        # Java int arithmetic wraps around.
        (t.INTEGER, [2147483647, 1], [2147483647, -2147483648]),
        (t.BIGINT, [9223372036854775807, 1], [9223372036854775807, -9223372036854775808]),
    ],
)
def test_sum(type_: t.SqlType, values: list[Any], expected: list[Any]) -> None:
    assert run(udaf_for(agg("SUM", type_)), values) == expected


def test_sum_of_nothing_is_zero() -> None:
    udaf = udaf_for(agg("SUM", t.INTEGER))
    assert udaf.result(udaf.aggregate(udaf.initial(), None)) == 0


def test_sum_decimal_keeps_the_scale_and_overflows_like_ksqldb() -> None:
    udaf = udaf_for(agg("SUM", t.Decimal(4, 1)))
    results = run(udaf, [Decimal("5.4"), Decimal("100.1")])
    assert results == [Decimal("5.4"), Decimal("105.5")]
    assert all(r.as_tuple().exponent == -1 for r in results)
    acc = fold(udaf, [Decimal("500.9"), Decimal("300.8")])
    with pytest.raises(QueryStops) as stopped:  # ksqlDB's aggregate throws: the query stops
        udaf.aggregate(acc, Decimal("400.8"))
    stop = QueryStoppedError.found_in(str(stopped.value))
    assert stop is not None and stop.cause == "io.confluent.ksql.function.KsqlFunctionException"
    assert re.fullmatch(r"Numeric field overflow: .* Got 1202\.5", stop.cause_message or "")
    assert udaf.undo(acc, Decimal("300.8")) == Decimal("500.9")
    assert str(udaf.result(udaf.initial())) == "0.0"


def test_sum_list_sums_elements_and_skips_null_elements() -> None:
    udaf = udaf_for(agg("SUM_LIST", t.Array(t.INTEGER)))
    assert run(udaf, [[1, 1], [2, 2], None, [100, 100, None]]) == [2, 6, 6, 206]
    assert udaf.undo(206, [100, 100]) == 6


def test_avg_returns_double_and_ignores_nulls() -> None:
    assert run(udaf_for(agg("AVG", t.INTEGER)), [1, 2, 2, None]) == [
        1.0,
        1.5,
        1.6666666666666667,
        1.6666666666666667,
    ]
    udaf = udaf_for(agg("AVG", t.BIGINT))
    assert run(udaf, [-1, 9223372036854775807, 1]) == [
        -1.0,
        4.611686018427388e18,
        3.0744573456182584e18,
    ]


def test_avg_of_nothing_is_zero_and_undo_retracts() -> None:
    udaf = udaf_for(agg("AVG", t.INTEGER))
    assert udaf.result(udaf.initial()) == 0.0
    acc = fold(udaf, [1, 2])
    acc = udaf.undo(acc, 1)
    acc = udaf.aggregate(acc, 4)
    assert udaf.result(acc) == 3.0
    assert udaf.undo(acc, None) == acc


# ---------------------------------------------------------------------------- STDDEV


def test_stddev_samp_returns_the_variance_as_ksqldb_does() -> None:
    udaf = udaf_for(agg("STDDEV_SAMP", t.INTEGER))
    assert run(udaf, [0, 10, 7, None, 6]) == [
        0.0,
        50.0,
        26.333333333333332,
        26.333333333333332,
        17.583333333333332,
    ]


def test_stddev_sample_returns_the_root() -> None:
    udaf = udaf_for(agg("STDDEV_SAMPLE", t.BIGINT))
    assert run(udaf, [500, 100, 0, -6]) == [
        0.0,
        282.842712474619,
        264.5751311064591,
        239.32335169528832,
    ]


def test_stddev_uses_javas_long_arithmetic() -> None:
    udaf = udaf_for(agg("STDDEV_SAMP", t.BIGINT))
    assert run(udaf, [2147483648, 100, -2]) == [
        0.0,
        2.3058427944653343e18,
        1.5372286026580004e18,
    ]


def test_stddev_undo_and_merge() -> None:
    udaf = udaf_for(agg("STDDEV_SAMPLE", t.DOUBLE))
    acc = fold(udaf, [10.0, 12.0, 13.0])
    assert udaf.result(udaf.undo(acc, 13.0)) == pytest.approx(math.sqrt(2.0))
    merged = udaf.merge(fold(udaf, [10.0, 12.0]), fold(udaf, [13.0, 14.0, 16.0]))
    assert udaf.result(merged) == pytest.approx(2.23606797749979)


def test_stddev_samp_merges_whole_numbers_with_truncated_means() -> None:
    # StandardDeviationSampUdaf: each session's mean as a Java long quotient (-3 / 2 is -1)
    samp = udaf_for(agg("STDDEV_SAMP", t.BIGINT))
    merged = samp.merge(fold(samp, [-1, -2]), fold(samp, [-10]))
    assert merged == (-13, 3, 54.5)
    samp_int = udaf_for(agg("STDDEV_SAMP", t.INTEGER))
    assert samp_int.merge(fold(samp_int, [1, 2]), fold(samp_int, [10]))[2] == 54.5
    # StandardDeviationSampleUdaf divides as doubles: (1.5 - 10) ** 2 * 2 / 3
    sample = udaf_for(agg("STDDEV_SAMPLE", t.INTEGER))
    assert sample.merge(fold(sample, [1, 2]), fold(sample, [10]))[2] == pytest.approx(48.666666666666664)


# ---------------------------------------------------------------------------- CORRELATION


def pairs(udaf: Udaf, values: list[tuple[Any, Any]]) -> list[Any]:
    acc = udaf.initial()
    results = []
    for x, y in values:
        acc = udaf.aggregate(acc, x, y)
        results.append(udaf.result(acc))
    return results


def test_correlation_skips_pairs_with_a_null_and_is_nan_below_two_pairs() -> None:
    udaf = udaf_for(agg("CORRELATION", t.DOUBLE, t.DOUBLE))
    assert math.isnan(udaf.result(udaf.initial()))
    results = pairs(udaf, [(2.0, 1.0), (None, 5.0), (4.0, 3.0), (1.0, None), (3.0, 8.0)])
    assert [math.isnan(r) for r in results[:3]] == [True, True, False]
    assert results[2] == 1.0
    assert results[3] == 1.0
    assert results[4] == pytest.approx(0.2773500981126146)


def test_correlation_of_a_constant_column_is_nan() -> None:
    udaf = udaf_for(agg("CORRELATION", t.DOUBLE, t.DOUBLE))
    assert math.isnan(pairs(udaf, [(1.0, 7.0), (2.0, 7.0), (3.0, 7.0)])[-1])


def test_correlation_keeps_its_sums_as_a_struct() -> None:
    aggregate = agg("CORRELATION", t.DOUBLE, t.DOUBLE)
    assert aggregate.arg_types == (t.DOUBLE, t.DOUBLE)
    assert [f.name for f in aggregate.state_type.fields] == [  # type: ignore[attr-defined]
        "X_SUM",
        "Y_SUM",
        "X_SQUARED_SUM",
        "Y_SQUARED_SUM",
        "XY_SUM",
        "COUNT",
    ]
    udaf = udaf_for(aggregate)
    assert udaf.aggregate(udaf.initial(), 2, 3) == (2.0, 3.0, 4.0, 9.0, 6.0, 1)
    assert pairs(udaf, [(1, -1), (2, -2), (5, -5)])[-1] == pytest.approx(-1.0)


def test_correlation_undo_and_merge() -> None:
    udaf = udaf_for(agg("CORRELATION", t.DOUBLE, t.DOUBLE))
    acc = udaf.initial()
    for x, y in [(1.0, 2.0), (2.0, 4.5), (3.0, 5.0)]:
        acc = udaf.aggregate(acc, x, y)
    undone = udaf.undo(acc, 3.0, 5.0)
    assert udaf.result(undone) == pytest.approx(1.0)
    assert undone[5] == 2
    assert udaf.undo(acc, None, 5.0) == acc
    left = udaf.aggregate(udaf.initial(), 1.0, 2.0)
    right = udaf.aggregate(udaf.aggregate(udaf.initial(), 2.0, 4.5), 3.0, 5.0)
    assert udaf.result(udaf.merge(left, right)) == pytest.approx(udaf.result(acc))


# ---------------------------------------------------------------------------- MIN, MAX


@pytest.mark.parametrize(
    ("name", "type_", "values", "expected"),
    [
        ("MIN", t.INTEGER, [None, -5, 3, None], [None, -5, -5, -5]),
        ("MAX", t.STRING, ["B", "A", "F"], ["B", "B", "F"]),
        ("MIN", t.BYTES, [b"B", b"A"], [b"B", b"A"]),
        # Java compares bytes signed and strings by UTF-16 code unit.
        ("MAX", t.BYTES, [b"\x7f", b"\x80"], [b"\x7f", b"\x7f"]),
        ("MAX", t.STRING, ["\uffff", "\U0001f600"], ["\uffff", "\uffff"]),
        # Double.compareTo: -0.0 is below 0.0 and NaN above everything.
        ("MIN", t.DOUBLE, [0.0, -0.0], [0.0, -0.0]),
        ("MAX", t.DOUBLE, [1.0, math.inf], [1.0, math.inf]),
    ],
)
def test_min_max(name: str, type_: t.SqlType, values: list[Any], expected: list[Any]) -> None:
    results = run(udaf_for(agg(name, type_)), values)
    assert results == expected
    if type_ == t.DOUBLE:
        assert [math.copysign(1, r) for r in results] == [math.copysign(1, e) for e in expected]


def test_max_double_nan_wins() -> None:
    assert math.isnan(run(udaf_for(agg("MAX", t.DOUBLE)), [1.0, math.nan, 2.0])[-1])


def test_min_decimal_keeps_the_return_scale() -> None:
    results = run(udaf_for(agg("MIN", t.Decimal(4, 2))), [Decimal("5.1"), Decimal("-10.12")])
    assert [str(r) for r in results] == ["5.10", "-10.12"]


def test_stream_only_aggregates_cannot_undo() -> None:
    for udaf in (
        udaf_for(agg("MIN", t.INTEGER)),
        udaf_for(agg("LATEST_BY_OFFSET", t.INTEGER)),
        udaf_for(agg("COLLECT_SET", t.INTEGER)),
        udaf_for(agg("TOPK", t.INTEGER, params=(2,))),
    ):
        with pytest.raises(NotImplementedError, match="cannot undo"):
            udaf.undo(udaf.initial(), 1)


# ---------------------------------------------------------------------------- COLLECT_*


def test_collect_list_keeps_nulls_and_complex_values() -> None:
    udaf = udaf_for(agg("COLLECT_LIST", t.Array(t.INTEGER)))
    assert run(udaf, [[1], [None], None]) == [[[1]], [[1], [None]], [[1], [None], None]]


def test_collect_list_limit_and_undo_of_the_last_equal_value() -> None:
    limited = udaf_for(agg("COLLECT_LIST", t.INTEGER, config={COLLECT_LIST_LIMIT: "1"}))
    assert run(limited, [0, 100]) == [[0], [0]]
    assert limited.undo([0], 100) == [0]
    udaf = udaf_for(agg("COLLECT_LIST", t.INTEGER))
    assert udaf.undo([1, 2, 1, 3], 1) == [1, 2, 3]
    assert udaf.merge([1], [2, 3]) == [1, 2, 3]
    assert limited.merge([1], [2, 3]) == [1]


def test_collect_set_is_distinct_in_first_seen_order() -> None:
    udaf = udaf_for(agg("COLLECT_SET", t.DOUBLE))
    with_nan = run(udaf, [math.nan, 1.0, math.nan])[-1]
    assert len(with_nan) == 2 and math.isnan(with_nan[0])
    final = run(udaf, [1.0, 2.0, 1.0, None, None, -0.0, 0.0])[-1]
    assert final == [1.0, 2.0, None, -0.0, 0.0]
    limited = udaf_for(agg("COLLECT_SET", t.INTEGER, config={COLLECT_SET_LIMIT: 2}))
    assert run(limited, [1, 1, 2, 3]) == [[1], [1], [1, 2], [1, 2]]
    assert limited.merge([1], [1, 2, 3]) == [1, 2]


def test_collect_set_compares_structs_by_value() -> None:
    Row = namedtuple("Row", ["A", "B"])
    udaf = udaf_for(agg("COLLECT_SET", t.Struct((t.Field("A", t.STRING), t.Field("B", t.INTEGER)))))
    assert run(udaf, [Row("x", 1), ("x", 1), Row("y", 1)])[-1] == [("x", 1), ("y", 1)]


# ---------------------------------------------------------------------------- BY_OFFSET


@pytest.mark.parametrize(
    ("params", "values", "expected"),
    [
        ((), [12, None, 13], [12, 12, 13]),
        ((True,), [12, None, 13], [12, 12, 13]),
        ((False,), [12, None, 13], [12, None, 13]),
        ((), [None, None], [None, None]),
        ((2,), [12, None, 21, 22], [[12], [12], [12, 21], [21, 22]]),
        ((2, True), [12, None, 13], [[12], [12], [12, 13]]),
        ((2, False), [12, None, 13], [[12], [12, None], [None, 13]]),
        ((2,), [None, None], [[], []]),
    ],
)
def test_latest_by_offset(params: tuple[Any, ...], values: list[Any], expected: list[Any]) -> None:
    udaf = udaf_for(agg("LATEST_BY_OFFSET", t.INTEGER, params=params), sequence=counter())
    assert run(udaf, values) == expected


@pytest.mark.parametrize(
    ("params", "values", "expected"),
    [
        ((), [None, 12, 13], [None, 12, 12]),
        ((False,), [None, 12], [None, None]),
        ((2,), [None, 12, 13, 14], [[], [12], [12, 13], [12, 13]]),
        ((2, False), [None, 12, 13], [[None], [None, 12], [None, 12]]),
    ],
)
def test_earliest_by_offset(params: tuple[Any, ...], values: list[Any], expected: list[Any]) -> None:
    udaf = udaf_for(agg("EARLIEST_BY_OFFSET", t.INTEGER, params=params), sequence=counter())
    assert run(udaf, values) == expected


def test_by_offset_state_is_seq_and_value() -> None:
    udaf = udaf_for(agg("LATEST_BY_OFFSET", t.STRING), sequence=counter(7))
    assert udaf.initial() == (7, None)
    assert udaf.aggregate((7, None), "a") == (8, "a")
    # A sequence that falls behind the state (a restarted worker) still moves forward.
    assert udaf.aggregate((100, "a"), "b") == (101, "b")


def test_latest_by_offset_merges_session_windows_as_ksqldb() -> None:
    seq = counter()
    ignoring = udaf_for(agg("LATEST_BY_OFFSET", t.INTEGER), sequence=seq)
    earlier = ignoring.aggregate(ignoring.initial(), 1)
    # The merged session starts from a fresh (newer) empty accumulator.
    assert ignoring.result(ignoring.merge(ignoring.initial(), earlier)) == 1
    keeping = udaf_for(agg("LATEST_BY_OFFSET", t.INTEGER, params=(False,)), sequence=seq)
    assert keeping.result(keeping.merge(keeping.initial(), earlier)) is None
    n = udaf_for(agg("LATEST_BY_OFFSET", t.INTEGER, params=(2, False)), sequence=seq)
    a = n.aggregate(n.initial(), 1)
    b = n.aggregate(n.initial(), None)
    merged = n.merge(n.merge(n.initial(), a), b)
    assert n.result(n.aggregate(merged, 2)) == [None, 2]


def test_earliest_by_offset_merge_keeps_the_older() -> None:
    udaf = udaf_for(agg("EARLIEST_BY_OFFSET", t.INTEGER), sequence=counter())
    first = udaf.aggregate(udaf.initial(), 1)
    second = udaf.aggregate(udaf.initial(), 2)
    assert udaf.result(udaf.merge(second, first)) == 1
    assert udaf.merge(None, first) == first and udaf.merge(None, None) is None


def test_accumulators_from_state_may_be_rows_and_are_never_mutated() -> None:
    Entry = namedtuple("Entry", ["SEQ", "VAL"])
    udaf = udaf_for(agg("LATEST_BY_OFFSET", t.INTEGER, params=(2,)), sequence=counter(10))
    state = [Entry(1, 5), Entry(2, 6)]
    assert udaf.result(udaf.aggregate(state, 7)) == [6, 7]
    assert state == [Entry(1, 5), Entry(2, 6)]
    avg = udaf_for(agg("AVG", t.INTEGER))
    assert avg.result(avg.aggregate(namedtuple("S", ["SUM", "COUNT"])(3, 2), 3)) == 2.0


def test_default_sequence_increases() -> None:
    udaf = udaf_for(agg("LATEST_BY_OFFSET", t.INTEGER))
    first = udaf.aggregate(udaf.initial(), 1)
    second = udaf.aggregate(first, 2)
    assert second[0] > first[0] > 0


# ---------------------------------------------------------------------------- others


def test_count_distinct_ignores_nulls() -> None:
    udaf = udaf_for(agg("COUNT_DISTINCT", t.STRING))
    assert run(udaf, ["a", "b", "a", None, "c"]) == [1, 2, 2, 2, 3]
    assert udaf.result(udaf.merge(["a", "b"], ["b", "c"])) == 3


@pytest.mark.parametrize(
    ("name", "type_", "values", "expected"),
    [
        ("TOPK", t.INTEGER, [0, 100, 99, 7, 100], [100, 100, 99]),
        ("TOPK", t.STRING, ["a", "b", "c", "b", "d"], ["d", "c", "b"]),
        ("TOPK", t.DOUBLE, [1.5, None, 2.5], [2.5, 1.5]),
        ("TOPKDISTINCT", t.INTEGER, [0, 100, 99, 7, 100], [100, 99, 7]),
    ],
)
def test_topk(name: str, type_: t.SqlType, values: list[Any], expected: list[Any]) -> None:
    assert run(udaf_for(agg(name, type_, params=(3,))), values)[-1] == expected


def test_topk_merge() -> None:
    udaf = udaf_for(agg("TOPK", t.INTEGER, params=(3,)))
    assert udaf.merge([9, 5, 1], [7, 5]) == [9, 7, 5]
    distinct = udaf_for(agg("TOPKDISTINCT", t.INTEGER, params=(3,)))
    assert distinct.merge([9, 5, 1], [7, 5]) == [9, 7, 5]
    assert distinct.merge([5], [5]) == [5]


@pytest.mark.parametrize("name", ["TOPK", "TOPKDISTINCT"])
def test_topk_below_one_fails_where_ksqldb_fails(name: str) -> None:
    # k = 0: ksqlDB reads or replaces entry -1 of the empty list at the first value
    none = udaf_for(agg(name, t.INTEGER, params=(0,)))
    assert none.aggregate([], None) == []
    with pytest.raises(QueryStops, match="IndexOutOfBoundsException"):
        none.aggregate([], 4)
    # k < 0: the list never fills, so every value stays, until a session merge sizes a list with it
    every = udaf_for(agg(name, t.INTEGER, params=(-1,)))
    assert run(every, [3, 9, None, 3, 5])[-1] == ([9, 5, 3, 3] if name == "TOPK" else [9, 5, 3])
    with pytest.raises(QueryStops, match="Illegal Capacity: -1"):
        every.merge([], [9])


def test_topk_with_additional_columns_orders_by_the_sort_value_and_keeps_ties_in_arrival_order() -> None:
    udaf = udaf_for(agg("TOPK", t.INTEGER, t.BOOLEAN, t.STRING, params=(3,)))
    acc = udaf.initial()
    rows = [(10, True, "ash"), (60, True, "birch"), (None, False, "cedar"), (45, False, "elm"), (60, False, "fir")]
    for row in rows:
        acc = udaf.aggregate(acc, *row)
    assert udaf.result(acc) == [(60, True, "birch"), (60, False, "fir"), (45, False, "elm")]
    merged = udaf.merge([(9, None, "a")], [(12, True, "b"), (9, False, "c")])
    assert merged == [(12, True, "b"), (9, None, "a"), (9, False, "c")]


def test_collect_map_keeps_the_latest_value_of_each_key() -> None:
    levels = t.Map(t.STRING, t.INTEGER)  # no longer planned (not ksqlDB's), run for persisted plans
    udaf = udaf_for(Aggregate("COLLECT_MAP", (levels,), (), levels, levels))
    assert run(udaf, [{"a": 1}, None, {"b": 2, "a": 3}]) == [{"a": 1}, {"a": 1}, {"a": 3, "b": 2}]


def test_attr_is_the_one_value_held_or_null() -> None:
    udaf = udaf_for(agg("ATTR", t.STRING))
    assert run(udaf, ["oak", "oak", "elm"]) == ["oak", "oak", None]
    # null is a value of its own: a group that held it and another value has no single value
    assert run(udaf, [None, "oak"]) == [None, None]
    acc = fold(udaf, ["oak", "elm"])
    assert udaf.result(udaf.undo(acc, "elm")) == "oak"
    assert udaf.result(udaf.undo(udaf.undo(acc, "elm"), "oak")) is None
    assert udaf.result(udaf.merge(fold(udaf, ["oak"]), fold(udaf, ["oak"]))) == "oak"
    assert udaf.result(udaf.merge(fold(udaf, ["oak"]), fold(udaf, ["elm"]))) is None


def test_topkdistinct_decimal_keeps_the_scale() -> None:
    udaf = udaf_for(agg("TOPKDISTINCT", t.Decimal(4, 2), params=(2,)))
    assert [str(v) for v in run(udaf, [Decimal("1.5"), Decimal("2.25")])[-1]] == ["2.25", "1.50"]


def test_histogram_counts_undoes_and_limits() -> None:
    udaf = udaf_for(agg("HISTOGRAM", t.STRING))
    acc = fold(udaf, ["a", "b", "a", None])
    assert udaf.result(acc) == {"a": 2, "b": 1}
    assert udaf.undo(udaf.undo(acc, "b"), "a") == {"a": 1}
    full = {str(i): 1 for i in range(1000)}
    assert udaf.aggregate(full, "new") == full
    assert udaf.aggregate(full, "0")["0"] == 2
    assert udaf.merge({"a": 1}, {"a": 2, "b": 1}) == {"a": 3, "b": 1}
    # a table's update undoes a value the limit kept out: HistogramUdaf.undo unboxes a null count
    with pytest.raises(QueryStops, match="NullPointerException"):
        udaf.undo(full, "new")
    assert udaf.undo(acc, None) == {"a": 2, "b": 1}  # nulls were never counted here


def test_every_supported_aggregate_has_an_implementation() -> None:
    samples = {
        "SUM_LIST": [t.Array(t.INTEGER)],
        "HISTOGRAM": [t.STRING],
        "COUNT": [],
        "CORRELATION": [t.DOUBLE, t.DOUBLE],
        "COLLECT_MAP": [t.Map(t.STRING, t.INTEGER)],
    }
    implemented = set()
    for name in sorted(AGGREGATE_NAMES):
        params = (2,) if name.startswith("TOPK") else ()
        try:
            aggregate = agg(name, *samples.get(name, [t.INTEGER]), params=params)
        except UnsupportedFeatureError:
            continue
        udaf = udaf_for(aggregate)
        udaf.result(udaf.initial())
        implemented.add(name)
    assert len(implemented) == 18


def test_udafs_do_not_import_pyspark(modules_loaded_by: Callable[..., set[str]]) -> None:
    loaded = modules_loaded_by("qtt.runtime.aggregates.aggregators")
    assert "qtt.runtime.aggregates.aggregators" in loaded
    assert "pyspark" not in loaded


def test_the_runtime_implements_exactly_the_aggregates_the_planner_runs() -> None:
    from qtt.plan.functions.aggregate_signatures import RUN_AGGREGATES
    from qtt.runtime.aggregates.aggregators import implemented

    assert implemented() == RUN_AGGREGATES
