"""Swap-in-place upgrades of a C*AS query (``CREATE OR REPLACE ... WITH (SWAP_IN_PLACE=true)``):
the new query runs from the first record beside the old one behind a start gate, and cuts over
at control events (docs/upgrades.md, "Swap-in-place")."""

from __future__ import annotations

from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.ir import gate_steps as gs
from qtt.plan.ir import steps as s
from qtt.sql import ast

#: the WITH property of ``CREATE OR REPLACE ... AS SELECT`` that asks for a swap-in-place upgrade
SWAP_IN_PLACE = "SWAP_IN_PLACE"


def start_gate(query: s.QueryPlan) -> gs.StartGateV1 | None:
    """The start gate before the query's sink: the query was swapped in place."""
    gate = next(iter(query.physical_plan.sources()), None)
    return gate if isinstance(gate, gs.StartGateV1) else None


def swapped_out(query: s.QueryPlan) -> str | None:
    """The id of the query that ``query`` swapped in place for, if it did."""
    gate = start_gate(query)
    return None if gate is None else gate.replaces


def swap_in_place(statement: ast.CreateAsSelect) -> bool:
    """Whether the statement asks for a swap-in-place upgrade (``WITH (SWAP_IN_PLACE=true)``)."""
    value = statement.properties.get(SWAP_IN_PLACE)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise StatementError(f"{SWAP_IN_PLACE} must be true or false, not {value!r}")
    if value and not statement.or_replace:
        msg = f"{SWAP_IN_PLACE} upgrades a running query: use it with CREATE OR REPLACE {statement.kind}"
        raise StatementError(msg)
    return value


def with_start_gate(
    statement: ast.CreateAsSelect, replaced: s.QueryPlan | None, step: s.ExecutionStep
) -> s.ExecutionStep:
    """The new query's plan with its start gate before the sink (docs/upgrades.md, "Swap-in-place")."""
    if replaced is None:
        msg = f"{SWAP_IN_PLACE} upgrades a running query, and no query writes {statement.name}"
        raise StatementError(msg, hint=f"create {statement.name} without {SWAP_IN_PLACE} first")
    topics = sorted({each.topic for each in s.walk_steps(step) if isinstance(each, s.SourceStep)})
    if len(topics) != 1:
        msg = (
            f"{SWAP_IN_PLACE} needs a query that reads one topic; this one reads {', '.join(topics)} "
            "(a joined row does not say which topic's record caused it, so no gate can place it at the cut)"
        )
        raise UnsupportedFeatureError(msg)
    return gs.StartGateV1(context="StartGate", source=step, replaces=replaced.query_id, source_topics=tuple(topics))
