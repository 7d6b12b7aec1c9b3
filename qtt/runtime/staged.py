"""Staged replays: a group's stateful operators run stage by stage, one wide operator per stage.

A stateful operator costs Spark about the same in every micro-batch whatever it holds (a
shuffle stage, a Python runner, a state store commit), and a replay needs a micro-batch per
input record, so a group of replays that each run their own operators pays for every operator
in every batch. A staged replay pays once per stage instead:

- stage *k* is the *k*-th stateful operator (in build order) of every replay in the group. It
  runs as a streaming query of its own: every replay's input to its *k*-th operator, all slots of
  one :mod:`wide operator <qtt.runtime.wide>`, whose rows are collected per micro-batch;
- those rows are relayed to the later queries by the relay source
  (:mod:`qtt.runtime.relay_source`): a replay's plan is built once over it, each operator's
  output read back from the relay, and the replays' sinks run as the last query, as they do
  for a group without stages (:func:`qtt.runtime.executor.run_jobs`).

Every query runs the replay's micro-batches, so batch ids, state versions and outputs are
those of a replay that runs alone; each slot's state lives in its stage's checkpoint, keyed by
its slot, read back as the replay's internal topics (:func:`read_topics`).

A plan's operator outputs must be known before the relay source can be declared, so each plan
is built twice: once with stand-ins for its operators (their output schemas), once for real.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.errors import QttError, ReplayError
from qtt.runtime.infrastructure import first_line
from qtt.runtime.internal_topics import ChangeFeed, change_feed, topic_of
from qtt.runtime.jobs import InternalTopic, Job, batch_major, encode_options
from qtt.runtime.names import SLOT, col, slot_input, slot_output
from qtt.runtime.relay_source import RELAY_FORMAT, RelayRow, arrow_rows, from_arrow, relay_schema, write_relay
from qtt.runtime.sink_rows import run_and_collect
from qtt.runtime.wide import SlotInput, declared_states, wide_operator

if TYPE_CHECKING:
    from qtt.runtime.builder import PlanBuilder, StatefulHook
    from qtt.runtime.stateful import StatefulOperator

#: builds ``job``'s plan over ``raw`` with ``hook`` standing in for its operators (raises QttError)
Build = Callable[[DataFrame, Job, "StatefulHook"], "PlanBuilder"]


@dataclass(frozen=True)
class Operator:
    """One replay's stateful operator: the stage and slot it ran in, and its state."""

    stage: int
    slot: int
    #: each state variable's name, and the wide operator's variable that holds it
    variables: tuple[tuple[str, str], ...]
    keys: tuple[str, ...]
    #: its key columns' positions among its input columns
    key_positions: tuple[int, ...]


@dataclass
class StagedGroup:
    """A group whose stages have run: what the last query (the sinks) and the read-back need."""

    builders: dict[int, PlanBuilder]
    errors: dict[int, QttError]
    #: each stage query's progress, in stage order
    progress: list[list[Any]] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)
    operators: dict[int, list[Operator]] = field(default_factory=dict)
    #: the change feeds read so far, by stage and wide state variable
    feeds: dict[tuple[int, str], ChangeFeed] = field(default_factory=dict)


def run_stages(
    session: SparkSession, jobs: Sequence[Job], checkpoint: str, plain: DataFrame, build: Build
) -> StagedGroup:
    """Build every job's plan over the relay source and run its stages.

    ``plain`` is the replay source the plans are first built over, for their operators' output
    schemas. A job whose plan cannot be built is left out, with its error.

    Raises:
        ReplayError: a stage's query failed (the caller runs the jobs alone).
    """
    errors: dict[int, QttError] = {}
    outputs: dict[int, list[st.StructType]] = {}
    for job in jobs:
        found: list[st.StructType] = []
        try:
            build(plain, job, _stand_in(found))
        except QttError as e:
            errors[job.job_id] = e
            continue
        outputs[job.job_id] = found
    slots: dict[tuple[int, int], int] = {}
    relay_fields: list[st.StructField] = []
    offsets: dict[int, int] = {}
    for job_id, found in outputs.items():
        for index, output in enumerate(found):
            slot = slots[(job_id, index)] = len(slots)
            offsets[slot] = len(relay_fields)
            relay_fields += [
                st.StructField(slot_output(slot, k), f.dataType, nullable=True) for k, f in enumerate(output.fields)
            ]
    relay_path = Path(f"{checkpoint}-relay.pickle")
    source = _relay_source(session, jobs, relay_schema(st.StructType(relay_fields)), relay_path)
    group = StagedGroup(builders={}, errors=errors)
    inputs: dict[int, list[SlotInput]] = {}
    for job in jobs:
        if job.job_id not in outputs:
            continue
        captured: list[SlotInput] = []
        hook = _relayed(source, lambda index, job_id=job.job_id: slots[(job_id, index)], captured)  # type: ignore[misc]
        try:
            group.builders[job.job_id] = build(source, job, hook)
        except QttError as e:
            errors[job.job_id] = e
            continue
        for index, part in enumerate(captured):
            inputs.setdefault(index, []).append(part)
        group.operators[job.job_id] = [
            Operator(
                stage=index,
                slot=part.slot,
                variables=tuple(declared_states(part.processor).items()),
                keys=part.keys,
                key_positions=tuple(part.df.columns.index(key) for key in part.keys),
            )
            for index, part in enumerate(captured)
        ]
    relayed: list[RelayRow] = []
    for stage in sorted(inputs):
        stage_checkpoint = f"{checkpoint}-stage{stage}"
        try:
            rows, stream = run_and_collect(wide_operator(inputs[stage]), stage_checkpoint, arrow_rows)
        except PySparkException as e:
            raise ReplayError(f"stage {stage} of a staged replay failed: {first_line(e)}") from e
        failure = stream.exception()
        if failure is not None:
            raise ReplayError(f"stage {stage} of a staged replay failed: {first_line(failure)}") from failure
        types = {part.slot: [f.dataType for f in part.output.fields] for part in inputs[stage]}
        for batch, row in rows:
            slot = row[SLOT]
            values = tuple(from_arrow(row[slot_output(slot, k)], type_) for k, type_ in enumerate(types[slot]))
            relayed.append(RelayRow(batch, stage, slot, offsets[slot], values))
        write_relay(relay_path, relayed, one_batch=stage == max(inputs))
        group.progress.append(list(stream.recentProgress))
        group.checkpoints.append(stage_checkpoint)
    return group


def _stand_in(found: list[st.StructType]) -> StatefulHook:
    """Records each operator's output schema; its output is a stand-in of that shape."""

    def hook(
        index: int, df: DataFrame, keys: list[str], processor: StatefulOperator, output: st.StructType
    ) -> DataFrame:
        found.append(output)
        return df.select(*[F.lit(None).cast(f.dataType).alias(f.name) for f in output.fields])

    return hook


def _relayed(source: DataFrame, slot_of: Callable[[int], int], captured: list[SlotInput]) -> StatefulHook:
    """Records each operator's input; its output is read back from the relay."""

    def hook(
        index: int, df: DataFrame, keys: list[str], processor: StatefulOperator, output: st.StructType
    ) -> DataFrame:
        slot = slot_of(index)
        captured.append(SlotInput(slot, df, tuple(keys), processor, output))
        return source.where(col(SLOT) == F.lit(slot)).select(
            *[col(slot_output(slot, k)).alias(f.name) for k, f in enumerate(output.fields)]
        )

    return hook


def _relay_source(session: SparkSession, jobs: Sequence[Job], schema: st.StructType, path: Path) -> DataFrame:
    records, ends = batch_major(jobs)
    options = {**encode_options(records, ends), "schema": schema.json(), "relay": str(path)}
    return session.readStream.format(RELAY_FORMAT).schema(schema).options(**options).load()


def read_topics(session: SparkSession, group: StagedGroup, job: Job) -> list[InternalTopic]:
    """``job``'s state stores, read back from the checkpoints of the stages it ran in.

    A stage's state variable is read once for every slot that shares it.
    """
    topics: list[InternalTopic] = []
    for operator in group.operators.get(job.job_id, []):
        checkpoint = group.checkpoints[operator.stage]
        if not (Path(checkpoint) / "state").is_dir():  # no micro-batch ever committed its state
            continue
        key_fields = [
            (slot_input(operator.slot, position), key)
            for position, key in zip(operator.key_positions, operator.keys, strict=True)
        ]
        for name, variable in operator.variables:
            if (operator.stage, variable) not in group.feeds:
                group.feeds[(operator.stage, variable)] = change_feed(session, checkpoint, 0, variable)
            topics.append(
                topic_of(
                    group.feeds[(operator.stage, variable)],
                    f"{job.query.query_id}-{name}-changelog",
                    key_fields,
                    keep=lambda key, slot=operator.slot: key is not None and key[SLOT] == slot,  # type: ignore[misc]
                )
            )
    return topics
