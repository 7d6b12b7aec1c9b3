"""ksqlDB's "magic" timestamps: in a WHERE or HAVING clause, a string literal compared with
``ROWTIME``, ``WINDOWSTART`` or ``WINDOWEND`` (``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``,
``IS [NOT] DISTINCT FROM``, or the bounds of ``BETWEEN``) is read as a timestamp and becomes its
epoch milliseconds, a BIGINT literal, before the clause is type checked. The text may be partial: ``'2020-05-26'`` is
midnight, ``'2020-05-26T23:59'`` a minute, each with an optional time zone offset after the
time (``'2020-05-26T23:59:58.000+0200'``, all that follows the first sign) or a trailing ``Z``;
without one it is UTC. Values and messages are java.time's (:mod:`qtt.plan.analysis.java_time`). (ksqlDB's
``StatementRewriteForMagicPseudoTimestamp`` and ``PartialStringToTimestampParser``.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace

from qtt.errors import StatementError
from qtt.plan.analysis import java_time
from qtt.sql import ast
from qtt.sqltypes import BIGINT_MAX, BIGINT_MIN

#: the columns whose comparisons read string literals as timestamps
COLUMNS = frozenset({"ROWTIME", "WINDOWSTART", "WINDOWEND"})
#: the clauses where ksqlDB reads them so
CLAUSES = frozenset({"WHERE", "HAVING"})
#: the parameters of the lambdas being typed: a parameter named ``ROWTIME`` is a lambda
#: variable, which ksqlDB's rewriter leaves alone (it rewrites column references only)
_LAMBDA_PARAMETERS: ContextVar[frozenset[str]] = ContextVar("lambda_parameters", default=frozenset())

_PATTERN = "yyyy-MM-dd'T'HH:mm:ss.SSS"
_TIME_PATTERN = "HH:mm:ss.SSS"
_HELP = (
    f'\nRequired format is: "{_PATTERN}", with an optional numeric 4-digit timezone, for example: '
    "'2020-05-26T23:59:58.000' or with tz: '2020-05-26T23:59:58.000+0200'. "
    "A trailing 'Z' instead of tz indicates the zero UTC offset. "
    'Partials are also supported, for example "2020-05-26"'
)


def rewritten(node: ast.Expr) -> ast.Expr:
    """``node`` with a string literal compared with a pseudo timestamp column as its millis."""
    # IS [NOT] DISTINCT FROM is one of ksqlDB's comparisons too
    if isinstance(node, ast.Comparison | ast.DistinctFrom):
        if _is_column(node.left) and isinstance(node.right, ast.StringLiteral):
            return replace(node, right=_millis(node.right))
        if _is_column(node.right) and isinstance(node.left, ast.StringLiteral):
            return replace(node, left=_millis(node.left))
    if isinstance(node, ast.Between) and _is_column(node.value):
        low, high = (_millis(x) if isinstance(x, ast.StringLiteral) else x for x in (node.low, node.high))
        return ast.Between(value=node.value, low=low, high=high, negated=node.negated, pos=node.pos)
    return node


@contextmanager
def lambda_parameters(params: tuple[str, ...]) -> Iterator[None]:
    """While a lambda's body is typed: its parameters are not the pseudo columns they may be named."""
    token = _LAMBDA_PARAMETERS.set(_LAMBDA_PARAMETERS.get() | frozenset(params))
    try:
        yield
    finally:
        _LAMBDA_PARAMETERS.reset(token)


def _is_column(node: ast.Expr) -> bool:
    if not isinstance(node, ast.ColumnRef) or node.name not in COLUMNS:
        return False
    return node.source is not None or node.name not in _LAMBDA_PARAMETERS.get()


def _millis(literal: ast.StringLiteral) -> ast.Expr:
    return ast.IntegerLiteral(value=timestamp_millis(literal.value), pos=literal.pos)


def timestamp_millis(text: str) -> int:
    """The epoch milliseconds of a full or partial timestamp text, as ksqlDB reads it.

    Raises:
        StatementError: the text is not such a timestamp (ksqlDB's message).
    """
    if "T" in text:
        date, rest = text[: text.index("T")], text[text.index("T") + 1 :]
        zone = rest[rest.index("+") :] if "+" in rest else rest[rest.index("-") :] if "-" in rest else ""
        time = _complete_time(re.sub("Z$", "", rest[: len(rest) - len(zone)]))
    else:
        date, time, zone = _complete_date(text), _complete_time(""), ""
    try:
        offset = _zone_seconds(zone)
        millis = java_time.local_millis(f"{date}T{time}") - offset * 1000
    except ValueError as error:
        raise StatementError(f"Failed to parse timestamp '{text}': {error}{_HELP}") from None
    if not BIGINT_MIN <= millis <= BIGINT_MAX:
        raise StatementError(f"Failed to parse timestamp '{text}': long overflow{_HELP}")
    return millis


def _zone_seconds(zone: str) -> int:
    """The offset ``ZoneId.of`` reads from the text after the time (all of it from its first
    ``+`` or ``-``), in seconds; none is UTC."""
    if not zone.strip():
        return 0
    try:
        return java_time.zone_offset_seconds(zone)
    except ValueError as error:
        raise ValueError(f"Failed to parse timezone '{zone}': {error}") from None


def _complete_date(date: str) -> str:
    parts = date.split("-")
    while "-" in date and parts and not parts[-1]:  # Java's split drops trailing empty parts
        parts.pop()
    return date + "-01-01" if len(parts) == 1 else date + "-01" if len(parts) == 2 else date


def _complete_time(time: str) -> str:
    if len(time) >= len(_TIME_PATTERN):
        return time
    return time + re.sub("[a-zA-Z]", "0", _TIME_PATTERN[len(time) :])
