"""The type of a CASE expression, as ksqlDB's ExpressionTypeManager types it.

Every THEN has one type and the ELSE the same (a NULL branch aside): ksqlDB widens nothing
here, so ``THEN 1`` and ``THEN 2.5`` are its error, with its messages.
"""

from __future__ import annotations

from collections.abc import Sequence

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.functions.signature_matching import NullType


def case_type(
    conditions: Sequence[str],
    results: Sequence[str],
    result_types: Sequence[t.SqlType],
    default_type: t.SqlType | None,
) -> t.SqlType:
    """The CASE's type from its WHEN conditions and THEN results (as text) and their types.

    Raises:
        StatementError: THEN types that differ, an ELSE of another type, or no typed branch.
    """
    target = then_type(conditions, results, result_types)
    if default_type is not None and not isinstance(default_type, NullType):
        if target is not None and default_type != target:
            msg = (
                "Invalid Case expression. Type for the default clause should be the same as for 'THEN' "
                f"clauses.\nTHEN type: {target}.\nDEFAULT type: {default_type}."
            )
            raise StatementError(msg)
        target = default_type
    if target is None:
        raise StatementError("Invalid Case expression. All case branches have NULL type")
    return target


def then_type(conditions: Sequence[str], results: Sequence[str], result_types: Sequence[t.SqlType]) -> t.SqlType | None:
    """The type the THEN results share (None: all are NULL), as ksqlDB's ``validateWhenClauses``
    checks them branch by branch.

    Raises:
        StatementError: a THEN whose type is not the earlier ones'.
    """
    target: t.SqlType | None = None
    for condition, result, type_ in zip(conditions, results, result_types, strict=True):
        if isinstance(type_, NullType):
            continue
        if target is None:
            target = type_
        elif type_ != target:
            msg = (
                "Invalid Case expression. Type for all 'THEN' clauses should be the same."
                f"\nTHEN expression 'WHEN {condition} THEN {result}' has type: {type_}."
                f"\nPrevious THEN expression(s) type: {target}."
            )
            raise StatementError(msg)
    return target
