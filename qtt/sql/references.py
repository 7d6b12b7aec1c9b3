"""The column references of an expression, told apart from lambda variables.

ksqlDB's parser makes a bare name inside a lambda's body that is one of the lambda's
parameters (or of an enclosing lambda's) a ``LambdaVariable``, not a column reference; qtt's AST
keeps both as :class:`~qtt.sql.ast.ColumnRef`, so every walk that looks for columns asks this
module, which tracks the parameters in scope. A qualified name (``x.col``) is always a column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import fields, is_dataclass, replace

from qtt.sql import ast


def column_refs(root: object) -> Iterator[ast.ColumnRef]:
    """Every column reference in ``root`` (a node, or tuples and lists of them), in the order
    :func:`qtt.sql.parser.iter_nodes` visits them (parents first, left to right), lambda
    variables left out."""
    stack: list[tuple[object, frozenset[str]]] = [(root, frozenset())]
    while stack:
        item, bound = stack.pop()
        if isinstance(item, ast.ColumnRef):
            if item.source is not None or item.name not in bound:
                yield item
            continue
        if isinstance(item, ast.Lambda):
            bound = bound | frozenset(item.params)
        if is_dataclass(item) and not isinstance(item, type):
            stack.extend((getattr(item, f.name), bound) for f in reversed(fields(item)) if f.name != "pos")
        elif isinstance(item, tuple | list):
            stack.extend((part, bound) for part in reversed(item))


def rewrite_column_refs(node: ast.Expr, rewrite: Callable[[ast.ColumnRef], ast.Expr]) -> ast.Expr:
    """``node`` with every column reference replaced by ``rewrite(ref)``; lambda variables are kept."""
    return _rewritten(node, rewrite, frozenset())


def _rewritten(node: ast.Expr, rewrite: Callable[[ast.ColumnRef], ast.Expr], bound: frozenset[str]) -> ast.Expr:
    if isinstance(node, ast.ColumnRef):
        return node if node.source is None and node.name in bound else rewrite(node)
    if isinstance(node, ast.Lambda):
        bound = bound | frozenset(node.params)
    changes: dict[str, object] = {}
    for name in getattr(node, "__dataclass_fields__", {}):
        if name == "pos":
            continue
        value = getattr(node, name)
        if isinstance(value, ast.Expr):
            changes[name] = _rewritten(value, rewrite, bound)
        elif isinstance(value, tuple) and value and all(isinstance(v, ast.Expr) for v in value):
            changes[name] = tuple(_rewritten(v, rewrite, bound) for v in value)
    return replace(node, **changes) if changes else node  # type: ignore[arg-type]
