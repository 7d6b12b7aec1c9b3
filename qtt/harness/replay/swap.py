"""The swap-in-place scenarios, ``swap`` and ``swap-restart`` (docs/upgrades.md, "Swap-in-place").

Each case's plan is swapped in place for itself: one query is chosen (the last stateful one
that reads a single input topic alone), the source topics' records are spread over
:data:`SOURCE_PARTITIONS` partitions by Kafka's partitioner on their key bytes, and one control
event per partition of the chosen query's topic is written near the middle of its records,
partition *i*'s before its (*i*+1)-th record from there on: the vector's events arrive apart,
so the new query's gate must hold the rows of a partition that is past the cut while it drops
those of one that is not. Then two replays run over the same records:

- the *reference*: the plan as it is (old and new plans are the same plan, so it is what each
  would emit alone);
- the *swapped* one: the old query with a stop gate over its source (it computes nothing from
  its partition's control event on) and, writing the same sink, the new query under its own
  id, from the first record into empty state, with its start gate before the sink.

The sink of the swapped replay must then hold, as :func:`~qtt.harness.replay.cutover.violations`
checks, the old reference's records and the new reference's records caused after the vector, nothing
lost or twice, and in each sink partition no record from before the cut after one from after
it, in the order the queries wrote them. ``swap-restart`` runs the swapped replay with every
streaming query restarted from its checkpoint after each micro-batch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, replace

from qtt.harness.replay.cutover import Cause, ControlVector, Emitted, violations
from qtt.harness.replay.driver import OutputRecord, ReplayItem, ReplayResult
from qtt.harness.replay.inputs import InputRecord
from qtt.plan.ir import gate_steps as gs
from qtt.plan.ir import steps as s
from qtt.runtime.jobs import ReplayMode
from qtt.serde.registry.schema_registry import RegisteredSchema
from qtt.topics.partitioner import partition_for

#: the partitions the scenario spreads every source topic's records over
SOURCE_PARTITIONS = 2
#: the id suffix of the query swapped in
SWAPPED = "_SWAPPED"


@dataclass(frozen=True)
class Swap:
    """One case's swap: the three replays, and what the cut is."""

    old_reference: ReplayItem
    reference: ReplayItem
    swapped: ReplayItem
    #: the position, among every input record, of each input of the old reference
    old_positions: tuple[int, ...]
    query_id: str
    sink_topic: str
    #: per input record (by its position): its topic, partition and position
    causes: tuple[Cause, ...]
    #: per partition of the swapped query's topic: its control event's position
    vector: ControlVector

    @property
    def items(self) -> tuple[ReplayItem, ReplayItem, ReplayItem]:
        return (self.old_reference, self.reference, self.swapped)

    def judge(self, old: ReplayResult, new: ReplayResult, swapped: ReplayResult) -> list[str]:
        """Every way the swapped replay's sink breaks the cutover invariant; empty when it holds."""
        mine = (self.query_id, self.query_id + SWAPPED)  # the sink may have other writers (INSERT INTO)

        def emitted(result: ReplayResult, positions: Sequence[int] | None = None) -> list[Emitted]:
            records = sorted(
                (r for r in result.outputs.get(self.sink_topic, []) if r.query_id in mine),
                key=lambda r: (r.batch, r.seq),  # the order they were written in
            )
            return [self._emitted(r, r.seq if positions is None else positions[r.seq]) for r in records]

        return violations(emitted(old, self.old_positions), emitted(new), emitted(swapped), self.vector)

    def _emitted(self, record: OutputRecord, position: int) -> Emitted:
        value = (record.value_bytes, record.timestamp, record.headers)
        return Emitted(record.partition, record.key_bytes, value, self.causes[position])


def swap_for(
    plan: s.Plan, inputs: Sequence[InputRecord], schemas: Sequence[RegisteredSchema], *, restart: bool
) -> Swap | str:
    """The swap of ``plan`` for itself over ``inputs``, or why the scenario does not apply."""
    query = _chosen(plan)
    if query is None:
        return "no query reads one input topic alone (each joins two, or reads a topic another query writes)"
    topic = _topics(query.physical_plan)[0]
    spread = [replace(r, partition=_partition(r)) for r in inputs]
    mine = [n for n, r in enumerate(spread) if r.topic == topic]
    if len(mine) < 2:
        return f"fewer than two records of {topic}: no cut between two of them"
    records, vector = _with_controls(spread, topic, mine[len(mine) // 2])
    causes = tuple(Cause(r.topic, r.partition, n) for n, r in enumerate(records))
    offsets = _control_offsets(records, topic)
    swapped_plan = _swapped(plan, query, topic, offsets)
    mode = ReplayMode(restart=restart)
    old_positions = tuple(n for n, cause in enumerate(causes) if cause.topic != topic or vector.before(cause))
    return Swap(
        old_reference=ReplayItem.from_recorded(plan, [records[n] for n in old_positions], schemas),
        old_positions=old_positions,
        reference=ReplayItem.from_recorded(plan, records, schemas),
        swapped=replace(ReplayItem.from_recorded(swapped_plan, records, schemas), mode=mode),
        query_id=query.query_id,
        sink_topic=_sink(query).topic,
        causes=causes,
        vector=vector,
    )


def _chosen(plan: s.Plan) -> s.QueryPlan | None:
    """The last query that reads a single topic no query writes, a stateful one if any."""
    written = {_sink(q).topic for q in plan.queries()}
    alone = [q for q in plan.queries() if len(topics := _topics(q.physical_plan)) == 1 and topics[0] not in written]
    stateful = [q for q in alone if any(step.stateful for step in s.walk_steps(q.physical_plan))]
    chosen = stateful or alone
    return chosen[-1] if chosen else None


def _sink(query: s.QueryPlan) -> s.SinkStep:
    sink = query.physical_plan
    assert isinstance(sink, s.SinkStep)
    return sink


def _topics(step: s.ExecutionStep) -> list[str]:
    return sorted({each.topic for each in s.walk_steps(step) if isinstance(each, s.SourceStep)})


def control_event(topic: str, partition: int, partitions: int) -> InputRecord:
    """The control event of a cut for one partition of ``topic`` (of ``partitions``)."""
    return InputRecord(topic, 0, None, None, partition, ((gs.CONTROL_HEADER, str(partitions).encode()),))


def _partition(record: InputRecord) -> int:
    return partition_for(record.key, SOURCE_PARTITIONS) if record.key is not None else 0


def _with_controls(records: list[InputRecord], topic: str, cut: int) -> tuple[list[InputRecord], ControlVector]:
    """The records with one control event per partition of ``topic``: partition *i*'s just
    before its (*i*+1)-th record from position ``cut`` on (at the end if it has fewer), so that
    each partition's event comes later than the one before, with records of both between."""
    places: dict[int, int] = {}
    seen: dict[int, int] = {}
    for position in range(cut, len(records)):
        record = records[position]
        if record.topic == topic:
            seen[record.partition] = seen.get(record.partition, 0) + 1
            if seen[record.partition] == record.partition + 1:
                places[record.partition] = position
    out: list[InputRecord] = []
    vector: dict[tuple[str, int], int] = {}
    for position in range(len(records) + 1):
        for partition in range(SOURCE_PARTITIONS):
            if places.get(partition, len(records)) == position:
                vector[(topic, partition)] = len(out)
                out.append(control_event(topic, partition, SOURCE_PARTITIONS))
        if position < len(records):
            out.append(records[position])
    return out, ControlVector(vector)


def _control_offsets(records: Sequence[InputRecord], topic: str) -> tuple[tuple[int, int], ...]:
    """The offset of each control event of ``topic`` in its partition, as the replay numbers them."""
    counters: dict[int, int] = {}
    offsets = []
    for record in records:
        if record.topic != topic:
            continue
        if any(name == gs.CONTROL_HEADER for name, _ in record.headers):
            offsets.append((record.partition, counters.get(record.partition, 0)))
        counters[record.partition] = counters.get(record.partition, 0) + 1
    return tuple(sorted(offsets))


def _swapped(plan: s.Plan, query: s.QueryPlan, topic: str, offsets: tuple[tuple[int, int], ...]) -> s.Plan:
    """``plan`` with ``query`` stop-gated over ``topic`` and its copy swapped in beside it."""
    sink = _sink(query)
    gate = gs.StartGateV1(context="StartGate", source=sink.source, replaces=query.query_id, source_topics=(topic,))
    new = s.QueryPlan(
        query_id=query.query_id + SWAPPED,
        sources=query.sources,
        sink=query.sink,
        physical_plan=replace(sink, source=gate),  # type: ignore[call-arg]
    )
    old = replace(query, physical_plan=_stop_gated(query.physical_plan, topic, offsets))
    statements: list[s.StatementPlan] = []
    for statement in plan.statements:
        if getattr(statement, "query_plan", None) is query:
            statements.append(replace(statement, query_plan=old))  # type: ignore[call-arg]
            statements.append(s.KsqlPlanV1(statement_text=f"-- {query.query_id}, swapped in place", query_plan=new))
        else:
            statements.append(statement)
    return replace(plan, statements=tuple(statements))


def _stop_gated(step: s.ExecutionStep, topic: str, offsets: tuple[tuple[int, int], ...]) -> s.ExecutionStep:
    """``step`` with a stop gate over each of its source steps that reads ``topic``."""
    if isinstance(step, s.SourceStep):
        if step.topic != topic:
            return step
        return gs.StopGateV1(context=f"{step.context}/StopGate", source=step, offsets=offsets)
    changes = {
        field.name: _stop_gated(value, topic, offsets)
        for field in dataclasses.fields(step)
        if isinstance(value := getattr(step, field.name), s.ExecutionStep)
    }
    return replace(step, **changes)  # type: ignore[arg-type]
