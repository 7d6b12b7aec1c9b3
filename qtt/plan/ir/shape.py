"""The shape of a plan: what a replay needs to know about its queries, answered once.

Which topics a query reads, which topic it writes, whether any of its steps keeps state, and
in which order a plan's queries must run. The replay driver and the runtime's executor ask
these questions; the answers come from the steps' role bases (:class:`~qtt.plan.ir.steps.SourceStep`,
:class:`~qtt.plan.ir.steps.SinkStep`, :class:`~qtt.plan.ir.steps.StatefulStep`,
:class:`~qtt.plan.ir.join_steps.JoinStep`), so a new step type
gets them right by taking the right base.
"""

from __future__ import annotations

from dataclasses import dataclass

from qtt.errors import UnsupportedFeatureError
from qtt.plan.ir import steps as s


@dataclass(frozen=True)
class QueryShape:
    """What one query reads, writes and keeps.

    Attributes:
        query_id: the query's id.
        source_topics: the topics its source steps read.
        sink_topic: the topic its sink writes, or None when its plan does not end in a sink
            (the runtime then refuses to build it).
        stateful_steps: its steps that own state stores, in build order.
    """

    query_id: str
    source_topics: frozenset[str]
    sink_topic: str | None
    stateful_steps: tuple[s.ExecutionStep, ...]

    @property
    def holds_rows(self) -> bool:
        """Whether a step may emit a row in a later micro-batch than its input's (a start gate)."""
        return any(step.holds_rows for step in self.stateful_steps)

    @property
    def stateful(self) -> bool:
        """Whether the query keeps state, and so must see one record per micro-batch."""
        return bool(self.stateful_steps)

    @classmethod
    def of(cls, query: s.QueryPlan) -> QueryShape:
        """Walk ``query``'s steps once and answer every question about them."""
        steps = s.walk_steps(query.physical_plan)
        root = query.physical_plan
        return cls(
            query_id=query.query_id,
            source_topics=frozenset(step.topic for step in steps if isinstance(step, s.SourceStep)),
            sink_topic=root.topic if isinstance(root, s.SinkStep) else None,
            stateful_steps=tuple(step for step in steps if step.stateful),
        )


def query_order(plan: s.Plan) -> list[tuple[s.QueryPlan, QueryShape]]:
    """The plan's queries with their shapes, each after every query that writes a topic it reads.

    Among queries that are free to run, statement order decides.

    Raises:
        UnsupportedFeatureError: queries read each other's output in a cycle.
    """
    remaining = [(query, QueryShape.of(query)) for query in plan.queries()]
    ordered: list[tuple[s.QueryPlan, QueryShape]] = []
    while remaining:
        writes = [shape.sink_topic for _, shape in remaining]
        ready = next(
            (
                index
                for index, (_, shape) in enumerate(remaining)
                if not any(topic in shape.source_topics for other, topic in enumerate(writes) if other != index)
            ),
            None,
        )
        if ready is None:
            names = ", ".join(query.query_id for query, _ in remaining)
            msg = f"queries that read each other's output in a cycle ({names})"
            raise UnsupportedFeatureError(msg)
        ordered.append(remaining.pop(ready))
    return ordered


def query_levels(plan: s.Plan) -> list[list[tuple[s.QueryPlan, QueryShape]]]:
    """The plan's queries in :func:`query_order`, cut into levels that may run side by side.

    A query's level is one more than the highest level of the queries that write a topic it
    reads (0 when none does), and never lower than the level of the query before it: every
    query of a level reads only what earlier levels wrote, so a replay may run a whole level
    at once, and the levels read in turn keep :func:`query_order` (the order in which a replay
    hands on what its queries wrote, which decides the offsets of a topic two queries write).

    Raises:
        UnsupportedFeatureError: queries read each other's output in a cycle.
    """
    ordered = query_order(plan)
    levels: list[int] = []
    for index, (_, shape) in enumerate(ordered):
        writers = [levels[j] + 1 for j in range(index) if ordered[j][1].sink_topic in shape.source_topics]
        levels.append(max([*writers, *levels[-1:]], default=0))
    cut: list[list[tuple[s.QueryPlan, QueryShape]]] = [[] for _ in range(max(levels, default=-1) + 1)]
    for level, query in zip(levels, ordered, strict=True):
        cut[level].append(query)
    return cut
