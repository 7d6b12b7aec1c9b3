"""The small language the function tables are written in: ``fn``, ``sig``, type shorthands,
return-type rules and argument checks shared by every section of the table.

Each section of the scalar function table (:mod:`qtt.plan.functions.scalar_signatures` and the
``*_signatures`` modules beside it) imports from here, so sections never import each other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from qtt import sqltypes as t
from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.functions.signature_matching import (
    Check,
    Function,
    NullType,
    Pattern,
    ReturnType,
    Signature,
    widen_decimals,
    widen_integer_to_decimal,
)

# ---------------------------------------------------------------------------- return types


def integral_decimal(udf: str) -> ReturnType:
    """ksqlDB's ROUND(DECIMAL) and TRUNC(DECIMAL) keep only the integral digits: DECIMAL(p - s, 0).

    ``udf`` is the name the UDF's ``@UdfDescription`` gives (``Round``, ``trunc``): with no
    whole digits, ``SqlDecimal.of(0, 0)`` fails the schema provider, which ksqlDB reports so.
    """

    def returns(args: Sequence[t.SqlType]) -> t.SqlType:
        arg = args[0]
        assert isinstance(arg, t.Decimal)
        if arg.precision == arg.scale:
            msg = f"Cannot invoke the schema provider method provideDecimalSchema for UDF {udf}. "
            raise StatementError(msg)
        return t.Decimal(arg.precision - arg.scale, 0)

    return returns


def first_arg(args: Sequence[t.SqlType]) -> t.SqlType:
    return args[0]


def widest_decimal(args: Sequence[t.SqlType]) -> t.SqlType:
    # ksqlDB's GREATEST/LEAST over decimals: DecimalUtil.widen over the typed arguments.
    typed = [arg for arg in args if not isinstance(arg, NullType)]
    widest = typed[0]
    for arg in typed[1:]:
        widest = widen_decimals(widest, arg)
    return widen_integer_to_decimal(widest)


def entries_type(args: Sequence[t.SqlType]) -> t.SqlType:
    map_type = args[0]
    assert isinstance(map_type, t.Map)
    return t.Array(t.Struct((t.Field("K", t.STRING), t.Field("V", map_type.value))))


# ---------------------------------------------------------------------------- checks

_ORDERABLE = frozenset(["INTEGER", "BIGINT", "DECIMAL", "DOUBLE", "STRING", "BYTES", "DATE", "TIME", "TIMESTAMP"])


def orderable_elements(name: str, *, booleans: bool = False) -> Check:
    allowed = _ORDERABLE | {"BOOLEAN"} if booleans else _ORDERABLE

    def check(args: Sequence[t.SqlType]) -> None:
        for arg in args:
            element = arg.element if isinstance(arg, t.Array) else arg
            if not isinstance(element, NullType) and element.base not in allowed:
                msg = f"Function '{name}' does not support values of type {element}"
                raise StatementError(msg)

    return check


def no_maps(name: str) -> Check:
    # Spark's set operations on arrays compare elements, and Spark cannot compare maps.
    def check(args: Sequence[t.SqlType]) -> None:
        if any(t.contains_map(arg) for arg in args):
            raise UnsupportedFeatureError(f"{name} of arrays holding maps")

    return check


# java.time pattern letters whose meaning Spark's datetime patterns share.
_DATETIME_LETTERS = frozenset("GyMdDEaHhKkmsSzVXxZ")
#: a java.time pattern's tokens: a quoted literal, a run of one pattern letter (group 1: the
#: letter), or any other character
PATTERN_TOKEN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|.", re.S)


def simple_date_fields(pattern: str) -> list[tuple[str, str]] | None:
    """A ``java.text.SimpleDateFormat`` date pattern as (kind, text) tokens, or None.

    Kinds are ``y``, ``M``, ``d`` (numeric fields, text is the letters) and ``lit``. Only
    numeric year, month and day fields are understood; None for anything else.
    """
    tokens: list[tuple[str, str]] = []
    for match in PATTERN_TOKEN.finditer(pattern):
        text, letter = match.group(0), match.group(1)
        if letter is None:
            literal = text[1:-1].replace("''", "'") if text.startswith("'") and len(text) > 1 else text
            tokens.append(("lit", literal))
        elif letter in "yMd" and not (letter == "M" and len(text) > 2) and not (letter == "y" and len(text) == 2):
            tokens.append((letter, text))
        else:
            return None
    return tokens


def datetime_pattern_problem(pattern: str, *, also: str = "") -> str | None:
    """Why Spark cannot run the java.time ``pattern`` as ksqlDB does, or None if it can;
    ``also`` names letters the caller handles itself."""
    for match in PATTERN_TOKEN.finditer(pattern):
        letter = match.group(1)
        if letter is not None and letter not in _DATETIME_LETTERS and letter not in also:
            return f"datetime pattern letter '{letter}'"
        if letter in ("E", "a", "Q") and len(match.group(0)) > 4:
            return f"datetime pattern '{match.group(0)}'"
    return None


# ---------------------------------------------------------------------------- the table


def fn(
    name: str,
    *signatures: Signature,
    description: str = "",
    checks: Sequence[Check] = (),
    constant_args: Sequence[int] = (),
    throws_on_input: bool = False,
) -> Function:
    return Function(
        name=name,
        signatures=signatures,
        description=description,
        checks=tuple(checks),
        constant_args=frozenset(constant_args),
        throws_on_input=throws_on_input,
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
