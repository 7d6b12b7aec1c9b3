"""Staged replays: a group's stateful operators run stage by stage, one wide operator per stage.

A replay needs a micro-batch per input record, and every step of every replay in a streaming
query costs Spark something in every micro-batch (a scan of the source, a Python runner, a
shuffle, a state store commit). Only the stateful operators need the micro-batches; every other
step computes each row from that row alone. So a staged replay runs each of those apart:

- the stateless steps in front of stage *k* (the *k*-th stateful operator, in build order, of
  every replay in the group) run as one query over all records in **one** micro-batch; each row
  they hand stage *k* is placed in the replay's micro-batch of the input record that caused it
  (its ``SEQ``), so :func:`wide_input` gathers them for every slot at once;
- stage *k* runs as a streaming query of its own over those rows, relayed micro-batch by
  micro-batch (:mod:`qtt.runtime.relay`): one scan and one
  :mod:`wide operator <qtt.runtime.wide>` per micro-batch for the whole group; a replay's
  micro-batches that share no key run as one (:mod:`qtt.runtime.packing`);
- what each slot's operator wrote is relayed to the later queries in one micro-batch, where the
  plan reads it as the operator's output; the replays' sinks run as the last query, as they do
  for a group without stages (:func:`qtt.runtime.executor.run_jobs`).

An operator writes only for the rows of a micro-batch (no timers) and sees only its own key's
state, so every key of a replay sees its rows micro-batch by micro-batch as in a replay that
runs alone, and its outputs, each placed by its input's ``SEQ``, are that replay's; each slot's
state lives in its stage's checkpoint, keyed by its slot, read back as the replay's internal
topics (:func:`read_topics`), each change under the replay's own micro-batch.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as st
from pyspark.sql.pandas.types import to_arrow_schema

from qtt.errors import QttError, ReplayError, RuntimeBuildError
from qtt.runtime.frames import in_threads
from qtt.runtime.infrastructure import first_line
from qtt.runtime.internal_topics import ChangeFeed, change_feed, topic_of
from qtt.runtime.jobs import InternalTopic, Job
from qtt.runtime.names import SEQ, SLOT, col
from qtt.runtime.packing import Packing, pack, packable
from qtt.runtime.relay import relay_stream, write_batches, write_rows
from qtt.runtime.sink_rows import run_and_collect
from qtt.runtime.wide import SlotInput, SlotState, WideLayout, wide_input, wide_layout, wide_operator

if TYPE_CHECKING:
    from qtt.runtime.builder import PlanBuilder, StatefulHook
    from qtt.runtime.stateful import StatefulOperator

#: Tasks of a micro-batch over a union of a group's replays (each stage's input, and the sinks
#: of every group). Their rows are few; what costs is that every task deserializes the plan of
#: the whole union, and a union has a partition per replay (37 tasks for 32 replays), so they
#: run as two: one per core of the default ``local[2]``.
UNION_TASKS = 2
#: slot numbers per job: a job's operators take ``position * _SLOTS_PER_JOB`` and up
_SLOTS_PER_JOB = 1000

#: builds ``job``'s plan over ``raw`` with ``hook`` running its operators (raises QttError)
Build = Callable[[DataFrame, Job, "StatefulHook"], "PlanBuilder"]


@dataclass(frozen=True)
class Operator:
    """One replay's stateful operator: the stage and slot it ran in, and its state."""

    stage: int
    slot: int
    #: its state variables, each in a variable of the wide operator
    variables: tuple[SlotState, ...]
    #: each key column: the wide column of the state's key that holds it, and its name
    keys: tuple[tuple[str, str], ...]


@dataclass
class StagedGroup:
    """A group whose stages have run: what the last query (the sinks) and the read-back need."""

    builders: dict[int, PlanBuilder]
    errors: dict[int, QttError]
    #: each stage query's progress, in stage order
    progress: list[list[Any]] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)
    #: where each stage ran its replays' micro-batches, in stage order
    packings: list[Packing] = field(default_factory=list)
    #: how many micro-batches each stage's operator ran, in stage order
    stage_batches: list[int] = field(default_factory=list)
    operators: dict[int, list[Operator]] = field(default_factory=dict)
    #: the change feeds read so far, by stage and wide state variable
    feeds: dict[tuple[int, str], ChangeFeed] = field(default_factory=dict)


@dataclass
class StagedPlans:
    """A staged group's plans, built (no Spark job ran): each stage's operators and their inputs."""

    group: StagedGroup
    inputs: dict[int, list[SlotInput]]
    layouts: dict[int, WideLayout]
    job_of_slot: dict[int, Job]


def build_stages(
    session: SparkSession, jobs: Sequence[Job], checkpoint: str, plain: DataFrame, build: Build
) -> StagedPlans:
    """Build every job's plan over ``plain`` (the group's source in one micro-batch), recording
    each stateful operator's input for its stage. A job whose plan cannot be built is left out,
    with its error."""
    group = StagedGroup(builders={}, errors={})
    inputs: dict[int, list[SlotInput]] = {}
    job_of_slot: dict[int, Job] = {}

    def build_one(position: int, job: Job) -> tuple[PlanBuilder | QttError, list[SlotInput]]:
        captured: list[SlotInput] = []
        numbers = itertools.count(position * _SLOTS_PER_JOB)  # a job's slots, whichever thread builds it
        try:
            builder = build(plain, job, _relayed(session, checkpoint, numbers, captured))
            _check_inputs(job, captured)
        except QttError as e:
            return e, []
        return builder, captured

    for job, (built, captured) in zip(jobs, in_threads(build_one, list(enumerate(jobs))), strict=True):
        if isinstance(built, QttError):
            group.errors[job.job_id] = built
            continue
        group.builders[job.job_id] = built
        for index, part in enumerate(captured):
            inputs.setdefault(index, []).append(part)
            job_of_slot[part.slot] = job
    layouts = {stage: wide_layout(parts) for stage, parts in inputs.items()}
    for stage in sorted(inputs):
        for part in inputs[stage]:
            group.operators.setdefault(job_of_slot[part.slot].job_id, []).append(
                Operator(
                    stage=stage,
                    slot=part.slot,
                    variables=layouts[stage].states[part.slot],
                    keys=tuple((layouts[stage].column(part, key), key) for key in part.keys),
                )
            )
    return StagedPlans(group, inputs, layouts, job_of_slot)


def run_stages(session: SparkSession, jobs: Sequence[Job], checkpoint: str, plans: StagedPlans) -> StagedGroup:
    """Run the stages of plans built by :func:`build_stages` (with the same ``checkpoint``); the
    sinks are left to the caller.

    Raises:
        ReplayError: a stage's query failed (the caller runs the jobs alone).
    """
    group, inputs, layouts, job_of_slot = plans.group, plans.inputs, plans.layouts, plans.job_of_slot
    batches = max((len(job.batch_ends) for job in jobs), default=0)
    for stage in sorted(inputs):
        parts, layout = inputs[stage], layouts[stage]
        try:
            stage_input = wide_input(parts, layout).coalesce(UNION_TASKS)
        except PySparkException as e:  # Spark refuses a column type of the shared layout (TIME, say)
            raise ReplayError(f"the input of stage {stage} of a staged replay cannot be built: {first_line(e)}") from e
        rows, progress = _run(stage_input, f"{checkpoint}-stage{stage}-input", f"the input of stage {stage}")
        group.progress.append(progress)
        input_folder = Path(f"{checkpoint}-relay-stage{stage}")
        by_batch = _by_batch(rows, parts, layout, job_of_slot, batches, stage)
        key_columns = [SLOT, *layout.keys]
        if packable(layout.input_schema, key_columns):
            by_batch, packing = pack(by_batch, key_columns)
        else:
            packing = Packing(own=None)
        write_batches(input_folder, by_batch)
        relayed = relay_stream(session, layout.input_schema, input_folder, one_batch=False)
        stage_checkpoint = f"{checkpoint}-stage{stage}"
        written, progress = _run(wide_operator(relayed, parts, layout), stage_checkpoint, f"stage {stage}")
        group.progress.append(progress)
        group.checkpoints.append(stage_checkpoint)
        group.packings.append(packing)
        group.stage_batches.append(len(by_batch))
        tables = [table for _, table in written if table.num_rows]
        for part in parts:
            names = list(layout.outputs[part.slot])
            mine = [table.filter(pc.equal(table[SLOT], part.slot)).select(names) for table in tables]
            if mine:
                write_rows(_output_folder(checkpoint, part.slot), _positional(pa.concat_tables(mine)))
    return group


def _check_inputs(job: Job, captured: Sequence[SlotInput]) -> None:
    if len(captured) > _SLOTS_PER_JOB:
        raise RuntimeBuildError(f"{job.query.query_id} has more than {_SLOTS_PER_JOB} stateful operators")
    for index, part in enumerate(captured):
        if SEQ not in part.df.columns:
            msg = (
                f"the input of stateful operator {index} of {job.query.query_id} has no {SEQ} column: "
                "a staged replay needs it to place each row in its micro-batch"
            )
            raise RuntimeBuildError(msg)


def _run(df: DataFrame, checkpoint: str, what: str) -> tuple[list[tuple[int, pa.Table]], list[Any]]:
    """Run ``df`` to the end; each micro-batch's rows as an Arrow table with its batch id, and its
    progress."""
    try:
        rows, stream = run_and_collect(df, checkpoint, lambda batch: [batch.toArrow()])
    except PySparkException as e:
        raise ReplayError(f"{what} of a staged replay failed: {first_line(e)}") from e
    failure = stream.exception()
    if failure is not None:
        raise ReplayError(f"{what} of a staged replay failed: {first_line(failure)}") from failure
    return rows, list(stream.recentProgress)


def _by_batch(
    collected: Sequence[tuple[int, pa.Table]],
    parts: Sequence[SlotInput],
    layout: WideLayout,
    job_of_slot: dict[int, Job],
    batches: int,
    stage: int,
) -> list[pa.Table]:
    """A stage's input rows, micro-batch by micro-batch: each row in the replay's micro-batch of
    the input record that caused it. A micro-batch no row reaches is an empty table (an unpacked
    stage still runs it, with its batch id)."""
    tables = [table for _, table in collected]
    table = pa.concat_tables(tables) if tables else to_arrow_schema(layout.input_schema, timezone="UTC").empty_table()
    seq_columns = {part.slot: table[layout.column(part, SEQ)].to_pylist() for part in parts}
    jobs = [job_of_slot[part.slot] for part in parts]
    batch_of = {job.job_id: job.batch_of_seq() for job in jobs}
    positions: list[list[int]] = [[] for _ in range(batches)]
    for index, slot in enumerate(table[SLOT].to_pylist()):
        job = job_of_slot[slot]
        seq = seq_columns[slot][index]
        if seq not in batch_of[job.job_id]:
            msg = f"stage {stage}: a row of {job.query.query_id} has {SEQ} {seq}, which is no input record of it"
            raise ReplayError(msg)
        positions[batch_of[job.job_id][seq]].append(index)
    return [table.take(pa.array(indices, type=pa.int64())) for indices in positions]


def _positional(table: pa.Table) -> pa.Table:
    """``table`` with its columns named by position (an operator's output names are any SQL name)."""
    return table.rename_columns([_position(k) for k in range(table.num_columns)])


def _position(index: int) -> str:
    return f"c{index}"


def _output_folder(checkpoint: str, slot: int) -> Path:
    return Path(f"{checkpoint}-relay-slot{slot}")


def _relayed(session: SparkSession, checkpoint: str, numbers: Iterator[int], captured: list[SlotInput]) -> StatefulHook:
    """Records each operator's input; its output is what its stage wrote, relayed in one micro-batch."""

    def hook(
        index: int, df: DataFrame, keys: list[str], processor: StatefulOperator, output: st.StructType
    ) -> DataFrame:
        slot = next(numbers)
        captured.append(SlotInput(slot, df, tuple(keys), processor, output))
        schema = st.StructType(
            [st.StructField(_position(k), f.dataType, nullable=True) for k, f in enumerate(output.fields)]
        )
        relayed = relay_stream(session, schema, _output_folder(checkpoint, slot), one_batch=True)
        return relayed.select(*[col(_position(k)).alias(f.name) for k, f in enumerate(output.fields)])

    return hook


def read_topics(session: SparkSession, group: StagedGroup, job: Job) -> list[InternalTopic]:
    """``job``'s state stores, read back from the checkpoints of the stages it ran in.

    A stage's state variable is read once for every slot that shares it, each slot's fields
    projected from its rows.
    """
    topics: list[InternalTopic] = []
    for operator in group.operators.get(job.job_id, []):
        checkpoint, packing = group.checkpoints[operator.stage], group.packings[operator.stage]
        if not (Path(checkpoint) / "state").is_dir():  # no micro-batch ever committed its state
            continue
        key_fields = list(operator.keys)
        for state in operator.variables:
            if (operator.stage, state.variable) not in group.feeds:
                group.feeds[(operator.stage, state.variable)] = change_feed(session, checkpoint, 0, state.variable)
            topics.append(
                topic_of(
                    group.feeds[(operator.stage, state.variable)],
                    f"{job.query.query_id}-{state.name}-changelog",
                    key_fields,
                    keep=lambda key, slot=operator.slot: key is not None and key[SLOT] == slot,  # type: ignore[misc]
                    batch_of=packing.batch_of,
                    value_fields=tuple(zip(state.fields, state.schema.names, strict=True)),
                )
            )
    return topics
