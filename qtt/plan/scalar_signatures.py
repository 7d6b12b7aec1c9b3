"""Scalar function signatures: which argument types a function takes and what it returns.

The planner resolves every call here once; the runtime implements each name in
``qtt.runtime.builtins``. A test asserts that the two tables list the same names.

Signatures are data (see :mod:`qtt.plan.signature_matching` for the patterns and how a call
is matched against them).

Return types follow ksqlDB's UDFs (``io.confluent.ksql.function.udf``), including their quirks:
``ROUND(INT)`` is a BIGINT and ``ROUND(DECIMAL(p, s))`` is ``DECIMAL(p - s, 0)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from qtt import sqltypes as t
from qtt.errors import StatementError, UnsupportedFeatureError, did_you_mean
from qtt.plan.signature_matching import (
    ANY_DECIMAL,
    ArrayOf,
    Check,
    Function,
    K,
    MapOf,
    NullType,
    Pattern,
    Resolved,
    ReturnType,
    Signature,
    T,
    V,
    match_signature,
)


def resolve(name: str, arg_types: Sequence[t.SqlType]) -> Resolved:
    """Pick the signature of the function ``name`` that fits ``arg_types``.

    Raises:
        StatementError: for an unknown function or arguments that fit no signature.
        UnsupportedFeatureError: for an overload ksqlDB has and qtt does not run yet.
    """
    function = FUNCTIONS.get(name)
    if function is None:
        msg = f"Can't find any functions with the name '{name}'."
        raise StatementError(msg, hint=did_you_mean(name, FUNCTIONS).strip() or None)
    return match_signature(function, arg_types)


# ---------------------------------------------------------------------------- return types


def _integral_decimal(args: Sequence[t.SqlType]) -> t.SqlType:
    # ksqlDB's ROUND(DECIMAL) and TRUNC(DECIMAL) keep only the integral digits.
    arg = args[0]
    assert isinstance(arg, t.Decimal)
    return t.Decimal(max(arg.precision - arg.scale, 1), 0)


def _first(args: Sequence[t.SqlType]) -> t.SqlType:
    return args[0]


def _entries_type(args: Sequence[t.SqlType]) -> t.SqlType:
    map_type = args[0]
    assert isinstance(map_type, t.Map)
    return t.Array(t.Struct((t.Field("K", t.STRING), t.Field("V", map_type.value))))


# ---------------------------------------------------------------------------- checks

_ORDERABLE = frozenset(["INTEGER", "BIGINT", "DECIMAL", "DOUBLE", "STRING", "BYTES", "DATE", "TIME", "TIMESTAMP"])


def _orderable_elements(name: str, *, booleans: bool = False) -> Check:
    allowed = _ORDERABLE | {"BOOLEAN"} if booleans else _ORDERABLE

    def check(args: Sequence[t.SqlType]) -> None:
        for arg in args:
            element = arg.element if isinstance(arg, t.Array) else arg
            if not isinstance(element, NullType) and element.base not in allowed:
                msg = f"Function '{name}' does not support values of type {element}"
                raise StatementError(msg)

    return check


def _no_maps(name: str) -> Check:
    # Spark's set operations on arrays compare elements, and Spark cannot compare maps.
    def check(args: Sequence[t.SqlType]) -> None:
        if any(t.contains_map(arg) for arg in args):
            raise UnsupportedFeatureError(f"{name} of arrays holding maps")

    return check


_PRIMITIVE_ELEMENTS = frozenset(["BOOLEAN", "INTEGER", "BIGINT", "DOUBLE", "DECIMAL", "STRING", "NULL"])


def _primitive_elements(name: str) -> Check:
    # ksqlDB fails at run time on any element that is not a primitive value.
    def check(args: Sequence[t.SqlType]) -> None:
        element = args[0].element if isinstance(args[0], t.Array) else args[0]
        if element.base not in _PRIMITIVE_ELEMENTS:
            raise UnsupportedFeatureError(f"{name} of {element} elements")

    return check


# java.time pattern letters whose meaning Spark's datetime patterns share.
_DATETIME_LETTERS = frozenset("GyMdDEaHhKkmsSzVXxZ")
_PATTERN_TOKEN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|.", re.S)


def simple_date_fields(pattern: str) -> list[tuple[str, str]] | None:
    """A ``java.text.SimpleDateFormat`` date pattern as (kind, text) tokens, or None.

    Kinds are ``y``, ``M``, ``d`` (numeric fields, text is the letters) and ``lit``. Only
    numeric year, month and day fields are understood; None for anything else.
    """
    tokens: list[tuple[str, str]] = []
    for match in _PATTERN_TOKEN.finditer(pattern):
        text, letter = match.group(0), match.group(1)
        if letter is None:
            literal = text[1:-1].replace("''", "'") if text.startswith("'") and len(text) > 1 else text
            tokens.append(("lit", literal))
        elif letter in "yMd" and not (letter == "M" and len(text) > 2) and not (letter == "y" and len(text) == 2):
            tokens.append((letter, text))
        else:
            return None
    return tokens


def datetime_pattern_problem(pattern: str) -> str | None:
    """Why Spark cannot run the java.time ``pattern`` as ksqlDB does, or None if it can."""
    for match in _PATTERN_TOKEN.finditer(pattern):
        letter = match.group(1)
        if letter is not None and letter not in _DATETIME_LETTERS:
            return f"datetime pattern letter '{letter}'"
        if letter in ("E", "a") and len(match.group(0)) > 4:
            return f"datetime pattern '{match.group(0)}'"
    return None


# ---------------------------------------------------------------------------- the table


def fn(
    name: str,
    *signatures: Signature,
    description: str = "",
    checks: Sequence[Check] = (),
    constant_args: Sequence[int] = (),
) -> Function:
    return Function(
        name=name,
        signatures=signatures,
        description=description,
        checks=tuple(checks),
        constant_args=frozenset(constant_args),
    )


def sig(
    params: Sequence[Pattern],
    returns: ReturnType,
    *,
    variadic: bool = False,
    unsupported: str | None = None,
) -> Signature:
    return Signature(tuple(params), returns, variadic, unsupported)


INT, BIGINT, DOUBLE, STRING, BOOLEAN, BYTES = (
    t.INTEGER,
    t.BIGINT,
    t.DOUBLE,
    t.STRING,
    t.BOOLEAN,
    t.BYTES,
)
DATE = t.DATE
_NUMERIC_SAME = (
    sig([INT], INT),
    sig([BIGINT], BIGINT),
    sig([ANY_DECIMAL], _first),
    sig([DOUBLE], DOUBLE),
)
# ROUND and TRUNC share their overloads: integers become BIGINT, DOUBLE without places too.
_ROUNDING = (
    sig([INT], BIGINT),
    sig([BIGINT], BIGINT),
    sig([DOUBLE], BIGINT),
    sig([DOUBLE, INT], DOUBLE),
    sig([ANY_DECIMAL], _integral_decimal),
    sig([ANY_DECIMAL, INT], _first),
)


# ksqlDB's ENTRIES has one overload per map value type.
_ENTRY_VALUES = (INT, BIGINT, DOUBLE, BOOLEAN, STRING)


def _double_math(name: str, arity: int = 1) -> Function:
    return fn(name, sig([DOUBLE] * arity, DOUBLE))


_FUNCTION_LIST: list[Function] = [
    # --------------------------------------------------------------- null handling
    fn("COALESCE", sig([T, T], T, variadic=True)),
    fn("IFNULL", sig([T, T], T)),
    fn("NULLIF", sig([T, T], T)),
    # --------------------------------------------------------------- strings
    fn("CONCAT", sig([STRING], STRING, variadic=True), sig([BYTES], BYTES, variadic=True)),
    fn(
        "CONCAT_WS",
        sig([STRING, STRING], STRING, variadic=True),
        sig([BYTES, BYTES], BYTES, variadic=True),
    ),
    fn("UCASE", sig([STRING], STRING)),
    fn("LCASE", sig([STRING], STRING)),
    fn("TRIM", sig([STRING], STRING)),
    fn("LTRIM", sig([STRING], STRING)),
    fn("RTRIM", sig([STRING], STRING)),
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
        sig([BYTES, BYTES], t.Array(BYTES), unsupported="SPLIT of BYTES"),
    ),
    fn("REVERSE", sig([STRING], STRING)),
    fn("ELT", sig([INT, STRING], STRING, variadic=True)),
    fn("FIELD", sig([STRING, STRING], INT, variadic=True)),
    fn("EXTRACTJSONFIELD", sig([STRING, STRING], STRING)),
    # --------------------------------------------------------------- math
    fn("ABS", *_NUMERIC_SAME),
    fn("SIGN", sig([INT], INT), sig([BIGINT], INT), sig([DOUBLE], INT)),
    fn("ROUND", *_ROUNDING, constant_args=[1]),
    fn("TRUNC", *_ROUNDING, constant_args=[1]),
    fn("FLOOR", *_NUMERIC_SAME),
    fn("CEIL", *_NUMERIC_SAME),
    fn("SQRT", sig([DOUBLE], DOUBLE)),
    fn("CBRT", sig([DOUBLE], DOUBLE)),
    fn("EXP", sig([DOUBLE], DOUBLE)),
    fn("LN", sig([DOUBLE], DOUBLE)),
    fn("LOG", sig([DOUBLE], DOUBLE), sig([DOUBLE, DOUBLE], DOUBLE)),
    fn("POWER", sig([DOUBLE, DOUBLE], DOUBLE)),
    *(
        _double_math(n)
        for n in (
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
    fn("GREATEST", sig([T, T], T, variadic=True), checks=[_orderable_elements("GREATEST")]),
    fn("LEAST", sig([T, T], T, variadic=True), checks=[_orderable_elements("LEAST")]),
    # --------------------------------------------------------------- collections
    fn("ARRAY_LENGTH", sig([ArrayOf(T)], INT)),
    fn("ARRAY_CONTAINS", sig([ArrayOf(T), T], BOOLEAN)),
    fn(
        "ARRAY_SORT",
        sig([ArrayOf(T)], ArrayOf(T)),
        sig([ArrayOf(T), STRING], ArrayOf(T)),
        checks=[_orderable_elements("ARRAY_SORT", booleans=True)],
    ),
    fn("ARRAY_MAX", sig([ArrayOf(T)], T), checks=[_orderable_elements("ARRAY_MAX", booleans=True)]),
    fn("ARRAY_MIN", sig([ArrayOf(T)], T), checks=[_orderable_elements("ARRAY_MIN", booleans=True)]),
    fn("ARRAY_DISTINCT", sig([ArrayOf(T)], ArrayOf(T)), checks=[_no_maps("ARRAY_DISTINCT")]),
    fn("ARRAY_UNION", sig([ArrayOf(T), ArrayOf(T)], ArrayOf(T)), checks=[_no_maps("ARRAY_UNION")]),
    fn(
        "ARRAY_INTERSECT",
        sig([ArrayOf(T), ArrayOf(T)], ArrayOf(T)),
        checks=[_no_maps("ARRAY_INTERSECT")],
    ),
    fn("ARRAY_EXCEPT", sig([ArrayOf(T), ArrayOf(T)], ArrayOf(T)), checks=[_no_maps("ARRAY_EXCEPT")]),
    fn("ARRAY_REMOVE", sig([ArrayOf(T), T], ArrayOf(T))),
    fn("ARRAY_CONCAT", sig([ArrayOf(T), ArrayOf(T)], ArrayOf(T))),
    fn(
        "ARRAY_JOIN",
        sig([ArrayOf(T)], STRING),
        sig([ArrayOf(T), STRING], STRING),
        checks=[_primitive_elements("ARRAY_JOIN")],
    ),
    fn("MAP_KEYS", sig([MapOf(K, V)], ArrayOf(K))),
    fn("MAP_VALUES", sig([MapOf(K, V)], ArrayOf(V))),
    fn("MAP_UNION", sig([MapOf(K, V), MapOf(K, V)], MapOf(K, V))),
    fn("ENTRIES", *(sig([MapOf(STRING, v), BOOLEAN], _entries_type) for v in _ENTRY_VALUES)),
    fn(
        "GENERATE_SERIES",
        sig([INT, INT], t.Array(INT)),
        sig([INT, INT, INT], t.Array(INT)),
        sig([BIGINT, BIGINT], t.Array(BIGINT)),
        sig([BIGINT, BIGINT, INT], t.Array(BIGINT)),
    ),
    fn("AS_VALUE", sig([T], T)),
    # --------------------------------------------------------------- dates
    fn("STRINGTODATE", sig([STRING, STRING], INT), constant_args=[1]),
    fn("PARSE_DATE", sig([STRING, STRING], DATE), constant_args=[1]),
    fn("DATETOSTRING", sig([INT, STRING], STRING), constant_args=[1]),
    fn("FORMAT_DATE", sig([DATE, STRING], STRING), constant_args=[1]),
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
]

FUNCTIONS: dict[str, Function] = {f.name: f for f in _FUNCTION_LIST}


def pattern_problem(function: str, pattern: str) -> str | None:
    """Why qtt cannot run ``function`` with the constant date/time ``pattern``, or None."""
    if function == "PARSE_DATE":
        # ksqlDB parses with SimpleDateFormat rules (see qtt.runtime.builtins).
        if simple_date_fields(pattern) is None:
            return f"PARSE_DATE pattern '{pattern}' (only numeric y, M and d fields)"
        return None
    problem = datetime_pattern_problem(pattern)
    return f"{problem} in {function}" if problem is not None else None


#: Functions whose constant arguments are date/time patterns (checked by the analyzer).
DATETIME_PATTERN_ARGS: dict[str, int] = {
    "STRINGTODATE": 1,
    "PARSE_DATE": 1,
    "DATETOSTRING": 1,
    "FORMAT_DATE": 1,
}
