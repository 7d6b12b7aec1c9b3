"""Scalar functions and CAST in Spark, with ksqlDB's semantics.

``RENAMES`` maps a ksqlDB function to the Spark function that behaves identically. Every
other function has its own implementation below. Together they must cover
``qtt.plan.scalar_signatures.FUNCTIONS`` exactly; a test checks it.

The planner has already converted every argument to its parameter's type (an implicit CAST
where ksqlDB widens), so an implementation may rely on ``expr.args[i].result_type``.
ksqlDB's UDFs are Java: where Spark returns null for what Java computes (``LN(0)`` is
-Infinity), or fails where ksqlDB logs an error and emits null, the implementation says so.
"""

from __future__ import annotations

import decimal
import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.errors import RuntimeBuildError
from qtt.plan import expressions as e
from qtt.plan import scalar_signatures as fns
from qtt.runtime.spark_types import to_spark

if TYPE_CHECKING:
    from qtt.runtime.compiler import Compiler

Impl = Callable[[e.Call, Sequence[Column]], Column]

#: ksqlDB name -> Spark function with the same semantics.
RENAMES: dict[str, Callable[..., Column]] = {
    "UCASE": F.upper,
    "LCASE": F.lower,
    "REVERSE": F.reverse,
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
    "MAP_KEYS": F.map_keys,
    "MAP_VALUES": F.map_values,
    "ARRAY_MAX": F.array_max,
    "ARRAY_MIN": F.array_min,
    "ARRAY_DISTINCT": F.array_distinct,
    "ARRAY_UNION": F.array_union,
    "ARRAY_INTERSECT": F.array_intersect,
    "ARRAY_EXCEPT": F.array_except,
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


def _null(type_: t.SqlType) -> Column:
    return F.lit(None).cast(to_spark(type_))


def _constant(expr: e.Expression) -> object:
    """The value of an argument the planner guarantees to be a literal."""
    if not isinstance(expr, e.Literal):  # pragma: no cover - the analyzer rejects these
        msg = f"expected a constant argument, got {type(expr).type_tag}"
        raise RuntimeBuildError(msg)
    return expr.value


# ---------------------------------------------------------------------------- comparisons


def comparable(value: Column, type_: t.SqlType) -> Column:
    """``value`` in a form Spark can compare for equality as Java's ``equals`` would.

    Spark cannot compare maps; Java's ``Map.equals`` ignores entry order. A map becomes its
    entries sorted by key, recursively through arrays, maps and structs.
    """
    if not t.contains_map(type_):
        return value
    if isinstance(type_, t.Map):
        key_type, value_type = type_.key, type_.value
        entries = F.transform(
            F.map_entries(value),
            lambda entry: F.struct(
                comparable(entry["key"], key_type).alias("k"),
                comparable(entry["value"], value_type).alias("v"),
            ),
        )
        return F.array_sort(entries)
    if isinstance(type_, t.Array):
        element = type_.element
        return F.transform(value, lambda x: comparable(x, element))
    assert isinstance(type_, t.Struct)
    fields = [comparable(value.getField(f.name), f.type).alias(f.name) for f in type_.fields]
    return F.when(value.isNull(), F.lit(None)).otherwise(F.struct(*fields))


_OPERATORS: dict[str, Callable[[Column, Column], Column]] = {
    "=": Column.__eq__,
    "<>": Column.__ne__,
    "<": Column.__lt__,
    "<=": Column.__le__,
    ">": Column.__gt__,
    ">=": Column.__ge__,
}


def _is_nan(value: Column, type_: t.SqlType) -> Column | None:
    return F.isnan(value) if type_.base == "DOUBLE" else None


def compare(op: str, left: Column, right: Column, left_type: t.SqlType, right_type: t.SqlType) -> Column:
    """``left op right`` as ksqlDB evaluates it: never null, false when an operand is null."""
    left, right = comparable(left, left_type), comparable(right, right_type)
    result = _OPERATORS[op](left, right)
    # Java's primitive comparisons are false for NaN (Spark orders NaN above everything).
    for nan in (_is_nan(left, left_type), _is_nan(right, right_type)):
        if nan is not None:
            result = result & ~nan
    return F.coalesce(result, F.lit(False))


def distinct(left: Column, right: Column, left_type: t.SqlType, right_type: t.SqlType) -> Column:
    """``left IS DISTINCT FROM right``: nulls are equal to each other only."""
    either_null = left.isNull() | right.isNull()
    both_null = left.isNull() & right.isNull()
    return F.when(either_null, ~both_null).otherwise(compare("<>", left, right, left_type, right_type))


# ---------------------------------------------------------------------------- null handling


@implements("COALESCE", "IFNULL")
def _coalesce(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.coalesce(*args)


@implements("NULLIF")
def _nullif(expr: e.Call, args: Sequence[Column]) -> Column:
    first, second = expr.args
    same = compare("=", args[0], args[1], first.result_type, second.result_type)
    return F.when(same, _null(expr.sql_type)).otherwise(args[0])


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


# Java's String.trim() removes every character up to U+0020, not only spaces.
_JAVA_SPACE = r"[\x00-\x20]"


def java_trim(value: Column) -> Column:
    """Java's ``String.trim()``."""
    return F.regexp_replace(value, rf"^{_JAVA_SPACE}+|{_JAVA_SPACE}+$", "")


@implements("TRIM")
def _trim(expr: e.Call, args: Sequence[Column]) -> Column:
    return java_trim(args[0])


@implements("LTRIM")
def _ltrim(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.regexp_replace(args[0], rf"^{_JAVA_SPACE}+", "")


@implements("RTRIM")
def _rtrim(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.regexp_replace(args[0], rf"{_JAVA_SPACE}+$", "")


@implements("LEN")
def _len(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.length(args[0]) if expr.args[0].result_type == t.STRING else F.octet_length(args[0])


@implements("INITCAP")
def _initcap(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB lower-cases, then upper-cases the first character of each run of non-whitespace
    # (Java's \s); leading whitespace is dropped. Spark's initcap splits on spaces only.
    words = F.regexp_extract_all(F.lower(args[0]), F.lit(r"[^\s]+\s*"), 0)
    capitalized = F.transform(words, lambda w: F.concat(F.upper(F.substring(w, 1, 1)), F.substring(w, 2, 2**31 - 1)))
    return F.array_join(capitalized, "")


@implements("SUBSTRING")
def _substring(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB: 1-based start, 0 reads as 1, a negative start counts from the end and clamps
    # to the first character; a negative length gives "". Spark's substring differs when a
    # negative start reaches before the first character.
    value, position = args[0], args[1]
    length = args[2] if len(args) > 2 else F.lit(2**31 - 1)
    size = F.length(value) if expr.args[0].result_type == t.STRING else F.octet_length(value)
    start = F.when(position < 0, F.greatest(size + position, F.lit(0))).otherwise(
        F.greatest(F.least(position - 1, size), F.lit(0))
    )
    return F.when(position.isNull() | length.isNull(), F.lit(None)).otherwise(
        F.substring(value, start + 1, F.greatest(length, F.lit(0)))
    )


@implements("REPLACE")
def _replace(expr: e.Call, args: Sequence[Column]) -> Column:
    value, old, new = args
    # Java's String.replace("", x) puts x around every character.
    joined = F.call_function("array_join", F.split(value, ""), new)
    around = F.when(value == "", new).otherwise(F.concat(new, joined, new))
    return (
        F.when(old.isNull() | new.isNull(), F.lit(None)).when(old == "", around).otherwise(F.replace(value, old, new))
    )


def _ordinal_index(value: Column, search: Column, occurrence: Column) -> Column:
    """commons-lang ``ordinalIndexOf``: 0-based index of the n-th (overlapping) match, or -1."""

    def locate(start: Column) -> Column:
        return F.call_function("locate", search, value, start)

    found = F.aggregate(
        F.sequence(F.lit(1), F.greatest(occurrence, F.lit(1))),
        F.lit(0),  # 1-based position of the last match; 0 before the first, -1 when missing
        lambda last, _: F.when(last < 0, last).otherwise(F.when(locate(last + 1) > 0, locate(last + 1)).otherwise(-1)),
    )
    return (
        F.when(occurrence <= 0, F.lit(-1))
        .when(search == "", F.lit(0))
        .otherwise(F.when(found > 0, found - 1).otherwise(-1))
    )


@implements("INSTR")
def _instr(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB's Instr: 0 (not null) for null arguments; a negative position searches backwards.
    value, search = args[0], args[1]
    position = args[2] if len(args) > 2 else F.lit(1)
    occurrence = args[3] if len(args) > 3 else F.lit(1)
    size = F.length(value)

    def find(text: Column, needle: Column, start: Column) -> Column:
        # StringUtils.substring(text, start - 1): a negative start counts from the end.
        offset = F.when(start - 1 < 0, F.greatest(size + start - 1, F.lit(0))).otherwise(start - 1)
        rest = F.substring(text, offset + 1, 2**31 - 1)
        return _ordinal_index(rest, needle, occurrence)

    forward = find(value, search, position)
    backward = find(F.reverse(value), F.reverse(search), -position)
    result = F.when(
        position < 0,
        F.when(backward < 0, F.lit(0)).otherwise(size + position - backward - F.length(search) + 2),
    ).otherwise(F.when(forward < 0, F.lit(0)).otherwise(forward + position))
    # Position and occurrence are Java ints: a null one fails the call, so null.
    return (
        F.when(position.isNull() | occurrence.isNull(), F.lit(None))
        .when(value.isNull() | search.isNull() | (F.abs(position) > size), F.lit(0))
        .otherwise(result)
    )


@implements("ELT")
def _elt(expr: e.Call, args: Sequence[Column]) -> Column:
    # The n-th string (1-based); null when n is out of range.
    position, strings = args[0], args[1:]
    if not strings:
        return _null(t.STRING)
    return F.try_element_at(F.array(*strings), F.when(position >= 1, position))


@implements("FIELD")
def _field(expr: e.Call, args: Sequence[Column]) -> Column:
    # 1-based position of the first equal string; 0 when absent or when the string is null.
    value, strings = args[0], args[1:]
    if not strings:
        return F.lit(0)
    return F.coalesce(F.array_position(F.array(*strings), value), F.lit(0))


@implements("LPAD")
def _lpad(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB returns null for a negative length or an empty padding.
    invalid = (args[1] < 0) | (F.octet_length(args[2]) == 0)
    return F.when(invalid, F.lit(None)).otherwise(F.lpad(args[0], args[1], args[2]))


@implements("RPAD")
def _rpad(expr: e.Call, args: Sequence[Column]) -> Column:
    invalid = (args[1] < 0) | (F.octet_length(args[2]) == 0)
    return F.when(invalid, F.lit(None)).otherwise(F.rpad(args[0], args[1], args[2]))


@implements("SPLIT")
def _split(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB splits on the literal delimiter; an empty delimiter splits into characters.
    quoted = F.regexp_replace(args[1], r"([\\\[\](){}.*+?^$|])", r"\\$1")
    return F.when(args[1] == "", F.split(args[0], "")).otherwise(F.split(args[0], quoted, -1))


@implements("EXTRACTJSONFIELD")
def _extract_json_field(expr: e.Call, args: Sequence[Column]) -> Column:
    # Strings come back unquoted, objects and arrays as compact JSON text, as in ksqlDB.
    return F.call_function("get_json_object", args[0], args[1])


def like_with_escape(value: Column, pattern: Column, escape: str) -> Column:
    """``value LIKE pattern ESCAPE escape`` for a pattern known only per row.

    Spark's LIKE refuses an escape before an ordinary character, which ksqlDB allows; so
    the pattern is cut into tokens (an escaped character, or one character) and each token
    becomes its piece of a Java regex.
    """
    quoted_escape = re.escape(escape)
    tokens = F.regexp_extract_all(pattern, F.lit(f"(?s)({quoted_escape}.|.)"), 1)

    def piece(token: Column) -> Column:
        literal = F.when(F.length(token) == 2, F.substring(token, 2, 1)).otherwise(token)
        quoted = F.regexp_replace(literal, r"([\\^$.|?*+()\[\]{}])", r"\\$1")
        return (
            F.when(token == F.lit(escape), F.lit(None))  # a trailing escape character
            .when(token == "%", F.lit(".*"))
            .when(token == "_", F.lit("."))
            .otherwise(quoted)
        )

    pieces = F.transform(tokens, piece)
    valid = F.forall(pieces, lambda p: p.isNotNull())
    regex = F.concat(F.lit("^"), F.array_join(pieces, ""), F.lit("$"))
    return F.when(valid, F.regexp_like(value, regex))


# ---------------------------------------------------------------------------- math


@implements("SIGN")
def _sign(expr: e.Call, args: Sequence[Column]) -> Column:
    # Java's Math.signum(NaN) is NaN, and (int) NaN is 0.
    return F.when(F.isnan(args[0].cast("double")), F.lit(0)).otherwise(F.signum(args[0]))


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _java_round_half_up(value: Column) -> Column:
    """Java's ``Math.round(double)``: ties toward +infinity, NaN is 0, saturates at the longs."""
    floor = F.floor(value)
    # value - floor is exact for doubles, unlike value + 0.5 (0.49999999999999994 rounds to 0).
    rounded = F.when((value - floor) >= 0.5, floor + 1).otherwise(floor)
    return (
        F.when(F.isnan(value), F.lit(0))
        .when(value >= float(2**63), F.lit(_LONG_MAX))
        .when(value <= float(-(2**63)), F.lit(_LONG_MIN))
        .otherwise(rounded)
    )


def _half_unit(places: int) -> Column:
    """Half a unit in the last place kept: 0.005 for two places, 5 for -1, as a small DECIMAL."""
    half = decimal.Decimal(5).scaleb(-(places + 1)) if places >= 0 else decimal.Decimal(5 * 10 ** (-places - 1))
    return F.lit(half)


def _decimal_round(value: Column, places: int) -> Column:
    # ksqlDB rounds HALF_UP above zero and HALF_DOWN below it: ties go toward +infinity,
    # which is floor(value + half a unit), exact in decimal arithmetic.
    return F.floor(value + _half_unit(places), places)


def _decimal_trunc(value: Column, places: int) -> Column:
    return F.when(value < 0, F.ceil(value, places)).otherwise(F.floor(value, places))


def _double_via_decimal(value: Column, places: int, op: Callable[[Column, int], Column], huge: Column) -> Column:
    """A decimal rounding of a double, as ksqlDB does it on ``BigDecimal.valueOf(value)``.

    Spark's double -> decimal cast reads the same shortest decimal text. 20 places hold every
    double of at least 1e-3 exactly; doubles beyond 1e18 overflow the decimal, but are whole
    numbers already, so ``huge`` handles them. NaN and infinities make BigDecimal fail: null.
    """
    exact = value.cast("decimal(38,20)")
    return (
        F.when(F.isnan(value) | (F.abs(value) == float("inf")), F.lit(None))
        .when(exact.isNull(), huge)
        .otherwise(op(exact, places).cast("double"))
    )


def _places(expr: e.Call) -> int | None:
    places = _constant(expr.args[1])
    assert places is None or isinstance(places, int)
    return places


@implements("ROUND")
def _round(expr: e.Call, args: Sequence[Column]) -> Column:
    arg_type = expr.args[0].result_type
    value = args[0]
    if len(args) == 1:
        if arg_type == t.DOUBLE:
            return _java_round_half_up(value)
        if isinstance(arg_type, t.Decimal):
            return _decimal_round(value, 0)
        return value
    places = _places(expr)
    if places is None:
        return _null(expr.sql_type)
    if isinstance(arg_type, t.Decimal):
        return _decimal_round(value, places)
    huge = value if places >= 0 else F.round(value, places)
    return _double_via_decimal(value, places, _decimal_round, huge)


@implements("TRUNC")
def _trunc(expr: e.Call, args: Sequence[Column]) -> Column:
    arg_type = expr.args[0].result_type
    value = args[0]
    if len(args) == 1:
        if arg_type == t.DOUBLE:
            return value.cast("bigint")  # Java's (long) narrowing: toward zero, saturating
        if isinstance(arg_type, t.Decimal):
            return _decimal_trunc(value, 0)
        return value
    places = _places(expr)
    if places is None:
        return _null(expr.sql_type)
    if isinstance(arg_type, t.Decimal):
        return _decimal_trunc(value, places)
    huge = value if places >= 0 else _decimal_trunc(value, places).cast("double")
    return _double_via_decimal(value, places, _decimal_trunc, huge)


@implements("FLOOR")
def _floor(expr: e.Call, args: Sequence[Column]) -> Column:
    arg_type = expr.args[0].result_type
    if arg_type.base in ("INTEGER", "BIGINT"):
        return args[0]
    if arg_type == t.DOUBLE:
        # Spark's FLOOR of a double is a BIGINT; Java's Math.floor keeps NaN, infinities, -0.0.
        return F.when(F.isnan(args[0]) | (F.abs(args[0]) >= 2.0**52), args[0]).otherwise(F.floor(args[0]))
    return F.floor(args[0], 0)


@implements("CEIL")
def _ceil(expr: e.Call, args: Sequence[Column]) -> Column:
    arg_type = expr.args[0].result_type
    if arg_type.base in ("INTEGER", "BIGINT"):
        return args[0]
    if arg_type == t.DOUBLE:
        return F.when(F.isnan(args[0]) | (F.abs(args[0]) >= 2.0**52), args[0]).otherwise(F.ceil(args[0]))
    return F.ceil(args[0], 0)


def java_ln(value: Column) -> Column:
    """Java's ``Math.log``: -Infinity at 0 and NaN below it, where Spark returns null."""
    return (
        F.when(value > 0, F.ln(value))
        .when(value == 0, F.lit(float("-inf")))
        .when(value < 0, F.lit(float("nan")))
        .otherwise(value)  # null and NaN stay as they are
    )


@implements("LN")
def _ln(expr: e.Call, args: Sequence[Column]) -> Column:
    return java_ln(args[0])


@implements("LOG")
def _log(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB's LOG(x) is the natural logarithm; LOG(base, x) is NaN for a base <= 0 or 1.
    if len(args) == 1:
        return java_ln(args[0])
    base, value = args
    bad_base = (base <= 0) | (base == 1)
    return F.when(bad_base, F.lit(float("nan"))).otherwise(java_ln(value) / java_ln(base))


@implements("PI")
def _pi(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.lit(math.pi)


@implements("RANDOM")
def _random(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.rand(seed=0)


@implements("GREATEST")
def _greatest(expr: e.Call, args: Sequence[Column]) -> Column:
    # Nulls are skipped; only all-null arguments give null, as in ksqlDB.
    return F.greatest(*args) if len(args) > 1 else args[0]


@implements("LEAST")
def _least(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.least(*args) if len(args) > 1 else args[0]


# ---------------------------------------------------------------------------- collections


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


@implements("ARRAY_SORT")
def _array_sort(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB sorts nulls last in both directions; an unknown or null direction gives null.
    ascending = F.array_sort(args[0])
    if len(args) == 1:
        return ascending
    direction = F.upper(args[1])
    return F.when(direction.isin("ASC", "ASCENDING"), ascending).when(
        direction.isin("DESC", "DESCENDING"), F.sort_array(args[0], asc=False)
    )


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
    texts = F.transform(args[0], lambda x: java_string(x, element))
    delimiter = F.coalesce(args[1], F.lit("")) if len(args) > 1 else F.lit(",")
    return F.call_function("array_join", texts, delimiter)


@implements("MAP_UNION")
def _map_union(expr: e.Call, args: Sequence[Column]) -> Column:
    # The second map wins on a shared key; a null map counts as empty unless both are null.
    first, second = args
    merged = F.map_concat(F.map_filter(first, lambda k, v: ~F.array_contains(F.map_keys(second), k)), second)
    return F.when(first.isNull(), second).when(second.isNull(), first).otherwise(merged)


@implements("ENTRIES")
def _entries(expr: e.Call, args: Sequence[Column]) -> Column:
    entries = F.transform(
        F.map_entries(args[0]),
        lambda entry: F.struct(entry["key"].alias("K"), entry["value"].alias("V")),
    )
    # ``sorted`` is a Java boolean: null fails the call.
    return F.when(args[1], F.array_sort(entries)).when(~args[1], entries)


@implements("GENERATE_SERIES")
def _generate_series(expr: e.Call, args: Sequence[Column]) -> Column:
    start, end = args[0], args[1]
    if len(args) == 2:
        step = F.when(end >= start, F.lit(1)).otherwise(F.lit(-1)).cast(to_spark(expr.args[0].result_type))
    else:
        step = args[2]
    # ksqlDB fails (so emits null) for a zero step or one that points away from the end;
    # Spark's sequence would fail the whole query.
    wrong_way = (step == 0) | ((end > start) & (step < 0)) | ((end < start) & (step > 0))
    return F.when(wrong_way, F.lit(None)).otherwise(F.sequence(start, end, step))


# ---------------------------------------------------------------------------- dates


def _days_since_epoch(value: Column) -> Column:
    return F.datediff(value, F.lit("1970-01-01").cast("date"))


def simple_date_parse(value: Column, pattern: str) -> Column:
    """``SimpleDateFormat.parse`` (lenient, as ksqlDB's PARSE_DATE runs it) of a date.

    Unlike java.time (and Spark), SimpleDateFormat reads a numeric field's digits whatever
    the letter count, unless another numeric field follows directly; it ignores text after
    the date; and its lenient calendar rolls over (month 13 is January of the next year).
    """
    tokens = fns.simple_date_fields(pattern)
    if tokens is None:  # pragma: no cover - the analyzer rejects these patterns
        msg = f"PARSE_DATE pattern {pattern!r} is not supported"
        raise RuntimeBuildError(msg)
    regex, groups = ["^"], []
    for position, (kind, text) in enumerate(tokens):
        if kind == "lit":
            regex.append(re.escape(text))
            continue
        adjacent = position + 1 < len(tokens) and tokens[position + 1][0] != "lit"
        regex.append(f"([0-9]{{{len(text)}}})" if adjacent else "([0-9]+)")
        groups.append(kind)
    parts = {kind: F.regexp_extract(value, "".join(regex), index + 1).cast("int") for index, kind in enumerate(groups)}
    year = parts.get("y", F.lit(1970))
    months = parts.get("M", F.lit(1)) - 1
    days = parts.get("d", F.lit(1)) - 1
    # regexp_extract gives "" (so null) when the text does not match.
    return F.date_add(F.add_months(F.make_date(year, F.lit(1), F.lit(1)), months), days)


@implements("PARSE_DATE")
def _parse_date(expr: e.Call, args: Sequence[Column]) -> Column:
    pattern = _constant(expr.args[1])
    return _null(t.DATE) if pattern is None else simple_date_parse(args[0], str(pattern))


@implements("STRINGTODATE")
def _string_to_date(expr: e.Call, args: Sequence[Column]) -> Column:
    # java.time's LocalDate.parse: the whole text, strictly, as Spark's to_date.
    pattern = _constant(expr.args[1])
    return _null(t.INTEGER) if pattern is None else _days_since_epoch(F.to_date(args[0], str(pattern)))


@implements("FORMAT_DATE")
def _format_date(expr: e.Call, args: Sequence[Column]) -> Column:
    pattern = _constant(expr.args[1])
    return _null(t.STRING) if pattern is None else F.date_format(args[0], str(pattern))


@implements("DATETOSTRING")
def _date_to_string(expr: e.Call, args: Sequence[Column]) -> Column:
    pattern = _constant(expr.args[1])
    if pattern is None:
        return _null(t.STRING)
    return F.date_format(F.date_add(F.lit("1970-01-01").cast("date"), args[0]), str(pattern))


# ---------------------------------------------------------------------------- test functions


def _lazy_check(value: Column, evaluated: Column, what: str) -> Column:
    # Fails the query when evaluated with `false`, so a replay proves CASE is lazy.
    return F.when(evaluated, value).otherwise(F.raise_error(F.lit(f"{what} in case is not running lazily!")))


@implements("WHENCONDITION")
def _when_condition(expr: e.Call, args: Sequence[Column]) -> Column:
    return _lazy_check(args[0], args[1], "When condition")


@implements("WHENRESULT")
def _when_result(expr: e.Call, args: Sequence[Column]) -> Column:
    return _lazy_check(args[0], args[1], "When result")


# ---------------------------------------------------------------------------- CAST

_INTEGER_TEXT = r"^[+-]?[0-9]+$"
# What Java's Double.parseDouble accepts (without hexadecimal floating point).
_DOUBLE_TEXT = r"^[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?)$"
# What java.math.BigDecimal(String) accepts.
_DECIMAL_TEXT = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def cast(value: Column, source: t.SqlType, target: t.SqlType) -> Column:
    """CAST with ksqlDB's semantics (its ``CastEvaluator``); a failed conversion is null."""
    if source == target:
        return value
    spark_target = to_spark(target)
    if target == t.STRING:
        return java_string(value, source, top_level=True)
    if source == t.STRING:
        text = java_trim(value)
        if target.base in ("INTEGER", "BIGINT"):
            # Integer.parseInt: no fraction, no exponent; Spark's cast would truncate "1.5".
            return F.when(text.rlike(_INTEGER_TEXT), text.cast(spark_target))
        if target == t.DOUBLE:
            return F.when(text.rlike(_DOUBLE_TEXT), F.regexp_replace(text, "[fFdD]$", "").cast("double"))
        if isinstance(target, t.Decimal):
            return F.when(text.rlike(_DECIMAL_TEXT), text.cast(spark_target))
        if target == t.BOOLEAN:
            # ksqlDB's SqlBooleans: any prefix of "true" or "yes" is true, anything else false.
            lowered = F.lower(text)
            truthy = (F.length(lowered) > 0) & (F.lit("true").startswith(lowered) | F.lit("yes").startswith(lowered))
            return F.when(value.isNotNull(), truthy)
        if target == t.BYTES:
            return F.unbase64(text)
        return text.cast(spark_target)
    if isinstance(source, t.Array) and isinstance(target, t.Array):
        src, dst = source.element, target.element
        return F.transform(value, lambda x: cast(x, src, dst))
    if isinstance(source, t.Map) and isinstance(target, t.Map):
        return _cast_map(value, source, target)
    if isinstance(source, t.Struct) and isinstance(target, t.Struct):
        return _cast_struct(value, source, target)
    return value.cast(spark_target)


def _cast_map(value: Column, source: t.Map, target: t.Map) -> Column:
    casted = F.transform_values(value, lambda k, v: cast(v, source.value, target.value))
    if source.key == target.key:
        return casted
    # A key that fails to convert fails ksqlDB's whole expression; Spark cannot hold a null key.
    keys_ok = F.forall(F.map_keys(value), lambda k: cast(k, source.key, target.key).isNotNull())
    converted = F.transform_keys(casted, lambda k, v: cast(k, source.key, target.key))
    return F.when(keys_ok, converted)


def _cast_struct(value: Column, source: t.Struct, target: t.Struct) -> Column:
    # Fields are matched by name; a target field the source lacks is null.
    fields = []
    for f in target.fields:
        found = source.field(f.name)
        field_value = cast(value.getField(f.name), found.type, f.type) if found is not None else _null(f.type)
        fields.append(field_value.alias(f.name))
    return F.when(value.isNotNull(), F.struct(*fields))


def java_string(value: Column, type_: t.SqlType, *, top_level: bool = False) -> Column:
    """Java's text of a value: ``String.valueOf`` / ``toString`` as ksqlDB's CAST uses it.

    Inside collections a null prints as ``null``; a null at the top level stays null (ksqlDB's
    ``ksql.cast.strings.preserve.nulls`` default).
    """
    text = _java_text(value, type_, plain_decimal=top_level)
    return text if top_level else F.coalesce(text, F.lit("null"))


def _java_text(value: Column, type_: t.SqlType, *, plain_decimal: bool) -> Column:
    if type_ == t.STRING:
        return value
    if type_.base in ("BOOLEAN", "INTEGER", "BIGINT", "DOUBLE"):
        # Spark prints these as Java does (Double.toString included: 1.0E10, 4.9E-324).
        return value.cast("string")
    if isinstance(type_, t.Decimal):
        if plain_decimal:
            # CAST(DECIMAL AS STRING) is BigDecimal.toPlainString(); Spark's cast may use
            # scientific notation, format_number never does (its grouping commas go).
            return F.regexp_replace(F.format_number(value, type_.scale), ",", "")
        return value.cast("string")  # BigDecimal.toString(), as Spark prints decimals
    if type_ == t.DATE:
        return F.date_format(value, "yyyy-MM-dd")
    if type_ == t.TIMESTAMP:
        return F.date_format(value, "yyyy-MM-dd'T'HH:mm:ss.SSS")
    if isinstance(type_, t.Array):
        element = type_.element
        items = F.transform(value, lambda x: java_string(x, element))
        return F.concat(F.lit("["), F.array_join(items, ", "), F.lit("]"))
    if isinstance(type_, t.Map):
        key_type, value_type = type_.key, type_.value
        entries = F.transform(
            F.map_entries(value),
            lambda entry: F.concat(
                java_string(entry["key"], key_type),
                F.lit("="),
                java_string(entry["value"], value_type),
            ),
        )
        return F.concat(F.lit("{"), F.array_join(entries, ", "), F.lit("}"))
    if isinstance(type_, t.Struct):
        # Kafka Connect's Struct.toString() leaves out null fields.
        parts = [
            F.when(
                value.getField(f.name).isNotNull(),
                F.concat(F.lit(f.name + "="), java_string(value.getField(f.name), f.type)),
            )
            for f in type_.fields
        ]
        inner = F.concat_ws(",", *parts) if parts else F.lit("")
        return F.when(value.isNotNull(), F.concat(F.lit("Struct{"), inner, F.lit("}")))
    msg = f"no Java text for values of type {type_}"
    raise RuntimeBuildError(msg)
