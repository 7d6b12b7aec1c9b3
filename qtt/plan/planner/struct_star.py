"""``struct->*`` in a projection: the struct it expands, with ksqlDB's messages.

ksqlDB resolves the path itself (``SelectionUtil.resolveStructFields``), so its messages differ
from a dereference's: ``Column `A` is not a STRUCT type.``, ``Field X is not a STRUCT type.``,
``Field NOPE was not found on STRUCT.``
"""

from __future__ import annotations

from collections.abc import Callable

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.ir import expressions as e
from qtt.sql import ast


def expanded_struct(base: ast.Expr, typed: Callable[[ast.Expr], e.Expression]) -> tuple[e.Expression, t.Struct]:
    """The expression ``base->*`` expands, and its struct type.

    Raises:
        StatementError: ``base`` is no struct, or names a field its struct lacks.
    """
    if isinstance(base, ast.Dereference):
        parent, struct = expanded_struct(base.base, typed)
        found = struct.field(base.field)
        if found is None:
            raise StatementError(f"Field {base.field} was not found on STRUCT.")
        expr: e.Expression = e.FieldRef(base=parent, name=found.name, sql_type=found.type)
        if not isinstance(found.type, t.Struct):
            raise StatementError(f"Field {base.field} is not a STRUCT type.")
        return expr, found.type
    expr = typed(base)
    if not isinstance(expr.result_type, t.Struct):
        shown = t.quote(base.name) if isinstance(base, ast.ColumnRef) else str(base)
        raise StatementError(f"Column {shown} is not a STRUCT type.")
    return expr, expr.result_type
