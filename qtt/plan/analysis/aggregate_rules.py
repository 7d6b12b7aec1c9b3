"""ksqlDB's AggregateAnalyzer over a GROUP BY query as written, before any of it is typed.

ksqlDB's planner checks an aggregation's rules (no unknown function, no nested aggregate, no
aggregate in GROUP BY, at least one aggregate, no SELECT item or HAVING column that is neither
grouped nor aggregated) before it types the SELECT items, then the GROUP BY expressions, then
HAVING (``LogicalPlanner.buildAggregateNode``). qtt types them as it plans: once all of them
type, :func:`check_aggregate_rules` is the aggregation's one check of these rules; when one of
them does not, it finds the rule ksqlDB would have refused first.
Expressions are compared as ksqlDB compares them: as written, once each column reference is
rewritten to the column it reads (bare over one source, ``T_A`` over a join).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.analysis import messages
from qtt.plan.analysis.scope import Scope
from qtt.plan.functions.aggregate_signatures import is_aggregate
from qtt.plan.ir.schema import ROWTIME, WINDOW_BOUNDS
from qtt.sql import ast
from qtt.sql.references import rewrite_column_refs

#: ksqlDB's default argument of an aggregate call written without one (``COUNT(*)``)
_DEFAULT_ARGUMENT = ast.ColumnRef(name=ROWTIME)


def check_aggregate_rules(
    query: ast.Query,
    items: Sequence[ast.SingleColumn],
    scope: Scope,
    *,
    windowed: bool,
    known: Callable[[str], bool],
    shown: Callable[[ast.Expr], str],
) -> None:
    """Raise the first of ksqlDB's AggregateAnalyzer errors ``query`` breaks, if any.

    ``items`` are the query's SELECT items, ``*`` expanded; ``known`` says whether a function
    name is any function ksqlDB registers; ``shown`` prints a SELECT item as ksqlDB's message
    names it; ``windowed``: the query has a WINDOW clause (its bounds are grouped implicitly).

    Raises:
        StatementError: ksqlDB's message for the first rule broken, in its order: SELECT items,
            WHERE, GROUP BY and HAVING are visited in turn, then the missing aggregate, the
            ungrouped SELECT items and the ungrouped HAVING columns are reported.
    """

    normalized = _normalizer(scope)
    groups = {normalized(g) for g in query.group_by or ()}
    if windowed:
        groups |= {ast.ColumnRef(name=n) for n in WINDOW_BOUNDS}
    visitor = _AggregateVisitor(groups, known)

    unmatched: list[str] = []
    for item in items:
        loose = visitor.visit(normalized(item.expr), "SELECT")
        if normalized(item.expr) not in groups and loose:
            unmatched.append(shown(item.expr))
    if query.where is not None:
        visitor.visit(normalized(query.where), "WHERE")
    for group in query.group_by or ():
        visitor.visit(normalized(group), "GROUP BY")
    having_strays = visitor.visit(normalized(query.having), "HAVING") if query.having is not None else []

    if not visitor.aggregate_calls:
        raise StatementError("GROUP BY requires aggregate functions in either the SELECT or HAVING clause.")
    if unmatched:
        raise StatementError(messages.non_aggregate_select(unmatched))
    if having_strays:
        raise StatementError(messages.non_aggregate_having([ref.name for ref in having_strays]))


def check_projection_as_written(
    query: ast.Query, items: Sequence[ast.SingleColumn], types: Sequence[t.SqlType | None], scope: Scope
) -> None:
    """ksqlDB's ``buildAggregateSchema`` checks before it types the GROUP BY expressions, for a
    query whose grouping does not type: a name given twice (``items`` typed as ``types``; None
    for an item qtt cannot type yet, which is not checked so), a grouping expression selected
    twice, no value column left.

    Raises:
        StatementError: ksqlDB's message for the first of them.
    """
    seen: set[str] = set()
    for item, type_ in zip(items, types, strict=True):
        if item.alias in seen and type_ is not None:
            raise StatementError(f"Duplicate value columns found in schema: `{item.alias}` {type_}")
        seen.add(str(item.alias))
    normalized = _normalizer(scope)
    selected = [normalized(item.expr) for item in items]
    keys: set[str] = set()
    for group in query.group_by or ():
        found = [str(item.alias) for item, node in zip(items, selected, strict=True) if node == normalized(group)]
        if len(found) > 1:
            raise StatementError(key_selected_twice(found))
        keys.update(found)
    if all(item.alias in keys for item in items):
        raise StatementError("The projection contains no value columns.")


def key_selected_twice(aliases: Sequence[str]) -> str:
    """ksqlDB's message for a grouping expression the projection selects under several names."""
    return (
        f"The projection contains a key column more than once: {messages.and_join([t.quote(a) for a in aliases])}.\n"
        "Each key column must only be in the projection once. If you intended to copy the key into "
        "the value, then consider using the AS_VALUE function to indicate which key reference "
        "should be copied."
    )


def _normalizer(scope: Scope) -> Callable[[ast.Expr], ast.Expr]:
    """An expression as ksqlDB compares it: each column reference rewritten to the column it reads."""

    def rewritten(ref: ast.ColumnRef) -> ast.Expr:
        matches = scope.matches(ref)
        name = (matches[0].input_name or matches[0].name) if len(matches) == 1 else ref.name
        return ast.ColumnRef(name=name)

    return lambda node: rewrite_column_refs(node, rewritten)


class _AggregateVisitor:
    """ksqlDB's ``AggregateVisitor``: one walk of one clause's expression at a time."""

    def __init__(self, groups: set[ast.Expr], known: Callable[[str], bool]) -> None:
        self.groups = groups
        self.known = known
        self.aggregate_calls = 0
        self._clause = ""
        self._in_group: ast.Expr | None = None
        self._aggregate: str | None = None
        self._met_aggregate = False  # ksqlDB's visitor never forgets it met one
        self._strays: list[ast.ColumnRef] = []

    def visit(self, node: ast.Expr, clause: str) -> list[ast.ColumnRef]:
        """Walk ``node``, a ``clause``'s expression; return its column references that count as
        neither grouped nor aggregated (a SELECT item's or HAVING's)."""
        self._clause, self._in_group, self._aggregate, self._met_aggregate = clause, None, None, False
        self._strays = []
        self._process(node, frozenset())
        return self._strays

    def _process(self, node: ast.Node, bound: frozenset[str]) -> None:
        entered = self._in_group is None and node in self.groups
        if entered:
            self._in_group = node  # type: ignore[assignment]
        if isinstance(node, ast.FunctionCall):
            self._call(node, bound)
        elif isinstance(node, ast.ColumnRef):
            if not (node.source is None and node.name in bound):
                self._column(node)
        else:
            if isinstance(node, ast.Lambda):
                bound = bound | frozenset(node.params)
            for child in _children(node):
                self._process(child, bound)
        if entered:
            self._in_group = None

    def _call(self, node: ast.FunctionCall, bound: frozenset[str]) -> None:
        if not self.known(node.name):
            msg = f"Can't find any functions with the name '{node.identifier}'."
            raise StatementError(msg)
        aggregate = is_aggregate(node.name)
        if aggregate:
            if self._aggregate is not None:
                raise StatementError(f"Aggregate functions can not be nested: {self._aggregate}({node.name}())")
            self._met_aggregate = True
            self._aggregate = node.name
            self.aggregate_calls += 1
        for arg in node.args or ((_DEFAULT_ARGUMENT,) if aggregate else ()):
            self._process(arg, bound)
        if aggregate:
            self._aggregate = None

    def _column(self, node: ast.ColumnRef) -> None:
        if self._in_group is not None and not self._met_aggregate and node.name not in WINDOW_BOUNDS:
            return
        if self._clause == "GROUP BY" and self._aggregate is not None:
            msg = f"GROUP BY does not support aggregate functions: {self._aggregate} is an aggregate function."
            raise StatementError(msg)
        if self._clause in ("SELECT", "HAVING") and self._aggregate is None and node not in self.groups:
            self._strays.append(node)


def _children(node: ast.Node) -> Iterator[ast.Node]:
    """The nodes right below ``node``, in the order its fields hold them."""
    for f in fields(node):
        if f.name != "pos":
            yield from _nodes(getattr(node, f.name))


def _nodes(value: object) -> Iterator[ast.Node]:
    if isinstance(value, ast.Node):
        yield value
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _nodes(item)
