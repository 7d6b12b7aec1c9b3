"""Scalar function signatures: which argument types a function takes and what it returns.

The planner resolves every call here once; the runtime implements each name in
``qtt.runtime.build.builtins``. A test asserts that the two tables list the same names.

The table has sections: this module holds the original functions, and each
``*_signatures`` module beside it one group (text, time, invocation). They are written
in the small language of :mod:`qtt.plan.functions.signature_dsl`; see
:mod:`qtt.plan.functions.signature_matching` for the patterns and how a call is matched.

Return types follow ksqlDB's UDFs (``io.confluent.ksql.function.udf``), including their quirks:
``ROUND(INT)`` is a BIGINT and ``ROUND(DECIMAL(p, s))`` is ``DECIMAL(p - s, 0)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from qtt import sqltypes as t
from qtt.errors import StatementError, did_you_mean
from qtt.plan.functions import invocation_signatures, text_signatures, time_signatures
from qtt.plan.functions.ksql_test_functions import check_not_test_function
from qtt.plan.functions.signature_dsl import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DOUBLE,
    INT,
    STRING,
    datetime_pattern_problem,
    entries_type,
    first_arg,
    fn,
    integral_decimal,
    no_maps,
    orderable_elements,
    sig,
    simple_date_fields,
    widest_decimal,
)
from qtt.plan.functions.signature_matching import (
    ANY_DECIMAL,
    ArrayOf,
    Function,
    MapOf,
    Resolved,
    Signature,
    T,
    V,
    match_signature,
)

__all__ = [
    "DATETIME_PATTERN_ARGS",
    "FUNCTIONS",
    "datetime_pattern_problem",
    "pattern_problem",
    "resolve",
    "simple_date_fields",
]


def resolve(
    name: str, arg_types: Sequence[t.SqlType], written: str | None = None, identifier: str | None = None
) -> Resolved:
    """Pick the signature of the function ``name`` that fits ``arg_types``.

    ``written`` (the name as spelled) and ``identifier`` (ksqlDB's parsed name) are for messages.

    Raises:
        StatementError: for an unknown function or arguments that fit no signature.
        UnsupportedFeatureError: for an overload ksqlDB has and qtt does not run yet.
    """
    function = FUNCTIONS.get(name)
    if function is None:
        check_not_test_function(name)
        msg = f"Can't find any functions with the name '{identifier or name}'."
        raise StatementError(msg, hint=did_you_mean(name, FUNCTIONS).strip() or None)
    return match_signature(function, arg_types, written)


# ---------------------------------------------------------------------------- the original table

_NUMERIC_SAME = (
    sig([INT], INT),
    sig([BIGINT], BIGINT),
    sig([ANY_DECIMAL], first_arg),
    sig([DOUBLE], DOUBLE),
)
# GREATEST and LEAST: ksqlDB's overloads, one per type; a call mixing types fits several after
# widening, and ksqlDB finds it ambiguous.
_EXTREMES = (
    sig([INT, INT], INT, variadic=True),
    sig([BIGINT, BIGINT], BIGINT, variadic=True),
    sig([DOUBLE, DOUBLE], DOUBLE, variadic=True),
    sig([STRING, STRING], STRING, variadic=True),
    sig([ANY_DECIMAL, ANY_DECIMAL], widest_decimal, variadic=True),
)


def _rounding(udf: str) -> tuple[Signature, ...]:
    # ROUND and TRUNC share their overloads: integers become BIGINT, DOUBLE without places too.
    return (
        sig([INT], BIGINT),
        sig([BIGINT], BIGINT),
        sig([DOUBLE], BIGINT),
        sig([DOUBLE, INT], DOUBLE),
        sig([ANY_DECIMAL], integral_decimal(udf)),
        sig([ANY_DECIMAL, INT], first_arg),
    )


# ksqlDB's ENTRIES has one overload per map value type.
_ENTRY_VALUES = (INT, BIGINT, DOUBLE, BOOLEAN, STRING)


def _double_math(name: str, arity: int = 1) -> Function:
    # ksqlDB's math UDFs declare INTEGER, BIGINT and DOUBLE overloads (each argument of one of
    # them), all computed on doubles; a mix of INTEGER and BIGINT arguments is ambiguous.
    return fn(name, *(sig([type_] * arity, DOUBLE) for type_ in (INT, BIGINT, DOUBLE)))


_FUNCTION_LIST: list[Function] = [
    # --------------------------------------------------------------- null handling
    fn("COALESCE", sig([T, T], T, variadic=True)),
    fn("IFNULL", sig([T, T], T)),
    fn("NULLIF", sig([T, T], T)),
    # --------------------------------------------------------------- strings
    fn("CONCAT", sig([STRING], STRING, variadic=True), sig([BYTES], BYTES, variadic=True)),
    # ksqlDB's CONCAT_WS takes any number of arguments, the separator first, and fails (null)
    # at run time on fewer than two.
    fn("CONCAT_WS", sig([STRING], STRING, variadic=True), sig([BYTES], BYTES, variadic=True)),
    fn("UCASE", sig([STRING], STRING)),
    fn("LCASE", sig([STRING], STRING)),
    fn("TRIM", sig([STRING], STRING)),
    fn("LTRIM", sig([STRING], STRING)),
    fn("RTRIM", sig([STRING], STRING)),
    fn("MD5", sig([STRING], STRING)),
    fn("LEN", sig([STRING], INT), sig([BYTES], INT)),
    fn("INITCAP", sig([STRING], STRING)),
    fn(
        "SUBSTRING",
        sig([STRING, INT], STRING),
        sig([STRING, INT, INT], STRING),
        sig([BYTES, INT], BYTES),
        sig([BYTES, INT, INT], BYTES),
    ),
    fn("REPLACE", sig([STRING, STRING, STRING], STRING)),
    fn(
        "INSTR",
        sig([STRING, STRING], INT),
        sig([STRING, STRING, INT], INT),
        sig([STRING, STRING, INT, INT], INT),
    ),
    fn("LPAD", sig([STRING, INT, STRING], STRING), sig([BYTES, INT, BYTES], BYTES)),
    fn("RPAD", sig([STRING, INT, STRING], STRING), sig([BYTES, INT, BYTES], BYTES)),
    fn(
        "SPLIT",
        sig([STRING, STRING], t.Array(STRING)),
        sig([BYTES, BYTES], t.Array(BYTES)),
    ),
    fn("ELT", sig([INT, STRING], STRING, variadic=True)),
    fn("FIELD", sig([STRING, STRING], INT, variadic=True)),
    fn("EXTRACTJSONFIELD", sig([STRING, STRING], STRING)),
    # --------------------------------------------------------------- math
    fn("ABS", *_NUMERIC_SAME),
    fn("SIGN", sig([INT], INT), sig([BIGINT], INT), sig([DOUBLE], INT)),
    fn("ROUND", *_rounding("Round"), constant_args=[1]),
    fn("TRUNC", *_rounding("trunc"), constant_args=[1]),
    fn("FLOOR", *_NUMERIC_SAME),
    fn("CEIL", *_NUMERIC_SAME),
    fn("LOG", *_double_math("LOG").signatures, *_double_math("LOG", 2).signatures),
    _double_math("POWER", 2),
    *(
        _double_math(n)
        for n in (
            "SQRT",
            "CBRT",
            "EXP",
            "LN",
            "ACOS",
            "ASIN",
            "ATAN",
            "COS",
            "SIN",
            "TAN",
            "COT",
            "COSH",
            "SINH",
            "TANH",
            "DEGREES",
            "RADIANS",
        )
    ),
    _double_math("ATAN2", 2),
    fn("PI", sig([], DOUBLE)),
    fn("RANDOM", sig([], DOUBLE)),
    fn("GEO_DISTANCE", sig([DOUBLE] * 4, DOUBLE), sig([DOUBLE] * 4 + [STRING], DOUBLE), throws_on_input=True),
    fn("GREATEST", *_EXTREMES),
    fn("LEAST", *_EXTREMES),
    # --------------------------------------------------------------- collections
    fn("ARRAY_LENGTH", sig([ArrayOf(T)], INT)),
    fn("ARRAY_CONTAINS", sig([ArrayOf(T), T], BOOLEAN)),
    fn(
        "ARRAY_SORT",
        sig([ArrayOf(T)], ArrayOf(T)),
        sig([ArrayOf(T), STRING], ArrayOf(T)),
        checks=[orderable_elements("ARRAY_SORT", booleans=True)],
    ),
    fn("ARRAY_MAX", sig([ArrayOf(T)], T), checks=[orderable_elements("ARRAY_MAX", booleans=True)]),
    fn("ARRAY_MIN", sig([ArrayOf(T)], T), checks=[orderable_elements("ARRAY_MIN", booleans=True)]),
    fn("ARRAY_DISTINCT", sig([ArrayOf(T)], ArrayOf(T)), checks=[no_maps("ARRAY_DISTINCT")]),
    fn("ARRAY_UNION", sig([ArrayOf(T), ArrayOf(T)], ArrayOf(T)), checks=[no_maps("ARRAY_UNION")]),
    fn(
        "ARRAY_INTERSECT",
        sig([ArrayOf(T), ArrayOf(T)], ArrayOf(T)),
        checks=[no_maps("ARRAY_INTERSECT")],
    ),
    fn("ARRAY_EXCEPT", sig([ArrayOf(T), ArrayOf(T)], ArrayOf(T)), checks=[no_maps("ARRAY_EXCEPT")]),
    fn("ARRAY_REMOVE", sig([ArrayOf(T), T], ArrayOf(T))),
    fn("ARRAY_CONCAT", sig([ArrayOf(T), ArrayOf(T)], ArrayOf(T))),
    # ksqlDB's ArrayJoin takes any element type and fails at run time on one it cannot print.
    fn("ARRAY_JOIN", sig([ArrayOf(T)], STRING), sig([ArrayOf(T), STRING], STRING)),
    # ksqlDB's UDFs take Map<String, T>: a map of other keys fits no signature
    fn("MAP_KEYS", sig([MapOf(STRING, V)], ArrayOf(STRING))),
    fn("MAP_VALUES", sig([MapOf(STRING, V)], ArrayOf(V))),
    fn("MAP_UNION", sig([MapOf(STRING, V), MapOf(STRING, V)], MapOf(STRING, V))),
    fn("ENTRIES", *(sig([MapOf(STRING, v), BOOLEAN], entries_type) for v in _ENTRY_VALUES)),
    fn(
        "GENERATE_SERIES",
        sig([INT, INT], t.Array(INT)),
        sig([INT, INT, INT], t.Array(INT)),
        sig([BIGINT, BIGINT], t.Array(BIGINT)),
        sig([BIGINT, BIGINT, INT], t.Array(BIGINT)),
    ),
    fn("AS_VALUE", sig([T], T)),
    # --------------------------------------------------------------- dates
    fn("STRINGTODATE", sig([STRING, STRING], INT), constant_args=[1], throws_on_input=True),
    fn("PARSE_DATE", sig([STRING, STRING], DATE), constant_args=[1], throws_on_input=True),
    fn("DATETOSTRING", sig([INT, STRING], STRING), constant_args=[1], throws_on_input=True),
    fn("FORMAT_DATE", sig([DATE, STRING], STRING), constant_args=[1], throws_on_input=True),
    # --------------------------------------------------------------- ksqlDB's QTT test functions
    fn(
        "WHENCONDITION",
        sig([BOOLEAN, BOOLEAN], BOOLEAN),
        description="ksqlDB's QTT test UDF: returns its first argument, fails when evaluated "
        "with a false second argument (proves CASE evaluates lazily).",
    ),
    fn(
        "WHENRESULT",
        sig([INT, BOOLEAN], INT),
        description="ksqlDB's QTT test UDF: as WHENCONDITION, for a CASE result.",
    ),
    fn(
        "BAD_UDF",
        sig([INT], STRING),
        sig([BOOLEAN], INT),
        # the overload over STRING counts its calls; how often Spark calls it is not ksqlDB's
        sig([STRING], STRING, unsupported="ksqlDB's test-only UDF that returns null on every other call"),
        description="ksqlDB's QTT test UDF: throws over an INT; over a BOOLEAN, throws if it is true, "
        "else 0 (proves a throwing PARTITION BY or GROUP BY expression is null).",
    ),
]

FUNCTIONS: dict[str, Function] = {}
for _section in (
    _FUNCTION_LIST,
    text_signatures.FUNCTIONS,
    time_signatures.FUNCTIONS,
    invocation_signatures.FUNCTIONS,
):
    for _function in _section:
        if _function.name in FUNCTIONS:  # pragma: no cover - caught by the table's tests at import
            raise TypeError(f"function {_function.name} is in the signature table twice")
        FUNCTIONS[_function.name] = _function


def pattern_problem(function: str, pattern: str) -> str | None:
    """Why qtt cannot run ``function`` with the constant date/time ``pattern``, or None."""
    if function == "PARSE_DATE":
        # ksqlDB parses with SimpleDateFormat rules (see qtt.runtime.build.builtins).
        if simple_date_fields(pattern) is None:
            return f"PARSE_DATE pattern '{pattern}' (only numeric y, M and d fields)"
        return None
    problem = datetime_pattern_problem(pattern, also=_FORMATTER_LETTERS.get(function, ""))
    return f"{problem} in {function}" if problem is not None else None


#: Letters a formatting function takes beyond the shared ones: Spark prints the quarter (Q) as
#: java.time does, though it cannot parse one; qtt prints a timestamp's zone and offset fields
#: itself, the localized offset (O) too.
_FORMATTER_LETTERS = {"FORMAT_TIMESTAMP": "OQ", "TIMESTAMPTOSTRING": "OQ", "FORMAT_DATE": "Q", "DATETOSTRING": "Q"}


#: Functions whose constant arguments are date/time patterns (checked by the analyzer).
DATETIME_PATTERN_ARGS: dict[str, int] = {
    "STRINGTODATE": 1,
    "PARSE_DATE": 1,
    "DATETOSTRING": 1,
    "FORMAT_DATE": 1,
    **time_signatures.PATTERN_ARGS,
}
