"""The plan of a case's statements so far: what ``CREATE OR REPLACE`` replaced is gone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from types import MappingProxyType

from qtt.plan.ddl.swaps import swapped_out
from qtt.plan.ir import steps as s


def current_plan(properties: Mapping[str, object], planned: Sequence[s.StatementPlan]) -> s.Plan:
    """The plan of the statements so far: what ``CREATE OR REPLACE`` replaced is gone.

    A replaced query keeps its id and runs as its replacement; a replaced stream or table is
    declared by its replacement alone. A query swapped in place (``SWAP_IN_PLACE``) runs under
    its own id, and the query it replaced is gone.
    """
    last_query: dict[str, int] = {}
    last_declaration: dict[str, int] = {}
    for index, statement in enumerate(planned):
        if (query := getattr(statement, "query_plan", None)) is not None:
            last_query[query.query_id] = index
            swapped = swapped_out(query)
            if swapped is not None:
                last_query[swapped] = -1
        command = getattr(statement, "ddl_command", None)
        name = command.source_name if isinstance(command, s.CreateSourceCommand) else None
        if name is not None and (command.or_replace or name not in last_declaration):  # type: ignore[union-attr]
            last_declaration[name] = index
    kept: list[s.StatementPlan] = []
    for index, statement in enumerate(planned):
        query = getattr(statement, "query_plan", None)
        command = getattr(statement, "ddl_command", None)
        if query is not None and last_query.get(query.query_id) != index:
            statement = replace(statement, query_plan=None)  # type: ignore[call-arg]
        if isinstance(command, s.CreateSourceCommand) and last_declaration.get(command.source_name, index) > index:
            statement = replace(statement, ddl_command=None)  # type: ignore[call-arg]
        if getattr(statement, "query_plan", None) is not None or getattr(statement, "ddl_command", None) is not None:
            kept.append(statement)
    # a property written as a JSON fraction is read as a Decimal; the plan records it as the
    # double Jackson reads it as, which its JSON writes and reads back unchanged
    config = MappingProxyType({k: _as_json(properties[k]) for k in sorted(properties)})
    return s.Plan(config=config, statements=tuple(kept))


def _as_json(value: object) -> object:
    return float(value) if isinstance(value, Decimal) else value
