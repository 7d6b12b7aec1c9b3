"""Aggregate resolution: column/init split, widening, return and state types, errors."""

from __future__ import annotations

import decimal
from typing import Any

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.functions.aggregate_signatures import (
    AGGREGATE_NAMES,
    COLLECT_LIST_LIMIT,
    COLLECT_SET_LIMIT,
    NOT_LITERAL,
    TABLE_AGGREGATES,
    is_aggregate,
    resolve_aggregate,
    takes_no_arguments,
)
from qtt.plan.functions.signature_matching import NULL

N = NOT_LITERAL
DEC = t.Decimal(4, 1)


def entry(value: t.SqlType) -> t.Struct:
    return t.Struct((t.Field("SEQ", t.BIGINT), t.Field("VAL", value)))


@pytest.mark.parametrize(
    ("name", "args", "literals", "arg_types", "params", "returns", "state"),
    [
        ("COUNT", [], [], (), (), t.BIGINT, t.BIGINT),
        ("count", [t.STRING], [N], (t.STRING,), (), t.BIGINT, t.BIGINT),
        # COUNT(1): a literal is a column argument when the function has no init parameters.
        ("COUNT", [t.INTEGER], [1], (t.INTEGER,), (), t.BIGINT, t.BIGINT),
        ("SUM", [t.INTEGER], [N], (t.INTEGER,), (), t.INTEGER, t.INTEGER),
        ("SUM", [t.BIGINT], [N], (t.BIGINT,), (), t.BIGINT, t.BIGINT),
        ("SUM", [t.DOUBLE], [2.0], (t.DOUBLE,), (), t.DOUBLE, t.DOUBLE),
        ("SUM", [DEC], [N], (DEC,), (), DEC, DEC),
        ("SUM_LIST", [t.Array(t.INTEGER)], [N], (t.Array(t.INTEGER),), (), t.INTEGER, t.INTEGER),
        (
            "AVG",
            [t.INTEGER],
            [N],
            (t.INTEGER,),
            (),
            t.DOUBLE,
            t.Struct((t.Field("SUM", t.INTEGER), t.Field("COUNT", t.BIGINT))),
        ),
        (
            "STDDEV_SAMP",
            [t.BIGINT],
            [N],
            (t.BIGINT,),
            (),
            t.DOUBLE,
            t.Struct((t.Field("SUM", t.BIGINT), t.Field("COUNT", t.BIGINT), t.Field("M2", t.DOUBLE))),
        ),
        ("MIN", [t.TIMESTAMP], [N], (t.TIMESTAMP,), (), t.TIMESTAMP, t.TIMESTAMP),
        ("MAX", [t.BYTES], [N], (t.BYTES,), (), t.BYTES, t.BYTES),
        ("MAX", [DEC], [N], (DEC,), (), DEC, DEC),
        (
            "COLLECT_LIST",
            [t.Struct((t.Field("A", t.STRING),))],
            [N],
            (t.Struct((t.Field("A", t.STRING),)),),
            (None,),
            t.Array(t.Struct((t.Field("A", t.STRING),))),
            t.Array(t.Struct((t.Field("A", t.STRING),))),
        ),
        ("COLLECT_SET", [t.STRING], [N], (t.STRING,), (None,), t.Array(t.STRING), None),
        ("LATEST_BY_OFFSET", [t.INTEGER], [N], (t.INTEGER,), (True,), t.INTEGER, None),
        ("LATEST_BY_OFFSET", [DEC, t.BOOLEAN], [N, False], (DEC,), (False,), DEC, entry(DEC)),
        (
            "EARLIEST_BY_OFFSET",
            [t.STRING, t.INTEGER],
            [N, 2],
            (t.STRING,),
            (2, True),
            t.Array(t.STRING),
            t.Array(entry(t.STRING)),
        ),
        (
            "LATEST_BY_OFFSET",
            [t.STRING, t.INTEGER, t.BOOLEAN],
            [N, 3, False],
            (t.STRING,),
            (3, False),
            t.Array(t.STRING),
            None,
        ),
        ("COUNT_DISTINCT", [t.STRING], [N], (t.STRING,), (), t.BIGINT, t.Array(t.STRING)),
        ("TOPK", [t.INTEGER, t.INTEGER], [N, 3], (t.INTEGER,), (3,), t.Array(t.INTEGER), None),
        ("TOPKDISTINCT", [DEC, t.INTEGER], [N, 2], (DEC,), (2,), t.Array(DEC), t.Array(DEC)),
        (
            "HISTOGRAM",
            [t.STRING],
            [N],
            (t.STRING,),
            (),
            t.Map(t.STRING, t.BIGINT),
            t.Map(t.STRING, t.BIGINT),
        ),
    ],
)
def test_resolution(
    name: str,
    args: list[t.SqlType],
    literals: list[Any],
    arg_types: tuple[t.SqlType, ...],
    params: tuple[Any, ...],
    returns: t.SqlType,
    state: t.SqlType | None,
) -> None:
    agg = resolve_aggregate(name, args, literals)
    assert agg.name == name.upper()
    assert agg.arg_types == arg_types
    assert agg.params == params
    assert agg.return_type == returns
    if state is not None:
        assert agg.state_type == state


def test_latest_by_offset_keeps_ksqldbs_sequence_struct() -> None:
    agg = resolve_aggregate("LATEST_BY_OFFSET", [t.INTEGER], [N])
    assert str(agg.state_type) == "STRUCT<`SEQ` BIGINT, `VAL` INTEGER>"


@pytest.mark.parametrize(
    ("name", "key", "value", "expected"),
    [
        ("COLLECT_LIST", COLLECT_LIST_LIMIT, "1", (1,)),
        ("COLLECT_LIST", COLLECT_LIST_LIMIT, 5, (5,)),
        ("COLLECT_LIST", COLLECT_LIST_LIMIT, "-1", (None,)),
        ("COLLECT_SET", COLLECT_SET_LIMIT, "2", (2,)),
        # Each function reads its own key only.
        ("COLLECT_SET", COLLECT_LIST_LIMIT, "2", (None,)),
    ],
)
def test_collect_limits_come_from_config(name: str, key: str, value: object, expected: tuple[Any, ...]) -> None:
    assert resolve_aggregate(name, [t.INTEGER], [N], config={key: value}).params == expected


def test_table_support_follows_ksqldbs_table_udafs() -> None:
    def table(name: str, *args: t.SqlType) -> bool:
        return resolve_aggregate(name, list(args), [N] * len(args)).supports_tables

    assert table("COUNT") and table("SUM", t.INTEGER) and table("AVG", t.DOUBLE)
    assert table("COLLECT_LIST", t.INTEGER) and table("HISTOGRAM", t.STRING)
    assert table("STDDEV_SAMP", t.INTEGER) and table("STDDEV_SAMPLE", t.INTEGER)
    assert table("CORRELATION", t.DOUBLE, t.DOUBLE) and table("CORRELATION", t.BIGINT, t.BIGINT)
    assert not table("MIN", t.INTEGER) and not table("MAX", t.INTEGER)
    assert not table("LATEST_BY_OFFSET", t.INTEGER) and not table("COLLECT_SET", t.INTEGER)
    assert not table("COUNT_DISTINCT", t.INTEGER)


def test_correlation_takes_two_columns_of_one_number_type() -> None:
    for type_ in (t.DOUBLE, t.INTEGER, t.BIGINT):
        resolved = resolve_aggregate("CORRELATION", [type_, type_], [N, N])
        assert resolved.arg_types == (type_, type_) and resolved.return_type == t.DOUBLE


def test_only_count_takes_no_arguments() -> None:
    assert takes_no_arguments("count")
    assert not takes_no_arguments("AVG") and not takes_no_arguments("TOPK") and not takes_no_arguments("NOPE")


def test_is_aggregate_is_case_insensitive() -> None:
    assert is_aggregate("count") and is_aggregate("Latest_By_Offset") and is_aggregate("TOPK")
    assert not is_aggregate("ABS") and not is_aggregate("SUBSTRING")
    assert "CORRELATION" in AGGREGATE_NAMES


@pytest.mark.parametrize(
    ("name", "args", "literals", "message"),
    [
        ("SUM", [t.STRING], [N], "Function 'SUM' does not accept parameters (STRING)."),
        ("AVG", [t.BOOLEAN], [N], "Function 'avg' does not accept parameters (BOOLEAN)."),
        # aggregates are looked up without implicit casts: AVG has no DECIMAL overload
        ("AVG", [DEC], [N], "Function 'avg' does not accept parameters (DECIMAL(4, 1))."),
        ("CORRELATION", [t.INTEGER, t.BIGINT], [N, N], "does not accept parameters (INTEGER, BIGINT)."),
        ("MIN", [t.BOOLEAN], [N], "Function 'MIN' does not accept parameters (BOOLEAN)."),
        ("HISTOGRAM", [t.INTEGER], [N], "does not accept parameters (INTEGER)."),
        ("CORRELATION", [t.DOUBLE], [N], "Function 'correlation' does not accept parameters (DOUBLE)."),
        ("CORRELATION", [t.STRING, t.DOUBLE], [N, N], "does not accept parameters (STRING, DOUBLE)."),
        ("SUM", [t.INTEGER, t.INTEGER], [N, N], "does not accept parameters (INTEGER, INTEGER)."),
        ("TOPK", [t.INTEGER], [N], "Function 'TOPK' does not accept parameters (INTEGER)."),
        ("TOPK", [t.INTEGER, t.BIGINT], [N, 3], "does not accept parameters (INTEGER, BIGINT)."),
        ("TOPK", [DEC, t.INTEGER], [N, 3], "does not accept parameters (DECIMAL(4, 1), INTEGER)."),
        ("SUM_LIST", [t.Array(DEC)], [N], "does not accept parameters (ARRAY<DECIMAL(4, 1)>)."),
        ("SUM", [NULL], [None], "Can't infer a type of null."),
        (
            "TOPK",
            [t.INTEGER, t.INTEGER],
            [N, N],
            "Parameter 2 passed to function TOPK must be a literal constant, but was expression: 'K'",
        ),
        ("LATEST_BY_OFFSET", [t.INTEGER, t.INTEGER], [N, 0], "latestN must be 1 or greater"),
        ("EARLIEST_BY_OFFSET", [t.INTEGER, t.INTEGER], [N, -1], "earliestN must be 1 or greater"),
        # a NULL init argument fits both (T, int) and (T, boolean): ksqlDB's UdfIndex ties them
        ("LATEST_BY_OFFSET", [t.INTEGER, NULL], [N, None], "ambiguous method parameters (INTEGER, null)."),
        ("LATEST_BY_OFFSET", [t.INTEGER, t.INTEGER, NULL], [N, 2, None], "Parameter 3 passed to function"),
        ("FOO", [t.INTEGER], [N], "Can't find any functions with the name 'FOO'."),
    ],
)
def test_errors(name: str, args: list[t.SqlType], literals: list[Any], message: str) -> None:
    with pytest.raises(StatementError) as info:
        resolve_aggregate(name, args, literals, arg_sql=["X", "K"][: len(args)])
    assert message in str(info.value)


def test_error_lists_the_alternatives() -> None:
    with pytest.raises(StatementError) as info:
        resolve_aggregate("SUM", [t.STRING], [N])
    assert "Valid alternatives are:\n  SUM(INTEGER)\n" in str(info.value)


@pytest.mark.parametrize("k", [0, -1])
def test_a_k_below_one_is_planned_as_ksqldb_plans_it(k: int) -> None:
    # ksqlDB's factories take any k: the query fails once it runs (see tests/runtime)
    assert resolve_aggregate("TOPK", [t.INTEGER, t.STRING, t.INTEGER], [N, N, k]).params == (k,)
    assert resolve_aggregate("TOPKDISTINCT", [t.INTEGER, t.INTEGER], [N, k]).params == (k,)


#: An argument list each aggregate runs with; the rest take one INTEGER column.
SAMPLE_ARGS: dict[str, tuple[list[t.SqlType], list[Any]]] = {
    "COUNT": ([], []),
    "SUM_LIST": ([t.Array(t.INTEGER)], [N]),
    "HISTOGRAM": ([t.STRING], [N]),
    "TOPK": ([t.INTEGER, t.INTEGER], [N, 2]),
    "TOPKDISTINCT": ([t.INTEGER, t.INTEGER], [N, 2]),
    "CORRELATION": ([t.DOUBLE, t.DOUBLE], [N, N]),
    "COLLECT_MAP": ([t.Map(t.STRING, t.INTEGER)], [N]),
}


@pytest.mark.parametrize("name", sorted(AGGREGATE_NAMES))
def test_every_aggregate_in_the_table_resolves_or_is_a_named_unsupported_feature(name: str) -> None:
    args, literals = SAMPLE_ARGS.get(name, ([t.INTEGER], [N]))
    try:
        resolved = resolve_aggregate(name, args, literals)
    except UnsupportedFeatureError as error:
        assert name in error.feature
    else:
        assert resolved.name == name


@pytest.mark.parametrize("name", ["SUM_LIST", "ATTR"])
def test_aggregates_beyond_the_reference_page_are_in_the_table(name: str) -> None:
    assert is_aggregate(name)


def test_an_aggregate_only_persisted_plans_hold_is_an_unknown_function_to_the_planner() -> None:
    assert not is_aggregate("COLLECT_MAP")  # ksqlDB never merged it
    with pytest.raises(StatementError, match="Can't find any functions with the name 'COLLECT_MAP'"):
        resolve_aggregate("COLLECT_MAP", [t.Map(t.STRING, t.INTEGER)], [N])


@pytest.mark.parametrize("name", ["STDDEV_POP", "VAR_SAMP", "VAR_POP"])
def test_names_ksqldb_does_not_define_are_not_aggregates(name: str) -> None:
    assert not is_aggregate(name)


def test_topk_with_additional_columns() -> None:
    resolved = resolve_aggregate("TOPK", [t.BIGINT, t.STRING, t.Array(t.INTEGER), t.INTEGER], [N, N, N, 3])
    assert str(resolved.return_type) == "ARRAY<STRUCT<`sort_col` BIGINT, `col0` STRING, `col1` ARRAY<INTEGER>>>"
    assert resolved.state_type == resolved.return_type and resolved.params == (3,)


def test_topk_with_additional_columns_names_its_sort_types() -> None:
    with pytest.raises(StatementError) as info:
        resolve_aggregate("TOPK", [t.BOOLEAN, t.STRING, t.INTEGER], [N, N, 3])
    assert "TOPK(STRING, ANY..., INTEGER)" in str(info.value)


def test_attr_returns_its_column_type_and_counts_values() -> None:
    resolved = resolve_aggregate("ATTR", [t.STRING], [N])
    assert resolved.return_type == t.STRING
    assert str(resolved.state_type) == "ARRAY<STRUCT<`VALUE` STRING, `COUNT` INTEGER>>"
    assert resolved.supports_tables


def test_table_aggregates_are_aggregates() -> None:
    assert TABLE_AGGREGATES < AGGREGATE_NAMES


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, None),  # neither a Number nor a String: Collect.configure ignores it
        ([3], None),
        (2**32 + 1, 1),  # Long.intValue() keeps the low 32 bits
        (2**32 - 1, None),  # ... which here are -1: no limit
        (decimal.Decimal("2.9"), 2),  # Double.intValue() truncates
        (1e12, 2**31 - 1),  # ... and saturates
        ("+4", 4),
        ("-3", None),
    ],
)
def test_collect_limits_are_read_as_ksqldbs_collect_reads_them(value: object, expected: int | None) -> None:
    config = {COLLECT_LIST_LIMIT: value}
    assert resolve_aggregate("COLLECT_LIST", [t.INTEGER], [N], config=config).params == (expected,)


@pytest.mark.parametrize("text", [" 2", "1_0", "2.0", "", "2147483648", "many"])
def test_a_collect_limit_text_parse_int_refuses_fails_the_factory_invoker(text: str) -> None:
    with pytest.raises(StatementError, match=r"^Failed to invoke UDAF factory method") as raised:
        resolve_aggregate("COLLECT_SET", [t.INTEGER], [N], config={COLLECT_SET_LIMIT: text})
    assert raised.value.hint == f'For input string: "{text}"'
