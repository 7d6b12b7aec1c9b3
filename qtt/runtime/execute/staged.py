"""Staged replays: a group's stateful operators run stage by stage, one wide operator per stage.

A replay needs a micro-batch per input record, and every step of every replay in a streaming
query costs Spark something in every micro-batch (a scan of the source, a Python runner, a
shuffle, a state store commit). Only the stateful operators need the micro-batches, and only
key by key; every other step computes each row from that row alone. So a staged replay runs
every query in one micro-batch:

- stage *k* (the *k*-th stateful operator, in build order, of every replay in the group) runs
  as one streaming query: the stateless steps in front of it, of every replay, over all records
  (:func:`wide_input` lays their rows out for every slot at once), and one
  :mod:`wide operator <qtt.runtime.operators.wide>` for the whole group, which hands each key's rows to
  its slot's processor unit by unit (a row's *unit* is the replay's micro-batch of the input
  record that caused it, by its ``SEQ``), in order, and records each state write with its unit;
- what each slot's operator wrote is relayed (:mod:`qtt.runtime.execute.relay`) to the later queries,
  where the plan reads it as the operator's output; the replays' sinks run as the last query,
  as they do for a group without stages (:func:`qtt.runtime.execute.executor.run_jobs`).

An operator writes only for the rows of a micro-batch (no timers), keeps nothing between calls
but its state, and sees only its own key's state, so every key of a replay sees its rows unit by
unit as in a replay that runs alone, micro-batch by micro-batch, and its outputs, each placed by
its input's ``SEQ``, are that replay's; each slot's state lives in its stage's checkpoint, keyed
by its slot, read back as the replay's internal topics (:func:`read_topics`), each change under
the unit that the operator recorded for it: the state store's change log keeps every write, in
the order they were made.
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

from qtt.errors import QttError, ReplayError, RuntimeBuildError
from qtt.runtime.build.names import SEQ, SLOT, WRITE_DELETE, WRITE_STATE, WRITE_UNIT, col
from qtt.runtime.execute.internal_topics import ChangeFeed, change_feed, topic_of
from qtt.runtime.execute.relay import relay_stream, write_rows
from qtt.runtime.execute.sink_rows import run_and_collect
from qtt.runtime.jobs import InternalTopic, Job
from qtt.runtime.operators.wide import SlotInput, SlotState, WideLayout, wide_input, wide_layout, wide_operator
from qtt.runtime.spark import lines
from qtt.runtime.spark.frames import in_threads
from qtt.runtime.spark.infrastructure import first_line, query_failure

if TYPE_CHECKING:
    from qtt.runtime.build.builder import PlanBuilder
    from qtt.runtime.build.context import StatefulHook
    from qtt.runtime.operators.stateful import StatefulOperator

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
    #: each job's micro-batch of each of its input records, by ``SEQ`` (its rows' units)
    units: dict[int, dict[int, int]] = field(default_factory=dict)
    operators: dict[int, list[Operator]] = field(default_factory=dict)
    #: each wide state variable's writes, by stage and position, in write order: slot, unit, delete
    writes: dict[tuple[int, int], list[tuple[int, int, bool]]] = field(default_factory=dict)
    #: the change feeds read so far, by stage and wide state variable, each change's unit beside it
    feeds: dict[tuple[int, str], tuple[ChangeFeed, list[int]]] = field(default_factory=dict)


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
    group.units = {job.job_id: job.batch_of_seq() for job in jobs}
    units = group.units
    for stage in sorted(inputs):
        parts, layout = inputs[stage], layouts[stage]
        try:
            rows = wide_input(parts, layout).coalesce(UNION_TASKS)
            operator = wide_operator(rows, parts, layout, {p.slot: units[job_of_slot[p.slot].job_id] for p in parts})
        except PySparkException as e:  # Spark refuses a column type of the shared layout (TIME, say)
            raise ReplayError(f"stage {stage} of a staged replay cannot be built: {first_line(e)}") from e
        stage_checkpoint = f"{checkpoint}-stage{stage}"
        written, progress = _run(operator, stage_checkpoint, f"stage {stage}")
        group.progress.append(progress)
        group.checkpoints.append(stage_checkpoint)
        tables = [table for _, table in written]
        table = pa.concat_tables(tables) if tables else lines.arrow_schema(layout.output_schema).empty_table()
        writing = pc.is_valid(table[WRITE_STATE])
        _record_writes(group, stage, table.filter(writing))
        outputs = table.filter(pc.invert(writing))
        for part in parts:
            mine = outputs.filter(pc.equal(outputs[SLOT], part.slot)).select(list(layout.outputs[part.slot]))
            # a file even without rows: a later stage's query then runs its micro-batch, and its state exists
            write_rows(_output_folder(checkpoint, part.slot), _positional(mine), keep_empty=True)
    return group


def _record_writes(group: StagedGroup, stage: int, writes: pa.Table) -> None:
    """The state writes a stage's operator recorded, by state variable, in write order."""
    columns = (writes[c].to_pylist() for c in (WRITE_STATE, SLOT, WRITE_UNIT, WRITE_DELETE))
    for position, slot, unit, delete in zip(*columns, strict=True):
        group.writes.setdefault((stage, position), []).append((slot, unit, delete))


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
        raise query_failure(e, f"{what} of a staged replay failed: {first_line(e)}") from e
    failure = stream.exception()
    if failure is not None:
        raise query_failure(failure, f"{what} of a staged replay failed: {first_line(failure)}") from failure
    return rows, list(stream.recentProgress)


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
        relayed = relay_stream(session, schema, _output_folder(checkpoint, slot))
        return relayed.select(*[col(_position(k)).alias(f.name) for k, f in enumerate(output.fields)])

    return hook


def read_topics(session: SparkSession, group: StagedGroup, job: Job) -> list[InternalTopic]:
    """``job``'s state stores, read back from the checkpoints of the stages it ran in.

    A stage's state variable is read once for every slot that shares it, each slot's fields
    projected from its rows.
    """
    topics: list[InternalTopic] = []
    for operator in group.operators.get(job.job_id, []):
        checkpoint = group.checkpoints[operator.stage]
        if not (Path(checkpoint) / "state").is_dir():  # no micro-batch ever committed its state
            continue
        key_fields = list(operator.keys)
        for state in operator.variables:
            if (operator.stage, state.variable) not in group.feeds:
                feed = change_feed(session, checkpoint, 0, state.variable)
                writes = group.writes.get((operator.stage, state.position), [])
                group.feeds[(operator.stage, state.variable)] = (feed, _units(feed, writes, operator.stage, state))
            feed, units = group.feeds[(operator.stage, state.variable)]
            topics.append(
                topic_of(
                    feed,
                    f"{job.query.query_id}-{state.name}-changelog",
                    key_fields,
                    keep=lambda key, slot=operator.slot: key is not None and key[SLOT] == slot,  # type: ignore[misc]
                    batches=units,
                    value_fields=tuple(zip(state.fields, state.schema.names, strict=True)),
                )
            )
    return topics


def _units(feed: ChangeFeed, writes: Sequence[tuple[int, int, bool]], stage: int, state: SlotState) -> list[int]:
    """Each change's unit: the change log holds the stage's writes in the order they were made,
    which the operator recorded (slot, unit, delete) as it made them."""
    where = f"state variable {state.variable} of stage {stage}"
    if len(feed.rows) != len(writes):
        msg = f"{where}: the change feed has {len(feed.rows)} change(s), the operator recorded {len(writes)} write(s)"
        raise ReplayError(msg)
    for index, (row, (slot, _, delete)) in enumerate(zip(feed.rows, writes, strict=True)):
        if row["key"] is None or row["key"][SLOT] != slot or (row["change_type"] == "delete") != delete:
            msg = (
                f"{where}: change {index} of the change feed ({row['change_type']} of {row['key']}) "
                f"is not the write the operator recorded ({'delete' if delete else 'update'} by slot {slot})"
            )
            raise ReplayError(msg)
    return [unit for _, unit, _ in writes]
