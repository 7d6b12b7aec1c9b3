"""Typed expressions as persisted in plans.

The planner resolves names, types and functions once; the runtime compiles these nodes
without a parser or a type checker. Each node declares a ``type_tag``, and a shipped tag
never changes shape (see docs/style.md). Boolean-valued nodes do not store their type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from qtt import sqltypes as t
from qtt.plan.ir.tagged import Tagged, children_of

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Expression(Tagged, root=True, kind="expression"):
    """Base class of plan expressions."""

    @property
    def result_type(self) -> t.SqlType:
        """The SQL type this expression evaluates to."""
        return self.sql_type  # type: ignore[attr-defined]

    def children(self) -> tuple[Expression, ...]:
        """Direct sub-expressions, in evaluation order (derived from the fields, in order)."""
        return children_of(self, Expression)


@dataclass(frozen=True, kw_only=True)
class BooleanExpression(Expression):
    """Base class of expressions that always evaluate to BOOLEAN."""

    @property
    def result_type(self) -> t.SqlType:
        return t.BOOLEAN


@dataclass(frozen=True, kw_only=True)
class ColumnRef(Expression):
    """A column of the step's input, by its exact name."""

    type_tag: ClassVar[str] = "column"
    name: str
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class Literal(Expression):
    """A constant. ``value`` is JSON: DECIMAL as a string, BYTES as base64, null as None."""

    type_tag: ClassVar[str] = "literal"
    value: object
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class Arithmetic(Expression):
    """``left op right`` for ``+ - * / %``, already typed with ksqlDB's promotion rules."""

    type_tag: ClassVar[str] = "arithmetic"
    op: str
    left: Expression
    right: Expression
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class Negate(Expression):
    type_tag: ClassVar[str] = "negate"
    operand: Expression
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class Comparison(BooleanExpression):
    """``left op right`` for ``= <> < <= > >=``."""

    type_tag: ClassVar[str] = "comparison"
    op: str
    left: Expression
    right: Expression


@dataclass(frozen=True, kw_only=True)
class MixedEquality(BooleanExpression):
    """``left = right`` or ``left <> right`` of two ARRAYs, MAPs or STRUCTs of different types,
    as ksqlDB's generated ``equals`` compares them, without widening: an ``Integer`` element
    never equals a ``Long`` one (nulls in the same places do), and two STRUCTs of different
    types never are equal (Connect's ``Struct.equals`` compares their schemas)."""

    type_tag: ClassVar[str] = "mixedEquality"
    op: str
    left: Expression
    right: Expression


@dataclass(frozen=True, kw_only=True)
class DistinctFrom(BooleanExpression):
    """``left IS [NOT] DISTINCT FROM right``: null-safe comparison."""

    type_tag: ClassVar[str] = "distinctFrom"
    left: Expression
    right: Expression
    negated: bool


@dataclass(frozen=True, kw_only=True)
class And(BooleanExpression):
    type_tag: ClassVar[str] = "and"
    left: Expression
    right: Expression


@dataclass(frozen=True, kw_only=True)
class Or(BooleanExpression):
    type_tag: ClassVar[str] = "or"
    left: Expression
    right: Expression


@dataclass(frozen=True, kw_only=True)
class Not(BooleanExpression):
    type_tag: ClassVar[str] = "not"
    operand: Expression


@dataclass(frozen=True, kw_only=True)
class IsNull(BooleanExpression):
    type_tag: ClassVar[str] = "isNull"
    operand: Expression
    negated: bool


@dataclass(frozen=True, kw_only=True)
class Like(BooleanExpression):
    """SQL ``LIKE`` with ``%`` and ``_``, and an optional one-character escape."""

    type_tag: ClassVar[str] = "like"
    value: Expression
    pattern: Expression
    escape: str | None
    negated: bool


@dataclass(frozen=True, kw_only=True)
class Between(BooleanExpression):
    type_tag: ClassVar[str] = "between"
    value: Expression
    low: Expression
    high: Expression
    negated: bool


@dataclass(frozen=True, kw_only=True)
class InList(BooleanExpression):
    """``value [NOT] IN (items)``. Over an ARRAY, MAP or STRUCT value (only in plans persisted
    before :class:`StructuredInList`), a null anywhere inside the value never matches."""

    type_tag: ClassVar[str] = "in"
    value: Expression
    items: tuple[Expression, ...]
    negated: bool


@dataclass(frozen=True, kw_only=True)
class StructuredInList(BooleanExpression):
    """``value [NOT] IN (items)`` over an ARRAY, MAP or STRUCT value, as ksqlDB's
    ``InListEvaluator`` matches one: element by element, where two nulls in the same place match
    (a null value or item still never matches)."""

    type_tag: ClassVar[str] = "structuredIn"
    value: Expression
    items: tuple[Expression, ...]
    negated: bool


@dataclass(frozen=True, kw_only=True)
class When:
    """One ``WHEN condition THEN result`` branch."""

    condition: Expression
    result: Expression


@dataclass(frozen=True, kw_only=True)
class Case(Expression):
    """A searched CASE (ksqlDB cannot type a simple one)."""

    type_tag: ClassVar[str] = "case"
    whens: tuple[When, ...]
    default: Expression | None
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class Cast(Expression):
    type_tag: ClassVar[str] = "cast"
    operand: Expression
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class Call(Expression):
    """A scalar function call, resolved by the planner to ``name`` and ``sql_type``."""

    type_tag: ClassVar[str] = "call"
    name: str
    args: tuple[Expression, ...]
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class Subscript(Expression):
    """``base[index]``: 1-based array access (negative counts from the end) or map lookup."""

    type_tag: ClassVar[str] = "subscript"
    base: Expression
    index: Expression
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class FieldRef(Expression):
    """``base->name``: a struct field."""

    type_tag: ClassVar[str] = "field"
    base: Expression
    name: str
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class CreateArray(Expression):
    type_tag: ClassVar[str] = "array"
    items: tuple[Expression, ...]
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class MapEntry:
    key: Expression
    value: Expression


@dataclass(frozen=True, kw_only=True)
class CreateMap(Expression):
    type_tag: ClassVar[str] = "map"
    entries: tuple[MapEntry, ...]
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class StructFieldValue:
    name: str
    value: Expression


@dataclass(frozen=True, kw_only=True)
class CreateStruct(Expression):
    type_tag: ClassVar[str] = "struct"
    fields: tuple[StructFieldValue, ...]
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class LambdaVariable(Expression):
    """A lambda parameter used inside a lambda body."""

    type_tag: ClassVar[str] = "lambdaVariable"
    name: str
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class Lambda(Expression):
    """``(params) => body``; only valid as an argument of a higher-order function."""

    type_tag: ClassVar[str] = "lambda"
    params: tuple[str, ...]
    body: Expression
    sql_type: t.SqlType


@dataclass(frozen=True, kw_only=True)
class IntervalUnit(Expression):
    """A time unit passed as a function argument (``SECONDS``)."""

    type_tag: ClassVar[str] = "intervalUnit"
    unit: str
    sql_type: t.SqlType = t.STRING


def walk(expr: Expression) -> list[Expression]:
    """``expr`` and all its sub-expressions, parents first."""
    out = [expr]
    for child in expr.children():
        out.extend(walk(child))
    return out


def substitute(expr: Expression, replacements: Mapping[Expression, Expression]) -> Expression:
    """``expr`` with every sub-expression found in ``replacements`` replaced (outermost first)."""
    found = replacements.get(expr)
    if found is not None:
        return found
    return _rebuild(expr, replacements)


def substitute_in(value: T, replacements: Mapping[Expression, Expression]) -> T:
    """``value`` (any frozen dataclass holding expressions, such as a step) with every
    sub-expression found in ``replacements`` replaced."""
    return _rebuild(value, replacements)


def _rebuild(value: Any, replacements: Mapping[Expression, Expression]) -> Any:
    if isinstance(value, Expression) and value in replacements:
        return replacements[value]
    if isinstance(value, tuple):
        return tuple(_rebuild(v, replacements) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            old = getattr(value, f.name)
            new = _rebuild(old, replacements)
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value


def column_names(expr: Expression) -> set[str]:
    """The input columns an expression reads (an iterative walk: any depth)."""
    found: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ColumnRef):
            found.add(node.name)
        else:
            stack.extend(node.children())
    return found
