"""Small pieces the AST builder (:mod:`qtt.sql.ast_builder`) assembles nodes from."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from lark import Token

from qtt.errors import SqlSyntaxError
from qtt.sql import ast
from qtt.sql.formatter import format_expr
from qtt.sql.type_rules import PREPARE_PREFIX, PrepareError

TIME_UNITS_MS = {
    "MILLISECOND": 1,
    "SECOND": 1000,
    "MINUTE": 60_000,
    "HOUR": 3_600_000,
    "DAY": 86_400_000,
}

#: The functions whose first argument is a time unit keyword: ``DATEADD(DAYS, 1, d)``.
TIME_UNIT_FUNCTIONS = frozenset(["DATEADD", "DATESUB", "TIMEADD", "TIMESUB", "TIMESTAMPADD", "TIMESTAMPSUB"])


def function_argument(arg: Any) -> ast.Expr:
    # A bare time unit (SECONDS, DAYS ...) there; anywhere else DAY or HOURS names a column.
    if isinstance(arg, ast.ColumnRef) and arg.source is None and arg.name.rstrip("S") in TIME_UNITS_MS:
        return ast.IntervalUnit(unit=arg.name.rstrip("S"), pos=arg.pos)
    return arg


def case_parts(rest: tuple[Any, ...]) -> tuple[tuple[ast.WhenClause, ...], ast.Expr | None]:
    whens = tuple(r for r in rest if isinstance(r, ast.WhenClause))
    tail = [r for r in rest if not isinstance(r, ast.WhenClause | Token) and r is not None]
    return whens, (tail[0] if tail else None)


class Duration(int):
    """Milliseconds, with the text ksqlDB's formatter prints for them (``30 SECONDS``: the
    amount as written, the unit in the plural)."""

    text: str

    def __new__(cls, amount: int, unit: str) -> Duration:
        duration = super().__new__(cls, amount * TIME_UNITS_MS[unit])
        duration.text = f"{amount} {unit}S"
        return duration

    def __reduce__(self) -> tuple[type[int], tuple[int]]:
        return int, (int(self),)  # a copy, a pickle (a Spark worker's) is the plain number


def duration_amount(minus: Token | None, amount: Token, as_int: Callable[[Token], int]) -> int:
    """A window's or WITHIN's amount, as ``AstBuilder.getTimeClause`` reads the number its grammar
    takes: ``Long.parseLong`` of the text, sign included, so a decimal or a number out of the
    range of a BIGINT is Java's ``NumberFormatException`` (``as_int`` reads an integer token,
    an absurdly long one being its syntax error)."""
    text = ("-" if minus is not None else "") + str(amount)
    if amount.type != "INTEGER_VALUE" or not -(2**63) <= as_int(amount) * (-1 if minus else 1) < 2**63:
        problem = f'For input string: "{text}"'
        at = minus or amount
        raise PrepareError(PREPARE_PREFIX + problem, detail=problem, line=at.line or 0, column=at.column or 0)
    return int(text)


def duration_text(ms: int | None) -> str:
    """ksqlDB's text of a duration (its amount in milliseconds when it was not parsed)."""
    return ms.text if isinstance(ms, Duration) else f"{ms} MILLISECONDS"


def window_text(spec: ast.WindowSpec) -> str:
    """A ``WINDOW`` clause as ksqlDB's formatter prints it (``TUMBLING ( SIZE 1 MINUTES ) ``)."""
    parts = [duration_text(spec.size_ms) if spec.kind == "SESSION" else f"SIZE {duration_text(spec.size_ms)}"]
    if spec.advance_ms is not None:
        parts.append(f"ADVANCE BY {duration_text(spec.advance_ms)}")
    if spec.retention_ms is not None:
        parts.append(f"RETENTION {duration_text(spec.retention_ms)}")
    if spec.grace_ms is not None:
        parts.append(f"GRACE PERIOD {duration_text(spec.grace_ms)}")
    return f"{spec.kind} ( {' , '.join(parts)} ) "


def within_text(within: ast.WithinWindow) -> str:
    """A join's ``WITHIN`` as ksqlDB's formatter prints it."""
    if duration_text(within.before_ms) == duration_text(within.after_ms):
        text = f"WITHIN {duration_text(within.before_ms)}"
    else:
        text = f"WITHIN ({duration_text(within.before_ms)}, {duration_text(within.after_ms)})"
    return text if within.grace_ms is None else f"{text} GRACE PERIOD {duration_text(within.grace_ms)}"


def grace_ms(grace: tuple[str, int] | None) -> int | None:
    """A ``WITHIN``'s grace period in milliseconds (the ``grace`` rule gives a window option pair)."""
    return None if grace is None else grace[1]


def window_options(rest: tuple[Any, ...]) -> dict[str, int]:
    return dict(r for r in rest if isinstance(r, tuple))


def property_value(value: ast.Expr) -> object:
    match value:
        case ast.StringLiteral(value=v):
            return v
        case ast.IntegerLiteral(value=v):
            return v
        case ast.BooleanLiteral(value=v):
            return v
        case ast.DecimalLiteral(text=text) | ast.DoubleLiteral(text=text):
            return float(text)
        case ast.NullLiteral():
            return None
    return None  # pragma: no cover - the grammar only allows literals here


#: a DECIMAL literal's text as ``"DECIMAL" '...'`` takes it
_PLAIN_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def type_constructor(name: str, spelled: str, text: str, pos: ast.Pos) -> ast.Expr:
    """A type's name before a string (``AstBuilder.visitTypeConstructor``): ksqlDB knows only
    DECIMAL there, a reserved word that can only be a name when quoted (``"DECIMAL" '1.5'``)."""
    line, column = pos.line, pos.column
    if name == "DECIMAL" and spelled.upper() == name:  # the reserved word itself
        msg = f"Syntax Error\nSyntax error at or near '{name}' at line {line}:{column}"
        raise SqlSyntaxError(msg, line=line, column=column)
    if name == "DECIMAL" and _PLAIN_DECIMAL.fullmatch(text):
        return ast.DecimalLiteral(text=text, pos=pos)
    where = f"Optional[Line: {line}, Col: {column}]"
    problem = f"Unknown type: {name}, location:{where}"
    if name == "DECIMAL":  # BigDecimal's own message varies: qtt names the text
        problem = f"Invalid DECIMAL literal: {text}, location:{where}"
    raise PrepareError(PREPARE_PREFIX + problem, detail=problem, line=line, column=column)


def check_escape(escape: str, pos: ast.Pos) -> None:
    """``LIKE ... ESCAPE`` takes one character (``AstBuilder.visitLike``), located at the escape."""
    if len(escape) != 1:
        problem = f"Optional[Line: {pos.line}, Col: {pos.column}]: Expected single character escape but got: {escape}"
        raise PrepareError(PREPARE_PREFIX + problem, detail=problem, line=pos.line, column=pos.column)


def check_grouping(clause: str, exprs: tuple[ast.Expr, ...], meta: Any) -> tuple[ast.Expr, ...]:
    """A ``GROUP BY`` or ``PARTITION BY`` list, refused as ksqlDB's ``GroupBy`` and ``PartitionBy``
    refuse it while its parser builds the statement: an empty list, or an expression written
    twice (compared as parsed, before columns are qualified: ``a, a`` is ``A`` twice)."""
    line, column = getattr(meta, "line", None), getattr(meta, "column", None)
    if not exprs:
        problem = f"{clause} requires at least one expression"
        raise PrepareError(PREPARE_PREFIX + problem, detail=problem, line=line, column=column)
    seen: set[str] = set()
    for expr in exprs:
        text = format_expr(expr)
        if text in seen:
            problem = f"Duplicate {clause} expression: {text}"
            raise PrepareError(PREPARE_PREFIX + problem, detail=problem, line=line, column=column)
        seen.add(text)
    return exprs


def check_map_keys(entries: tuple[tuple[ast.Expr, ast.Expr], ...], meta: Any) -> tuple[tuple[ast.Expr, ast.Expr], ...]:
    """A ``MAP(k := v, ...)`` constructor's entries, refused as ksqlDB's ``AstBuilder`` refuses
    them: it collects them in a Guava ``ImmutableMap``, whose ``build()`` refuses a key given
    twice (compared as parsed expressions), naming the first entry, then the repeated one."""
    line, column = getattr(meta, "line", None), getattr(meta, "column", None)
    seen: dict[str, str] = {}
    for key, value in entries:
        text = format_expr(key)
        if text in seen:
            problem = f"Multiple entries with same key: {text}={seen[text]} and {text}={format_expr(value)}"
            raise PrepareError(PREPARE_PREFIX + problem, detail=problem, line=line, column=column)
        seen[text] = format_expr(value)
    return entries


#: the names ``ParserUtil.getSourceName`` accepts for a source or an alias (Kafka Streams' store names)
_SOURCE_NAME = re.compile(r"[a-zA-Z0-9_-]*")


def check_relation_names(names: list[str], text: str, start: int, end: int) -> None:
    """A query's source name and its alias, refused as ksqlDB refuses them before it builds the
    statement (``AstBuilder.getSources``): a name with characters other than letters, digits,
    ``_`` and ``-``, located where the name is written in ``text[start:end]`` (the relation)."""
    for index, name in enumerate(names):
        if _SOURCE_NAME.fullmatch(name):
            continue
        offset = start if index == 0 else _last_name_start(text, start, end)
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        msg = (
            f"Illegal argument at Line: {line}, Col: {column}. "
            "Source names may only contain alphanumeric values, '_' or '-'."
        )
        raise SqlSyntaxError(msg, line=line, column=column - 1, hint=f"the name is {name!r}")


def _last_name_start(text: str, start: int, end: int) -> int:
    """Where the name that ends ``text[start:end]`` begins: a quoted name's opening quote (its
    doubled quotes are part of it), or the first character of an unquoted one."""
    quote = text[end - 1]
    at = end - 2
    if quote in '`"':
        while at > start:
            if text[at] == quote and text[at - 1] == quote:
                at -= 2
            elif text[at] == quote:
                return at
            else:
                at -= 1
        return at
    while at >= start and (text[at].isalnum() or text[at] in "_@"):
        at -= 1
    return at + 1
