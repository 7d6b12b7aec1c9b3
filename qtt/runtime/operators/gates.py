"""The gates of a swap-in-place upgrade: ``startGateV1`` and ``stopGateV1``
(:mod:`qtt.plan.ir.gate_steps`; docs/upgrades.md, "Swap-in-place").

A control event is a record of a source topic with the ``qtt-cutover`` header, whose value is
the number of partitions of its topic. No source step decodes one as data; the start gate
reads them straight from the replay source, beside the rows its query computed.

The start gate is keyed by one constant, so that it sees every row of its query. Per row it
knows the source partition of the record that caused it (``ROWPARTITION``, which every step
carries from the source to the sink). It keeps the partitions whose control event it has seen
and the rows it holds in two value state variables.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Row
from pyspark.sql import functions as F
from pyspark.sql import types as st
from pyspark.sql.streaming.stateful_processor import StatefulProcessorHandle

from qtt.plan.ir import gate_steps as gs
from qtt.runtime.build.context import BuildContext, Built, builds
from qtt.runtime.build.names import ORDER, ROWOFFSET, ROWPARTITION, SEQ, col, control_header, is_control
from qtt.runtime.operators.state_codec import StateCodec
from qtt.runtime.operators.stateful import StatefulOperator, state_name, struct
from qtt.runtime.spark.workers.worker_memory import freeze_once

#: on a start gate's input, a control event's partition and its topic's partition count (null on a data row)
CONTROL_PARTITION = "__qtt_control_partition"
CONTROL_PARTITIONS = "__qtt_control_partitions"
#: the one key every row of a start gate is grouped by
GATE_KEY = "__qtt_gate"

_SEEN = struct([("partitions", st.ArrayType(st.IntegerType())), ("of", st.IntegerType())])


@dataclass(frozen=True)
class GateSpec:
    """What a start gate needs, picklable for the Python workers."""

    state_name: str
    #: the rows it lets through: their columns, in order, and their Spark types
    row_schema: st.StructType

    @property
    def output(self) -> tuple[str, ...]:
        return tuple(field.name for field in self.row_schema.fields)

    @property
    def held_name(self) -> str:
        return f"{self.state_name}-held"


class StartGate(StatefulOperator):
    """Drops the rows caused before their partition's control event, holds those caused after
    it until every partition's control event was seen, then lets every row through."""

    def __init__(self, spec: GateSpec) -> None:
        self.spec = spec

    def state_names(self) -> tuple[str, ...]:
        return (self.spec.state_name, self.spec.held_name)

    def init(self, handle: StatefulProcessorHandle) -> None:
        freeze_once("operator")
        self.seen_state = handle.getValueState(self.spec.state_name, _SEEN)
        self.held_codec = StateCodec(struct([("rows", st.ArrayType(self.spec.row_schema))]))
        self.held_state = handle.getValueState(self.spec.held_name, self.held_codec.stored)

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        stored = self.seen_state.get()
        seen: set[int] = set(stored[0]) if stored else set()
        count: int | None = stored[1] if stored else None
        held_row = self.held_codec.read(self.held_state)
        kept = held_row[0] if held_row is not None else None
        held = [Row(**dict(zip(self.spec.output, entry, strict=True))) for entry in (kept or [])]
        # a control event before the data rows of the same input position
        ordered = sorted(rows, key=lambda r: (r[SEQ], r[CONTROL_PARTITION] is None, r[ORDER] or 0))
        for row in ordered:
            if row[CONTROL_PARTITION] is not None:
                seen.add(row[CONTROL_PARTITION])
                count = row[CONTROL_PARTITIONS]
                if self.open(seen, count):
                    yield from held
                    held = []
            elif self.after_cut(row[ROWPARTITION], seen):
                out = Row(**{name: row[name] for name in self.spec.output})
                if self.open(seen, count):
                    yield out
                else:
                    held.append(out)
        self.seen_state.update((sorted(seen), count))
        if held:
            self.held_state.update(self.held_codec.encode(([tuple(r) for r in held],)))
        elif self.held_state.exists():
            self.held_state.clear()

    @staticmethod
    def open(seen: set[int], count: int | None) -> bool:
        """Whether the control event of every partition was seen."""
        return count is not None and seen >= set(range(count))

    def after_cut(self, partition: int, seen: set[int]) -> bool:
        """Whether a row was caused after the cut: its partition's control event came first."""
        return partition in seen

    def close(self) -> None:
        pass


@builds(gs.StartGateV1)
def start_gate_v1(context: BuildContext, step: gs.StartGateV1, source: Built) -> Built:
    rows = source.df
    if ORDER not in rows.columns:
        rows = rows.withColumn(ORDER, F.lit(0))
    raw = context.raw
    controls = raw.where(F.col("topic").isin(*step.source_topics) & is_control(F.col("headers"))).select(
        F.col("seq").alias(SEQ),
        F.col("partition").cast("int").alias(CONTROL_PARTITION),
        F.element_at(F.filter(F.col("headers"), control_header), 1)
        .getField("value")
        .cast("string")
        .cast("int")
        .alias(CONTROL_PARTITIONS),
    )
    both = rows.withColumn(CONTROL_PARTITION, F.lit(None).cast("int")).withColumn(
        CONTROL_PARTITIONS, F.lit(None).cast("int")
    )
    both = both.unionByName(controls, allowMissingColumns=True).withColumn(GATE_KEY, F.lit(0))
    spec = GateSpec(state_name(step.context), rows.schema)
    out = context.stateful(both, [GATE_KEY], StartGate(spec), rows.schema)
    return Built(out if ORDER in source.df.columns else out.drop(ORDER), source.schema)


@builds(gs.StopGateV1)
def stop_gate_v1(context: BuildContext, step: gs.StopGateV1, source: Built) -> Built:
    stopped = F.lit(False)
    for partition, offset in step.offsets:
        stopped = stopped | ((col(ROWPARTITION) == F.lit(partition)) & (col(ROWOFFSET) >= F.lit(offset)))
    return Built(source.df.where(~stopped), source.schema)
