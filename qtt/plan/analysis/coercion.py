"""ksqlDB's typing rules: NULL inference, implicit casts, numeric widening, comparisons, CAST.

Pure functions of SQL types (and of typed plan expressions for NULL handling); the analyzer
applies them while it types a clause.
"""

from __future__ import annotations

import decimal
from collections.abc import Iterable

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.functions.signature_matching import (
    NULL,
    NULL_TYPE_MESSAGE,
    NullType,
    widen_decimals,
    widen_integer_to_decimal,
)
from qtt.plan.ir import expressions as e


def is_null_literal(expr: e.Expression) -> bool:
    return isinstance(expr, e.Literal) and isinstance(expr.sql_type, NullType)


def reject_untyped_null(expr: e.Expression) -> e.Expression:
    """``expr``, unless it is a bare NULL selected as a column (ksqlDB cannot type it)."""
    if is_null_literal(expr):
        raise StatementError(NULL_TYPE_MESSAGE)
    return expr


def coerce_null(expr: e.Expression, type_: t.SqlType) -> e.Expression:
    """Give a bare NULL literal a concrete type; other expressions are returned unchanged."""
    if is_null_literal(expr) and not isinstance(type_, NullType):
        return e.Literal(value=None, sql_type=type_)
    return expr


def implicit_cast(expr: e.Expression, type_: t.SqlType) -> e.Expression:
    """``expr`` as ``type_``: NULL gets the type, a widened argument gets an explicit CAST.

    ksqlDB converts a function argument to the parameter type the same way, so the runtime
    can rely on every argument having its parameter's exact type.
    """
    if is_null_literal(expr):
        return coerce_null(expr, type_)
    if expr.result_type == type_ or isinstance(type_, NullType):
        return expr
    return e.Cast(operand=expr, sql_type=type_)


def map_key(index: e.Expression, key: t.SqlType) -> e.Expression | None:
    """``index`` as the key of a map whose keys are ``key``, or None when ksqlDB's ``Map.get``
    never finds it: Java's ``equals`` is false across classes (an INTEGER index of a BIGINT or
    STRING key) and between BigDecimals of different scales."""
    type_ = index.result_type
    if type_.base != key.base or (isinstance(type_, t.Decimal) and type_.scale != getattr(key, "scale", None)):
        return None
    return implicit_cast(index, key)


# ---------------------------------------------------------------------------- type rules


def arithmetic_type(op: str, left: t.SqlType, right: t.SqlType) -> t.SqlType | None:
    """ksqlDB's result type for ``left op right``, or None if the types do not combine."""
    if not (t.is_numeric(left) and t.is_numeric(right)):
        return None
    bases = {left.base, right.base}
    if "DOUBLE" in bases:
        return t.DOUBLE
    if "DECIMAL" in bases:
        a, b = widen_integer_to_decimal(left), widen_integer_to_decimal(right)
        p1, s1, p2, s2 = a.precision, a.scale, b.precision, b.scale
        if op in ("+", "-"):
            scale = max(s1, s2)
            precision = scale + max(p1 - s1, p2 - s2) + 1
        elif op == "*":
            precision, scale = p1 + p2 + 1, s1 + s2
        elif op == "/":
            scale = max(6, s1 + p2 + 1)
            precision = p1 - s1 + s2 + scale
        else:
            scale = max(s1, s2)
            precision = min(p1 - s1, p2 - s2) + scale
        return t.Decimal(precision, scale)
    if "BIGINT" in bases:
        return t.BIGINT
    return t.INTEGER


def unsupported_arithmetic(op: str, result: t.SqlType, *, in_lambda: bool) -> str | None:
    """The feature to name when qtt cannot compute ``op`` with result type ``result``, else None:
    a DECIMAL wider than Spark's 38 digits (ksqlDB's grow further), or a DECIMAL ``/`` or ``%``
    inside a lambda body (the runtime computes those with a Python UDF, which a Spark lambda
    cannot call)."""
    too_wide = t.wider_than_spark(result)
    if too_wide is not None:
        return too_wide
    if in_lambda and isinstance(result, t.Decimal) and op in ("/", "%"):
        return f"DECIMAL {op} inside a lambda (ksqlDB's exact BigDecimal arithmetic)"
    return None


def common_type(types: Iterable[t.SqlType]) -> t.SqlType | None:
    """The type every one of ``types`` converts to (NULL fits anything); None if none does."""
    result: t.SqlType = NULL
    for type_ in types:
        if isinstance(type_, NullType):
            continue
        if isinstance(result, NullType) or result == type_:
            result = type_
        elif t.is_numeric(result) and t.is_numeric(type_):
            widened = arithmetic_type("+", result, type_)
            if widened is None:  # pragma: no cover - numeric types always combine
                return None
            if isinstance(widened, t.Decimal):
                widened = widen_decimals(result, type_)
            result = widened
        else:
            return None
    return result


#: the comparisons ksqlDB's ComparisonUtil counts as equality (BOOLEAN, ARRAY, MAP and STRUCT
#: operands take only these)
EQUALITY_OPS = frozenset({"=", "<>", "IS DISTINCT FROM"})


def comparable(left: t.SqlType, right: t.SqlType, op: str) -> bool:
    if isinstance(left, NullType) or isinstance(right, NullType):
        return True
    if t.is_numeric(left) and t.is_numeric(right):
        return True
    if left.base in ("ARRAY", "MAP", "STRUCT") or right.base in ("ARRAY", "MAP", "STRUCT"):
        return op in EQUALITY_OPS and left == right
    if left.base == right.base:
        return left.base != "BOOLEAN" or op in EQUALITY_OPS
    # ksqlDB's ComparisonUtil: text compares with any temporal type (read as that type), and a
    # DATE with a TIMESTAMP (as the instant of its midnight, UTC).
    if {left.base, right.base} == {"DATE", "TIMESTAMP"}:
        return True
    temporal = {"TIMESTAMP", "DATE", "TIME", "STRING"}
    return left.base in temporal and right.base in temporal and "STRING" in (left.base, right.base)


_TEMPORAL_OPERANDS = {
    "TIME": frozenset({"TIME", "STRING"}),
    "TIMESTAMP": frozenset({"TIMESTAMP", "DATE", "STRING"}),
    "DATE": frozenset({"DATE", "STRING"}),
}


def between_problem(value: t.SqlType, low: t.SqlType, high: t.SqlType) -> str | None:
    """What ksqlDB's code generator refuses in ``value BETWEEN low AND high``, which nothing
    type-checks before it compiles ``value >= low`` and ``value <= high``."""
    return compiled_comparison_problem(value, low, ">=") or compiled_comparison_problem(value, high, "<=")


def compiled_comparison_problem(left: t.SqlType, right: t.SqlType, op: str) -> str | None:
    """What ksqlDB's code generator refuses in a comparison nothing type-checked before it
    (``BETWEEN``'s bounds: ``SqlToJavaVisitor``), or None where it compiles or qtt's own check
    decides."""
    bases = {x.base for x in (left, right) if not isinstance(x, NullType)}
    if "DECIMAL" in bases:
        return None
    for temporal in ("TIME", "TIMESTAMP", "DATE"):  # the first that either side is wins
        if temporal in bases:
            wrong = sorted(bases - _TEMPORAL_OPERANDS[temporal])
            return f"Unexpected comparison to {temporal}: {wrong[0]}" if wrong else None
    if not isinstance(left, NullType) and left.base == "BOOLEAN" and op not in ("=", "<>"):
        return f"Unexpected boolean comparison: {op}"
    if not isinstance(left, NullType) and left.base in ("ARRAY", "MAP", "STRUCT") and op not in ("=", "<>"):
        # the left side picks the Java a comparison compiles to, whatever the right side is
        return f"Unexpected {left.base.lower()} comparison: {op}"
    return None


#: ksqlDB's CastEvaluator table: source base type -> target base types it casts to.
_CASTS: dict[str, frozenset[str]] = {
    "BOOLEAN": frozenset(["STRING"]),
    "INTEGER": frozenset(["BIGINT", "DECIMAL", "DOUBLE", "STRING"]),
    "BIGINT": frozenset(["INTEGER", "DECIMAL", "DOUBLE", "STRING"]),
    "DECIMAL": frozenset(["INTEGER", "BIGINT", "DECIMAL", "DOUBLE", "STRING"]),
    "DOUBLE": frozenset(["INTEGER", "BIGINT", "DECIMAL", "STRING"]),
    "STRING": frozenset(["BOOLEAN", "INTEGER", "BIGINT", "DECIMAL", "DOUBLE", "TIMESTAMP", "TIME", "DATE", "BYTES"]),
    "ARRAY": frozenset(["ARRAY", "STRING"]),
    "MAP": frozenset(["MAP", "STRING"]),
    "STRUCT": frozenset(["STRUCT", "STRING"]),
    "TIMESTAMP": frozenset(["STRING", "TIME", "DATE"]),
    "DATE": frozenset(["TIMESTAMP", "STRING"]),
    "TIME": frozenset(["STRING"]),
}


def cast_pairs() -> list[str]:
    """Every source and target base type pair of ksqlDB's CAST, as :func:`cast_text` names it."""
    return [cast_text(source, target) for source, targets in _CASTS.items() for target in sorted(targets)]


def cast_text(source: str, target: str) -> str:
    """A CAST between two base types, as text: ``CAST(BIGINT AS INTEGER)``."""
    return f"CAST({source} AS {target})"


def can_cast(source: t.SqlType, target: t.SqlType) -> bool:
    """Whether ksqlDB's CAST supports ``source`` to ``target`` (element and field types too)."""
    if isinstance(source, NullType) or source == target:
        return True
    if target.base not in _CASTS.get(source.base, frozenset()):
        return False
    return all(can_cast(a, b) for a, b in _nested_pairs(source, target))


def _nested_pairs(source: t.SqlType, target: t.SqlType) -> list[tuple[t.SqlType, t.SqlType]]:
    """The element, key/value or field types a cast of ``source`` to ``target`` also casts."""
    if isinstance(source, t.Array) and isinstance(target, t.Array):
        return [(source.element, target.element)]
    if isinstance(source, t.Map) and isinstance(target, t.Map):
        return [(source.key, target.key), (source.value, target.value)]
    if isinstance(source, t.Struct) and isinstance(target, t.Struct):
        # Fields are matched by name; target fields the source lacks become null.
        pairs = [(f.type, target.field(f.name)) for f in source.fields]
        return [(a, b.type) for a, b in pairs if b is not None]
    return []


# Java's toString of these inside a collection (java.sql.Timestamp, ByteBuffer ...) has no
# Spark equivalent worth emulating.
_UNPRINTABLE_IN_COLLECTIONS = frozenset(["BYTES", "DATE", "TIME", "TIMESTAMP"])


def unsupported_cast(source: t.SqlType, target: t.SqlType) -> str | None:
    """The feature to name when qtt cannot run a cast that ksqlDB supports, else None."""
    if isinstance(source, NullType) or source == target:
        return None
    if target == t.STRING and source.base in ("ARRAY", "MAP", "STRUCT"):
        unprintable = _nested_bases(source) & _UNPRINTABLE_IN_COLLECTIONS
        if unprintable:
            nested = sorted(unprintable)[0]
            return f"CAST of {source} to STRING (Java's text of nested {nested} values)"
    problems = (unsupported_cast(a, b) for a, b in _nested_pairs(source, target))
    return next((p for p in problems if p is not None), None)


def _nested_bases(type_: t.SqlType) -> set[str]:
    if isinstance(type_, t.Array):
        return {type_.element.base} | _nested_bases(type_.element)
    if isinstance(type_, t.Map):
        return {type_.key.base, type_.value.base} | _nested_bases(type_.key) | _nested_bases(type_.value)
    if isinstance(type_, t.Struct):
        bases: set[str] = set()
        for f in type_.fields:
            bases |= {f.type.base} | _nested_bases(f.type)
        return bases
    return set()


def decimal_literal_type(text: str) -> t.Decimal:
    """ksqlDB's ``DecimalUtil.fromValue``: a value strictly between -1 and 1 has one digit more
    than its scale (``0.05`` is ``DECIMAL(3, 2)``, ``0.00`` ``DECIMAL(3, 2)``); any other has
    ``BigDecimal.precision()`` digits, a negative scale made 0 (``1E+3`` is ``DECIMAL(4, 0)``)."""
    number = decimal.Decimal(text)
    _, digits, exponent = number.as_tuple()
    scale = max(-int(exponent), 0)
    if -1 < number < 1:
        return t.Decimal(scale + 1, scale)
    return t.Decimal(len(digits) + max(int(exponent), 0), scale)
