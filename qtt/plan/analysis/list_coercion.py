"""ksqlDB's coercion of an expression list to one common type (``CoercionUtil.coerceUserList``).

ksqlDB applies it to ``a IN (b, c, ...)``: the value and the items, in order, must coerce to a
common type, found by inspecting each expression in turn (the first non-null one starts it):

* numbers widen (INTEGER -> BIGINT -> DECIMAL -> DOUBLE); a DECIMAL grows to hold both sides;
* a STRING *literal* that holds a number joins a numeric list as the narrowest type that holds
  it (INTEGER, BIGINT, DECIMAL(p, s), or DOUBLE when the list is DOUBLE); one that holds a
  boolean (``true``, ``yes``, ``f``, ... any case) joins a BOOLEAN list;
* any other *literal* coerces to STRING in a STRING list;
* a STRING, literal or not, joins a TIME, DATE, TIMESTAMP or BYTES list (a CAST parses it); a
  literal that is no such value fails the statement (:mod:`~qtt.plan.analysis.text_literals`);
* ARRAY, MAP and STRUCT constructors coerce element by element; columns of those types
  coerce when their element types widen.

What does not coerce is ksqlDB's error: ``invalid input syntax for type T: "text".`` or
``operator does not exist: T = S (expr)`` with its hint. Literals of the common type are
rewritten (a parsed number or boolean); every other expression that differs gets a CAST.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.analysis.coercion import decimal_literal_type
from qtt.plan.analysis.text_literals import TEXT_READ, reads_as
from qtt.plan.functions.signature_matching import NullType, widen_decimals
from qtt.plan.ir import expressions as e
from qtt.sqltypes import BIGINT_MAX, BIGINT_MIN, INT_MAX, INT_MIN


class CoercionError(StatementError):
    """An expression of the list does not coerce to the list's common type (ksqlDB's text)."""


class _Mismatch(CoercionError):
    """ksqlDB's ``InvalidCoercionException``: a constructor reports it as its own failure."""


def _is_literal(expr: e.Expression) -> bool:
    return isinstance(expr, e.Literal)


def _is_null(expr: e.Expression) -> bool:
    # A NULL literal inside a constructor already has the constructor's type; it is still NULL.
    return isinstance(expr, e.Literal) and (isinstance(expr.sql_type, NullType) or expr.value is None)


def _parse_boolean(text: str) -> bool | None:
    # ksqlDB's lax boolean: true/false/yes/no or any prefix of them, case-insensitive.
    value = text.strip().lower()
    if not value:
        return None
    if "true".startswith(value) or "yes".startswith(value):
        return True
    if "false".startswith(value) or "no".startswith(value):
        return False
    return None


def _string_number_type(text: str) -> t.SqlType:
    """ksqlDB's ``getStringNumericType``: the narrowest type of a number written as text.

    Raises:
        decimal.InvalidOperation: ``text`` is not a number.
    """
    value = decimal.Decimal(text.strip())
    if not value.is_finite():
        raise decimal.InvalidOperation(text)
    if not any(c in text for c in ".eE") and value == value.to_integral_value():
        whole = int(value)
        # ksqlDB's bounds are exclusive: the extreme INT values count as BIGINT.
        if INT_MIN < whole < INT_MAX:
            return t.INTEGER
        if BIGINT_MIN < whole < BIGINT_MAX:
            return t.BIGINT
    return decimal_literal_type(str(value))


_RANK = {"INTEGER": 0, "BIGINT": 1, "DECIMAL": 2, "DOUBLE": 3}


def _coerce_numbers(source: t.SqlType, target: t.SqlType) -> t.SqlType | None:
    if _RANK[source.base] > _RANK[target.base]:
        return None
    if target.base == "DECIMAL":
        return widen_decimals(source, target)
    return target


def can_coerce(
    source: t.SqlType,
    target: t.SqlType,
    *,
    literal: bool = False,
    from_text: bool = True,
    all_fields: bool = False,
) -> t.SqlType | None:
    """The type ``source`` becomes to fit ``target`` (ksqlDB's ``canCoerce``), or None.

    ``literal`` adds ksqlDB's lax rule for literals: any literal coerces to STRING.
    ``from_text=False`` leaves out text to temporal and BYTES types (numbers still widen).
    ``all_fields`` keeps, as ksqlDB's list coercion does, every field of either struct: those
    of ``source`` first, then those only ``target`` has; without it, ``target``'s fields only.
    """
    if source == target:
        return target
    if t.is_numeric(source) and t.is_numeric(target):
        return _coerce_numbers(source, target)
    if literal and target == t.STRING and not t.is_structured(source):
        return t.STRING
    if from_text and source == t.STRING and target.base in TEXT_READ:
        return target
    if isinstance(source, t.Array) and isinstance(target, t.Array):
        element = can_coerce(source.element, target.element, from_text=from_text, all_fields=all_fields)
        return t.Array(element) if element is not None else None
    if isinstance(source, t.Map) and isinstance(target, t.Map):
        key = can_coerce(source.key, target.key, from_text=from_text, all_fields=all_fields)
        value = can_coerce(source.value, target.value, from_text=from_text, all_fields=all_fields)
        return t.Map(key, value) if key is not None and value is not None else None
    if isinstance(source, t.Struct) and isinstance(target, t.Struct):
        names = [f.name for f in target.fields]
        if all_fields:
            names = [f.name for f in source.fields] + [n for n in names if source.field(n) is None]
        fields = []
        for name in names:
            mine, theirs = source.field(name), target.field(name)
            if mine is not None and theirs is not None:
                common = can_coerce(mine.type, theirs.type, from_text=from_text, all_fields=all_fields)
            else:
                only = mine or theirs
                assert only is not None
                common = only.type
            if common is None:
                return None
            fields.append(t.Field(name, common))
        return t.Struct(tuple(fields))
    return None


def compared(op: str, left: e.Expression, right: e.Expression) -> e.Comparison | e.MixedEquality:
    """``left op right``; ``=`` or ``<>`` of two ARRAYs, MAPs or STRUCTs of different types is a
    :class:`~qtt.plan.ir.expressions.MixedEquality`, without the casts that plans persisted
    before it hold (ksqlDB's generated code calls ``equals`` on them as they are)."""
    lt, rt = left.result_type, right.result_type
    if op in ("=", "<>") and lt != rt and lt.base == rt.base and lt.base in ("ARRAY", "MAP", "STRUCT"):
        return e.MixedEquality(op=op, left=left, right=right)
    return e.Comparison(op=op, left=left, right=right)


def _failure(shown: str, source: t.SqlType, target: t.SqlType) -> CoercionError:
    msg = f"operator does not exist: {target} = {source} ({shown})\nHint: You might need to add explicit type casts."
    return _Mismatch(msg)


def _invalid_syntax(text: str, target: t.SqlType) -> CoercionError:
    return CoercionError(f'invalid input syntax for type {target.base}: "{text}".')


class ListCoercer:
    """Finds the common type of a list and converts its expressions (one list per instance).

    ``shown`` gives the SQL text of each expression, for ksqlDB's messages.
    """

    def __init__(self, shown: Sequence[str]) -> None:
        self.shown = shown

    def common_type(self, exprs: Sequence[e.Expression]) -> t.SqlType | None:
        """The list's common type, or None when every expression is a bare NULL.

        Raises:
            CoercionError: an expression does not coerce, with ksqlDB's message.
        """
        common: t.SqlType | None = None
        for expr, shown in zip(exprs, self.shown, strict=True):
            common = self._step(expr, shown, common)
        return common

    def _step(self, expr: e.Expression, shown: str, target: t.SqlType | None) -> t.SqlType | None:
        if _is_null(expr):
            return target
        if target is None:
            return expr.result_type
        source = expr.result_type
        if isinstance(expr, e.CreateArray | e.CreateMap | e.CreateStruct):
            try:
                common = self._constructor(expr, target)
            except _Mismatch:
                common = None
            if common is None:
                raise _failure(shown, source, target)
            return common
        if isinstance(expr, e.Literal) and source == t.STRING and isinstance(expr.value, str):
            if t.is_numeric(target):
                return _numeric_from_text(expr.value, target)
            if target == t.BOOLEAN:
                if _parse_boolean(expr.value) is None:
                    raise _invalid_syntax(expr.value, t.BOOLEAN)
                return target
        literal = _is_literal(expr)
        common = can_coerce(source, target, literal=literal, all_fields=True) or can_coerce(
            target, source, literal=literal, all_fields=True
        )
        if common is None:
            raise _failure(shown, source, target)
        return common

    def _constructor(self, expr: e.Expression, target: t.SqlType) -> t.SqlType | None:
        nested = self
        if isinstance(expr, e.CreateArray) and isinstance(target, t.Array):
            return t.Array(nested._within(target.element, expr.items))
        if isinstance(expr, e.CreateMap) and isinstance(target, t.Map):
            key = nested._within(target.key, [entry.key for entry in expr.entries])
            value = nested._within(target.value, [entry.value for entry in expr.entries])
            return t.Map(key, value)
        if isinstance(expr, e.CreateStruct) and isinstance(target, t.Struct):
            names = [f.name for f in expr.fields] + [
                f.name for f in target.fields if f.name not in {x.name for x in expr.fields}
            ]
            fields = []
            for name in names:
                mine = next((f.value for f in expr.fields if f.name == name), None)
                theirs = target.field(name)
                if theirs is None:
                    assert mine is not None
                    fields.append(t.Field(name, mine.result_type))
                elif mine is None:
                    fields.append(theirs)
                else:
                    fields.append(t.Field(name, nested._within(theirs.type, [mine])))
            return t.Struct(tuple(fields))
        return None

    def _within(self, target: t.SqlType, exprs: Sequence[e.Expression]) -> t.SqlType:
        common: t.SqlType | None = target
        for expr in exprs:
            common = self._step(_as_written(expr), "", common)
        assert common is not None
        return common


def _as_written(expr: e.Expression) -> e.Expression:
    """A nested constructor's item as ksqlDB's coercion sees it: as written.

    ksqlDB types a list without rewriting it, so the elements of a nested ``ARRAY[...]`` or
    ``MAP(...)`` are still the literals the statement wrote; qtt's own coercion of that
    constructor turned a number or boolean literal that joined its STRING elements into a CAST
    to STRING (:func:`convert`), which is the literal again here.
    """
    if (
        isinstance(expr, e.Cast)
        and expr.sql_type == t.STRING
        and isinstance(expr.operand, e.Literal)
        and not _is_null(expr.operand)
        and expr.operand.result_type != t.STRING
    ):
        return expr.operand
    return expr


def _numeric_from_text(text: str, target: t.SqlType) -> t.SqlType:
    try:
        source = _string_number_type(text)
    except (decimal.InvalidOperation, ValueError):
        raise _invalid_syntax(text, target) from None
    if "DOUBLE" in (source.base, target.base):
        return t.DOUBLE
    if "DECIMAL" in (source.base, target.base):
        return widen_decimals(source, target)
    return target if _RANK[source.base] <= _RANK[target.base] else source


def convert(expr: e.Expression, common: t.SqlType) -> e.Expression:
    """``expr`` as the list's ``common`` type: a rewritten literal, a CAST, or ``expr`` itself."""
    if _is_null(expr):
        return e.Literal(value=None, sql_type=common)
    if expr.result_type == common:
        return expr
    if isinstance(expr, e.Literal) and isinstance(expr.value, str) and expr.result_type == t.STRING:
        if common == t.BOOLEAN:
            return e.Literal(value=_parse_boolean(expr.value), sql_type=t.BOOLEAN)
        if t.is_numeric(common):
            return _number_literal(expr.value, common)
        if common.base in TEXT_READ and not reads_as(expr.value, common.base):
            # ksqlDB converts the literal as it types the list: this fails the statement there
            raise _invalid_syntax(expr.value, common)
    return e.Cast(operand=expr, sql_type=common)


def _number_literal(text: str, common: t.SqlType) -> e.Expression:
    value = decimal.Decimal(text.strip())
    if common.base == "DOUBLE":
        return e.Literal(value=float(value), sql_type=t.DOUBLE)
    if common.base in ("INTEGER", "BIGINT"):
        return e.Literal(value=int(value), sql_type=common)
    assert isinstance(common, t.Decimal)
    return e.Literal(value=str(value.quantize(decimal.Decimal(1).scaleb(-common.scale))), sql_type=common)
