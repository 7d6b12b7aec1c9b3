"""The dialect's abstract syntax tree: frozen dataclasses, no behaviour.

Identifiers are already case-normalized here: unquoted names are upper-cased and quoted
names keep their case, as ksqlDB does. Every node may carry the position it was parsed at
(``pos``); positions never take part in equality.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from qtt.sqltypes import SqlType


@dataclass(frozen=True)
class Pos:
    """A 1-based line and column in the statement text."""

    line: int
    column: int

    def __str__(self) -> str:
        return f"line {self.line}:{self.column}"


@dataclass(frozen=True, kw_only=True)
class Node:
    """Base class of every syntax node."""

    pos: Pos | None = field(default=None, compare=False, repr=False)


# ---------------------------------------------------------------------------- expressions


@dataclass(frozen=True, kw_only=True)
class Expr(Node):
    """Base class of expressions."""


@dataclass(frozen=True, kw_only=True)
class NullLiteral(Expr):
    pass


@dataclass(frozen=True, kw_only=True)
class BooleanLiteral(Expr):
    value: bool


@dataclass(frozen=True, kw_only=True)
class IntegerLiteral(Expr):
    """An integer literal; its range (INTEGER or BIGINT) is checked by the planner."""

    value: int


@dataclass(frozen=True, kw_only=True)
class DecimalLiteral(Expr):
    """A literal with a decimal point and no exponent, such as ``1.50``."""

    text: str


@dataclass(frozen=True, kw_only=True)
class DoubleLiteral(Expr):
    """A literal with an exponent, such as ``1.5E3``."""

    text: str


@dataclass(frozen=True, kw_only=True)
class StringLiteral(Expr):
    value: str


@dataclass(frozen=True, kw_only=True)
class ColumnRef(Expr):
    """``name`` or ``source.name``."""

    name: str
    source: str | None = None


@dataclass(frozen=True, kw_only=True)
class Dereference(Expr):
    """``base->field``: a struct field."""

    base: Expr
    field: str


@dataclass(frozen=True, kw_only=True)
class Subscript(Expr):
    """``base[index]``: an array element (1-based) or a map value."""

    base: Expr
    index: Expr


@dataclass(frozen=True, kw_only=True)
class Negate(Expr):
    operand: Expr


@dataclass(frozen=True, kw_only=True)
class UnaryPlus(Expr):
    """``+operand``: ksqlDB keeps it (an ``ArithmeticUnaryExpression`` with sign PLUS), so it
    is no column reference: it gets a generated name and is not a grouping expression."""

    operand: Expr


@dataclass(frozen=True, kw_only=True)
class Arithmetic(Expr):
    """``left op right`` with op one of ``+ - * / %``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, kw_only=True)
class Concat(Expr):
    """``left || right``."""

    left: Expr
    right: Expr


@dataclass(frozen=True, kw_only=True)
class Comparison(Expr):
    """``left op right`` with op one of ``= <> < <= > >=``; ``!=`` is read as ``<>``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, kw_only=True)
class DistinctFrom(Expr):
    """``left IS [NOT] DISTINCT FROM right``."""

    left: Expr
    right: Expr
    negated: bool = False


@dataclass(frozen=True, kw_only=True)
class And(Expr):
    left: Expr
    right: Expr


@dataclass(frozen=True, kw_only=True)
class Or(Expr):
    left: Expr
    right: Expr


@dataclass(frozen=True, kw_only=True)
class Not(Expr):
    operand: Expr


@dataclass(frozen=True, kw_only=True)
class IsNull(Expr):
    operand: Expr
    negated: bool = False


@dataclass(frozen=True, kw_only=True)
class Between(Expr):
    value: Expr
    low: Expr
    high: Expr
    negated: bool = False


@dataclass(frozen=True, kw_only=True)
class InList(Expr):
    value: Expr
    items: tuple[Expr, ...]
    negated: bool = False


@dataclass(frozen=True, kw_only=True)
class Like(Expr):
    value: Expr
    pattern: Expr
    escape: str | None = None
    negated: bool = False


@dataclass(frozen=True, kw_only=True)
class WhenClause(Node):
    condition: Expr
    result: Expr


@dataclass(frozen=True, kw_only=True)
class SearchedCase(Expr):
    """``CASE WHEN c THEN r ... [ELSE e] END``."""

    whens: tuple[WhenClause, ...]
    default: Expr | None = None


@dataclass(frozen=True, kw_only=True)
class SimpleCase(Expr):
    """``CASE operand WHEN v THEN r ... [ELSE e] END``."""

    operand: Expr
    whens: tuple[WhenClause, ...]
    default: Expr | None = None


@dataclass(frozen=True, kw_only=True)
class Cast(Expr):
    operand: Expr
    type: SqlType


@dataclass(frozen=True, kw_only=True)
class CreateArray(Expr):
    """``ARRAY[a, b, ...]``."""

    items: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class CreateMap(Expr):
    """``MAP(k1 := v1, ...)``."""

    entries: tuple[tuple[Expr, Expr], ...]


@dataclass(frozen=True, kw_only=True)
class CreateStruct(Expr):
    """``STRUCT(name := value, ...)``."""

    fields: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True, kw_only=True)
class Lambda(Expr):
    """``x => body`` or ``(x, y) => body``; only valid as a function argument."""

    params: tuple[str, ...]
    body: Expr


@dataclass(frozen=True, kw_only=True)
class IntervalUnit(Expr):
    """A time unit given as a function argument, as in ``TIMESTAMPADD(SECONDS, 5, ts)``."""

    unit: str


@dataclass(frozen=True, kw_only=True)
class FunctionCall(Expr):
    """``name(args)``; ``star`` is set for ``name(*)``.

    ``name`` is upper case, for resolution; ``spelling`` is the name's source text, quotes
    included, for messages only (it never takes part in equality).
    """

    name: str
    args: tuple[Expr, ...] = ()
    star: bool = False
    spelling: str = field(default="", compare=False, repr=False)

    @property
    def written(self) -> str:
        """The name as the statement wrote it, without quotes (``name`` for a made-up call)."""
        text = self.spelling
        if len(text) >= 2 and text[0] == text[-1] and text[0] in '`"':
            return text[1:-1].replace(text[0] * 2, text[0])
        return text or self.name

    @property
    def identifier(self) -> str:
        """ksqlDB's text of the name: upper case unless quoted."""
        quoted = self.spelling[:1] in ("`", '"')
        return self.written if quoted else self.name


# ---------------------------------------------------------------------------- queries


@dataclass(frozen=True, kw_only=True)
class SelectItem(Node):
    """Base class of select-list entries."""


@dataclass(frozen=True, kw_only=True)
class SingleColumn(SelectItem):
    expr: Expr
    alias: str | None = None


@dataclass(frozen=True, kw_only=True)
class AllColumns(SelectItem):
    """``*`` or ``source.*``."""

    source: str | None = None


@dataclass(frozen=True, kw_only=True)
class StructAll(SelectItem):
    """``base->*``."""

    base: Expr


@dataclass(frozen=True, kw_only=True)
class Relation(Node):
    """Base class of FROM clauses."""


@dataclass(frozen=True, kw_only=True)
class Table(Relation):
    """A source by name with an optional alias."""

    name: str
    alias: str | None = None


@dataclass(frozen=True, kw_only=True)
class WithinWindow(Node):
    """``WITHIN size`` or ``WITHIN (before, after)`` for stream-stream joins; millis."""

    before_ms: int
    after_ms: int
    grace_ms: int | None = None


@dataclass(frozen=True, kw_only=True)
class Join(Relation):
    kind: str  # INNER, LEFT, RIGHT, FULL
    left: Relation
    right: Table
    on: Expr
    within: WithinWindow | None = None


@dataclass(frozen=True, kw_only=True)
class WindowSpec(Node):
    """``WINDOW TUMBLING|HOPPING|SESSION (...)``; every duration in millis."""

    kind: str  # TUMBLING, HOPPING, SESSION
    size_ms: int
    advance_ms: int | None = None
    retention_ms: int | None = None
    grace_ms: int | None = None


@dataclass(frozen=True, kw_only=True)
class Query(Node):
    select: tuple[SelectItem, ...]
    from_: Relation
    window: WindowSpec | None = None
    where: Expr | None = None
    group_by: tuple[Expr, ...] | None = None
    partition_by: tuple[Expr, ...] | None = None
    having: Expr | None = None
    emit: str | None = None  # CHANGES or FINAL
    limit: int | None = None


# ---------------------------------------------------------------------------- statements


@dataclass(frozen=True, kw_only=True)
class Statement(Node):
    """Base class of statements. ``text`` is the statement's own SQL."""

    text: str = field(default="", compare=False)


@dataclass(frozen=True, kw_only=True)
class TableElement(Node):
    """One column of a ``CREATE STREAM/TABLE`` column list."""

    name: str
    type: SqlType
    constraint: str | None = None  # KEY, PRIMARY KEY, HEADERS, HEADER
    header_key: str | None = None


@dataclass(frozen=True, kw_only=True)
class CreateSource(Statement):
    """``CREATE [OR REPLACE] [SOURCE] STREAM|TABLE name (...) WITH (...)``."""

    kind: str  # STREAM or TABLE
    name: str
    elements: tuple[TableElement, ...] = ()
    properties: Mapping[str, object] = field(default_factory=dict)
    or_replace: bool = False
    if_not_exists: bool = False
    is_source: bool = False


@dataclass(frozen=True, kw_only=True)
class CreateAsSelect(Statement):
    """``CREATE [OR REPLACE] STREAM|TABLE name WITH (...) AS SELECT ...``."""

    kind: str
    name: str
    query: Query
    properties: Mapping[str, object] = field(default_factory=dict)
    or_replace: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True, kw_only=True)
class InsertInto(Statement):
    """``INSERT INTO target SELECT ...``."""

    target: str
    query: Query
    properties: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class InsertValues(Statement):
    """``INSERT INTO target [(columns)] VALUES (...)``."""

    target: str
    columns: tuple[str, ...]
    values: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class DropSource(Statement):
    kind: str
    name: str
    if_exists: bool = False
    delete_topic: bool = False


@dataclass(frozen=True, kw_only=True)
class RegisterType(Statement):
    """``CREATE TYPE [IF NOT EXISTS] name AS type``: ``type`` is resolved when parsed."""

    name: str
    type: SqlType
    if_not_exists: bool = False


@dataclass(frozen=True, kw_only=True)
class DropType(Statement):
    """``DROP TYPE [IF EXISTS] name``."""

    name: str
    if_exists: bool = False


@dataclass(frozen=True, kw_only=True)
class AlterSource(Statement):
    kind: str
    name: str
    columns: tuple[TableElement, ...]


@dataclass(frozen=True, kw_only=True)
class SetProperty(Statement):
    name: str
    value: str


@dataclass(frozen=True, kw_only=True)
class UnsetProperty(Statement):
    name: str


@dataclass(frozen=True, kw_only=True)
class AssertValues(Statement):
    """``ASSERT VALUES source [(columns)] VALUES (...)``: the source's next record holds these values."""

    source: str
    columns: tuple[str, ...]
    values: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class AssertTombstone(Statement):
    """``ASSERT NULL VALUES source [(key columns)] KEY (...)``: its next record deletes this key."""

    source: str
    columns: tuple[str, ...]
    key: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class AssertSource(Statement):
    """``ASSERT STREAM|TABLE name (...) WITH (...)``: the source exists with this schema and formats."""

    kind: str
    name: str
    elements: tuple[TableElement, ...] = ()
    properties: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class RunScript(Statement):
    """``RUN SCRIPT 'path'``: the statements of another file, run in place."""

    path: str
