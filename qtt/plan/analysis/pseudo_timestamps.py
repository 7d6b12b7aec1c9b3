"""ksqlDB's "magic" timestamps: in a WHERE or HAVING clause, a string literal compared with
``ROWTIME``, ``WINDOWSTART`` or ``WINDOWEND`` (``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``,
``IS [NOT] DISTINCT FROM``, or the bounds of ``BETWEEN``) is read as a timestamp and becomes its
epoch milliseconds, a BIGINT literal, before the clause is type checked. The text may be partial: ``'2020-05-26'`` is
midnight, ``'2020-05-26T23:59'`` a minute, each with an optional time zone offset after the
time (``'2020-05-26T23:59:58.000+0200'``); without one it is UTC. (ksqlDB's
``StatementRewriteForMagicPseudoTimestamp`` and ``PartialStringToTimestampParser``.)
"""

from __future__ import annotations

import datetime
import re
from dataclasses import replace

from qtt.errors import StatementError
from qtt.sql import ast

#: the columns whose comparisons read string literals as timestamps
COLUMNS = frozenset({"ROWTIME", "WINDOWSTART", "WINDOWEND"})
#: the clauses where ksqlDB reads them so
CLAUSES = frozenset({"WHERE", "HAVING"})

_PATTERN = "yyyy-MM-dd'T'HH:mm:ss.SSS"
_TIME_PATTERN = "HH:mm:ss.SSS"
_FULL = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})")
_OFFSET = re.compile(r"([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?")
_HELP = (
    f'\nRequired format is: "{_PATTERN}", with an optional numeric 4-digit timezone, for example: '
    "'2020-05-26T23.59.58.000' or with tz: '2020-05-26T23.59.58.000+0200'. "
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


def _is_column(node: ast.Expr) -> bool:
    return isinstance(node, ast.ColumnRef) and node.name in COLUMNS


def _millis(literal: ast.StringLiteral) -> ast.Expr:
    return ast.IntegerLiteral(value=timestamp_millis(literal.value), pos=literal.pos)


def timestamp_millis(text: str) -> int:
    """The epoch milliseconds of a full or partial timestamp text, as ksqlDB reads it.

    Raises:
        StatementError: the text is not such a timestamp (ksqlDB's message).
    """
    if "T" in text:
        date, rest = text[: text.index("T")], _complete_time(text[text.index("T") + 1 :])
        zone = rest[rest.index("+") :] if "+" in rest else rest[rest.index("-") :] if "-" in rest else ""
        time = _complete_time(rest[: len(rest) - len(zone)])
    else:
        date, time, zone = _complete_date(text), _complete_time(""), ""
    candidate = f"{date}T{time}"
    offset = _offset(zone, text)
    found = _FULL.fullmatch(candidate)
    try:
        if found is None:
            raise ValueError
        year, month, day, hour, minute, second, millis = (int(part) for part in found.groups())
        moment = datetime.datetime(year, month, day, hour, minute, second, millis * 1000, tzinfo=offset)
    except ValueError:
        msg = f"Failed to parse timestamp '{text}': Text '{candidate}' could not be parsed{_HELP}"
        raise StatementError(msg) from None
    return _epoch_millis(moment)


def _epoch_millis(moment: datetime.datetime) -> int:
    delta = moment - datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def _offset(zone: str, text: str) -> datetime.timezone:
    if not zone.strip():
        return datetime.UTC
    found = _OFFSET.fullmatch(zone[:1] + "0" + zone[1:] if len(zone) == 2 else zone)  # Java's "+h"
    if found is None or int(found.group(2)) > 18:
        msg = f"Failed to parse timezone '{zone}': Invalid ID for ZoneOffset, invalid format: {zone}"
        raise StatementError(msg)
    sign = -1 if found.group(1) == "-" else 1
    hours, minutes, seconds = (int(part or 0) for part in found.groups()[1:])
    return datetime.timezone(sign * datetime.timedelta(hours=hours, minutes=minutes, seconds=seconds))


def _complete_date(date: str) -> str:
    parts = date.split("-")
    return date + "-01-01" if len(parts) == 1 else date + "-01" if len(parts) == 2 else date


def _complete_time(time: str) -> str:
    if len(time) >= len(_TIME_PATTERN):
        return time
    return time + re.sub("[a-zA-Z]", "0", _TIME_PATTERN[len(time) :])
