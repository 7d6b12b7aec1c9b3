"""Function resolution: signatures, widening, return types, unsupported overloads, errors."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.functions import scalar_signatures as fns
from qtt.plan.functions.signature_dsl import fn, sig
from qtt.plan.functions.signature_matching import NULL, match_signature, shown_arguments


def returns(name: str, *args: t.SqlType) -> t.SqlType:
    return fns.resolve(name, list(args)).return_type


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        # ksqlDB's Round/Trunc UDFs return BIGINT for whole numbers and DOUBLE input.
        ("ROUND", [t.INTEGER], t.BIGINT),
        ("ROUND", [t.BIGINT], t.BIGINT),
        ("ROUND", [t.DOUBLE], t.BIGINT),
        ("ROUND", [t.DOUBLE, t.INTEGER], t.DOUBLE),
        ("ROUND", [t.Decimal(33, 16)], t.Decimal(17, 0)),
        ("ROUND", [t.Decimal(33, 16), t.INTEGER], t.Decimal(33, 16)),
        ("TRUNC", [t.Decimal(4, 2)], t.Decimal(2, 0)),
        ("TRUNC", [t.DOUBLE], t.BIGINT),
        # FLOOR and CEIL keep their argument's type, decimal scale included.
        ("FLOOR", [t.Decimal(4, 2)], t.Decimal(4, 2)),
        ("CEIL", [t.INTEGER], t.INTEGER),
        ("CEIL", [t.DOUBLE], t.DOUBLE),
        ("SIGN", [t.BIGINT], t.INTEGER),
        ("ABS", [t.Decimal(5, 1)], t.Decimal(5, 1)),
        ("LN", [t.INTEGER], t.DOUBLE),
        ("LOG", [t.INTEGER, t.Decimal(4, 2)], t.DOUBLE),
        ("GREATEST", [t.BIGINT, t.BIGINT, NULL], t.BIGINT),
        ("LEAST", [t.Decimal(4, 2), t.Decimal(6, 1)], t.Decimal(7, 2)),
        ("COALESCE", [t.Decimal(5, 2), NULL, t.Decimal(5, 2)], t.Decimal(5, 2)),
        ("IFNULL", [NULL, t.STRING], t.STRING),
        ("MAP_VALUES", [t.Map(t.STRING, t.Array(t.INTEGER))], t.Array(t.Array(t.INTEGER))),
        (
            "MAP_UNION",
            [t.Map(t.STRING, t.INTEGER), t.Map(t.STRING, t.INTEGER)],
            t.Map(t.STRING, t.INTEGER),
        ),
        (
            "ENTRIES",
            [t.Map(t.STRING, t.DOUBLE), t.BOOLEAN],
            t.Array(t.Struct((t.Field("K", t.STRING), t.Field("V", t.DOUBLE)))),
        ),
        ("GENERATE_SERIES", [t.INTEGER, t.INTEGER], t.Array(t.INTEGER)),
        ("GENERATE_SERIES", [t.INTEGER, t.BIGINT], t.Array(t.BIGINT)),
        ("STRINGTODATE", [t.STRING, t.STRING], t.INTEGER),
        ("PARSE_DATE", [t.STRING, t.STRING], t.DATE),
        ("CONCAT", [t.STRING, t.STRING, t.STRING], t.STRING),
        ("CONCAT", [t.BYTES, NULL], t.BYTES),
    ],
)
def test_return_types(name: str, args: list[t.SqlType], expected: t.SqlType) -> None:
    assert returns(name, *args) == expected


def test_exact_match_beats_widening() -> None:
    resolved = fns.resolve("ABS", [t.INTEGER])
    assert resolved.param_types == (t.INTEGER,)


def test_widened_overloads_of_one_shape_are_ambiguous() -> None:
    # ROUND(INTEGER, INTEGER) fits ROUND(DOUBLE, INTEGER) and ROUND(DECIMAL, INTEGER) once
    # widened; ksqlDB's UdfIndex does not weigh how much widening each needs.
    with pytest.raises(StatementError) as raised:
        fns.resolve("ROUND", [t.INTEGER, t.INTEGER])
    assert raised.value.message.startswith(
        "Function 'Round' cannot be resolved due to ambiguous method parameters (INTEGER, INTEGER).\n"
        "Use CAST() to explicitly cast your parameters to one of the supported function calls.\n"
        "Valid function calls are:\n  ROUND(INTEGER)\n"
    )


def test_an_overload_without_variable_arguments_beats_one_with() -> None:
    shapes = fn("SHAPES", sig([t.DOUBLE, t.DOUBLE], t.DOUBLE, variadic=True), sig([t.DOUBLE, t.DOUBLE], t.STRING))
    assert match_signature(shapes, [t.INTEGER, t.INTEGER]).return_type == t.STRING
    more = fn("MORE", sig([t.DOUBLE], t.DOUBLE, variadic=True), sig([t.DOUBLE, t.DOUBLE], t.STRING, variadic=True))
    assert match_signature(more, [t.INTEGER, t.INTEGER]).return_type == t.STRING


def test_only_nulls_fit_every_overload() -> None:
    with pytest.raises(StatementError, match=r"'greatest' cannot be resolved .* \(null, null\)\."):
        fns.resolve("GREATEST", [NULL, NULL], "GREATEST")


def test_a_type_variable_binds_one_type_exactly() -> None:
    # ksqlDB's GenericsUtil: no widening between the arguments a type variable binds.
    assert fns.resolve("COALESCE", [t.BIGINT, NULL, t.BIGINT]).param_types == (t.BIGINT,) * 3
    with pytest.raises(StatementError, match=r"^Function 'COALESCE' does not accept parameters \(INTEGER, BIGINT\)\."):
        fns.resolve("COALESCE", [t.INTEGER, t.BIGINT])
    with pytest.raises(StatementError, match=r"does not accept parameters \(ARRAY<DECIMAL\(4, 2\)>, DECIMAL\(3, 2\)\)"):
        fns.resolve("ARRAY_CONTAINS", [t.Array(t.Decimal(4, 2)), t.Decimal(3, 2)])


def test_unknown_function_suggests_a_name() -> None:
    with pytest.raises(StatementError, match=r"Can't find any functions with the name 'ROUNDD'\.") as raised:
        fns.resolve("ROUNDD", [t.DOUBLE])
    assert raised.value.hint == "Did you mean 'ROUND'?"


def test_wrong_arguments_list_the_alternatives() -> None:
    with pytest.raises(StatementError) as info:
        fns.resolve("COALESCE", [])
    assert "Function 'COALESCE' does not accept parameters ()" in info.value.message
    assert "COALESCE(T, T...)" in info.value.message


def test_no_implicit_conversion_between_strings_and_numbers() -> None:
    with pytest.raises(StatementError, match="does not accept parameters \\(STRING\\)"):
        fns.resolve("ABS", [t.STRING])


def test_an_unsupported_overload_is_an_unsupported_feature() -> None:
    function = fn("HALF_DONE", sig([t.STRING], t.STRING), sig([t.BYTES], t.BYTES, unsupported="HALF_DONE of BYTES"))
    assert match_signature(function, [t.STRING]).return_type == t.STRING
    with pytest.raises(UnsupportedFeatureError, match=r"HALF_DONE\(BYTES\): HALF_DONE of BYTES"):
        match_signature(function, [t.BYTES])


def test_split_of_bytes_resolves() -> None:
    assert fns.resolve("SPLIT", [t.BYTES, t.BYTES]).return_type == t.Array(t.BYTES)


def test_set_operations_on_arrays_of_maps_are_unsupported() -> None:
    maps = t.Array(t.Map(t.STRING, t.INTEGER))
    with pytest.raises(UnsupportedFeatureError, match="ARRAY_UNION of arrays holding maps"):
        fns.resolve("ARRAY_UNION", [maps, maps])


def test_array_join_takes_any_element_type() -> None:
    # ksqlDB's ArrayJoin fails at run time (a null) on an element it cannot print.
    assert fns.resolve("ARRAY_JOIN", [t.Array(t.Array(t.INTEGER))]).return_type == t.STRING


def test_entries_widens_map_values_but_takes_primitive_values_only() -> None:
    # ksqlDB's ParamTypes widens inside a collection parameter that has no type variable.
    resolved = fns.resolve("ENTRIES", [t.Map(t.STRING, t.Decimal(4, 2)), t.BOOLEAN])
    assert resolved.param_types[0] == t.Map(t.STRING, t.DOUBLE)
    with pytest.raises(StatementError, match="does not accept parameters"):
        fns.resolve("ENTRIES", [t.Map(t.STRING, t.Array(t.INTEGER)), t.BOOLEAN])
    with pytest.raises(StatementError, match="does not accept parameters"):
        fns.resolve("ARRAY_UNION", [t.Array(t.INTEGER), t.Array(t.BIGINT)])


def test_orderable_checks() -> None:
    with pytest.raises(StatementError, match="'ARRAY_MAX' does not support values of type MAP"):
        fns.resolve("ARRAY_MAX", [t.Array(t.Map(t.STRING, t.INTEGER))])
    assert returns("ARRAY_SORT", t.Array(t.BOOLEAN)) == t.Array(t.BOOLEAN)


def test_a_bare_null_cannot_bind_a_type_variable() -> None:
    with pytest.raises(StatementError, match="Can't infer a type of null"):
        fns.resolve("IFNULL", [NULL, NULL])


def test_variadic_overloads_given_no_variable_argument_do_not_tie() -> None:
    # CONCAT(STRING...) and CONCAT(BYTES...) share the UdfIndex trie's root: the first stays.
    assert returns("CONCAT") == t.STRING
    with pytest.raises(StatementError, match="ambiguous method parameters \\(null\\)"):
        fns.resolve("CONCAT", [NULL])


def test_a_null_for_the_only_variable_argument_ties_with_the_list_form() -> None:
    with pytest.raises(StatementError, match="ambiguous method parameters \\(INTEGER, null\\)"):
        fns.resolve("COALESCE", [t.INTEGER, NULL])
    assert returns("COALESCE", t.INTEGER, NULL, NULL) == t.INTEGER
    assert returns("COALESCE", NULL, t.INTEGER) == t.INTEGER
    with pytest.raises(UnsupportedFeatureError, match="given a list for its variable arguments"):
        fns.resolve("FIELD", [t.STRING, t.Array(t.STRING)])


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("yyyy-MM-dd", None),
        ("yyyyMMdd'T'HH:mm:ss.SSSX", None),
        ("dd MMM yyyy", None),
        ("'quoted u' yyyy", None),
        ("uuuu-MM-dd", "datetime pattern letter 'u'"),
        ("EEEEE", "datetime pattern 'EEEEE'"),
    ],
)
def test_datetime_patterns_spark_can_run(pattern: str, problem: str | None) -> None:
    assert fns.datetime_pattern_problem(pattern) == problem


@pytest.mark.parametrize(
    ("function", "pattern", "problem"),
    [
        ("TIMESTAMPTOSTRING", "yyyy 'Q'Q QQQ", None),
        ("FORMAT_DATE", "QQQQ", None),
        ("FORMAT_TIMESTAMP", "QQQQQ", "datetime pattern 'QQQQQ' in FORMAT_TIMESTAMP"),
        ("PARSE_TIMESTAMP", "yyyy QQQ", "datetime pattern letter 'Q' in PARSE_TIMESTAMP"),
    ],
)
def test_only_formatters_take_a_quarter(function: str, pattern: str, problem: str | None) -> None:
    assert fns.pattern_problem(function, pattern) == problem


def test_simple_date_patterns() -> None:
    assert fns.simple_date_fields("yyyy-MM-dd'T'") == [
        ("y", "yyyy"),
        ("lit", "-"),
        ("M", "MM"),
        ("lit", "-"),
        ("d", "dd"),
        ("lit", "T"),
    ]
    assert fns.simple_date_fields("dd MMM yyyy") is None
    assert fns.simple_date_fields("yy-MM-dd") is None


def test_signatures_describe_themselves() -> None:
    signature = fns.FUNCTIONS["ARRAY_CONTAINS"].signatures[0]
    assert signature.describe() == "(ARRAY<T>, T)"


def test_a_string_is_read_as_a_time_type_only_where_no_overload_takes_the_string() -> None:
    resolved = fns.resolve("UNIX_DATE", [t.STRING])
    assert resolved.param_types == (t.DATE,)  # the analyzer casts the argument, as CAST does
    assert fns.resolve("FORMAT_TIMESTAMP", [t.STRING, t.STRING]).param_types[0] == t.TIMESTAMP
    text = fn("SHOWN", sig([t.STRING], t.STRING), sig([t.TIMESTAMP], t.BIGINT))
    assert match_signature(text, [t.STRING]).return_type == t.STRING  # the exact overload wins
    with pytest.raises(StatementError, match=r"Function 'Abs' does not accept parameters \(STRING\)"):
        fns.resolve("ABS", [t.STRING])  # numbers are never parsed from text


def test_messages_list_struct_fields_without_quotes() -> None:
    # ksqlDB's UdfIndex prints its arguments with FormatOptions.noEscape().
    inner = t.Struct((t.Field("CITY", t.STRING), t.Field("zip code", t.INTEGER)))
    nested = t.Map(t.STRING, t.Array(inner))
    assert shown_arguments([inner, NULL, nested, t.Struct(())]) == (
        "STRUCT<CITY STRING, zip code INTEGER>, null, MAP<STRING, ARRAY<STRUCT<CITY STRING, zip code INTEGER>>>, "
        "STRUCT< >"
    )
    with pytest.raises(StatementError, match=r"\(STRUCT<CITY STRING, zip code INTEGER>, STRING\)"):
        fns.resolve("COALESCE", [inner, t.STRING])


def test_a_time_unit_parameter_takes_only_an_untyped_argument() -> None:
    # ksqlDB's IntervalUnitType (printed INTERVAL UNIT) fits a unit keyword, which has no type.
    assert fns.resolve("TIMESTAMPADD", [NULL, t.INTEGER, t.TIMESTAMP]).return_type == t.TIMESTAMP
    with pytest.raises(StatementError) as info:
        fns.resolve("DATEADD", [t.STRING, t.INTEGER, t.DATE])
    assert "does not accept parameters (STRING, INTEGER, DATE)" in str(info.value)
    assert "  DATEADD(INTERVAL UNIT, INTEGER, DATE)" in str(info.value)
