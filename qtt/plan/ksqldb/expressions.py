"""ksqlDB's expressions as SQL text (``"ID AS KSQL_INTERNAL_COL_0"``, ``"SUM(KSQL_INTERNAL_COL_1)"``),
typed over the columns of the step they read, with qtt's own SQL front end."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from qtt.plan.analysis.analyzer import Analyzer, Scope, ScopeColumn
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ksqldb.context import Translated
from qtt.plan.planner.aggregate_planner import aggregate_call as planned_call
from qtt.sql import ast
from qtt.sql.parser import parse_expression

#: ``<expression> AS <alias>`` as ksqlDB prints a select expression; the alias is a plain or
#: back-quoted name at the end
_ALIASED = re.compile(r"^(?P<expr>.*\S)\s+AS\s+(?P<alias>`(?:[^`]|``)+`|[A-Za-z0-9_@$]+)\s*$", re.DOTALL)


def split_alias(text: str) -> tuple[str, str]:
    """``"ID AS KSQL_INTERNAL_COL_0"`` -> (``"ID"``, ``"KSQL_INTERNAL_COL_0"``)."""
    found = _ALIASED.match(text)
    if found is None:
        raise ValueError(f"not an aliased expression: {text!r}")
    alias = found["alias"]
    if alias.startswith("`"):
        alias = alias[1:-1].replace("``", "`")
    return found["expr"], alias


@functools.lru_cache(maxsize=8192)
def parsed(text: str) -> ast.Expr:
    """``text`` parsed once: ksqlDB's plans repeat the same expressions across releases, and
    syntax trees are immutable."""
    return parse_expression(text)


def scope_of(columns: Sequence[ScopeColumn]) -> Scope:
    return Scope(list(columns))


def typed(text: str, over: Translated | Sequence[ScopeColumn], clause: str = "SELECT") -> e.Expression:
    """``text`` typed over the output of ``over`` (or over the given columns)."""
    columns = over.columns() if isinstance(over, Translated) else list(over)
    return Analyzer(scope_of(columns), clause).typed(parsed(text))


def condition(text: str, over: Translated) -> e.Expression:
    return Analyzer(scope_of(over.columns()), "WHERE").boolean(parsed(text))


def select_expressions(texts: Sequence[str], over: Translated) -> tuple[s.SelectExpression, ...]:
    out = []
    for text in texts:
        expression, alias = split_alias(text)
        out.append(s.SelectExpression(alias=alias, expression=typed(expression, over)))
    return tuple(out)


def aggregate_call(text: str, index: int, over: Translated, config: Mapping[str, Any] | None = None) -> s.AggregateCall:
    """``"SUM(KSQL_INTERNAL_COL_1)"``, the ``index``-th aggregate, as qtt's call ``KSQL_AGG_VARIABLE_<index>``."""
    node = parsed(text)
    if not isinstance(node, ast.FunctionCall):
        raise ValueError(f"not an aggregate call: {text!r}")
    return planned_call(node, Analyzer(scope_of(over.columns()), "SELECT"), f"KSQL_AGG_VARIABLE_{index}", config)
