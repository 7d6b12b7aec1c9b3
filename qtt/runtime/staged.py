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
  micro-batch (:mod:`qtt.runtime.relay_source`): one scan and one
  :mod:`wide operator <qtt.runtime.wide>` per micro-batch for the whole group;
- what each slot's operator wrote is relayed to the later queries in one micro-batch, where the
  plan reads it as the operator's output; the replays' sinks run as the last query, as they do
  for a group without stages (:func:`qtt.runtime.executor.run_jobs`).

An operator writes in micro-batch *k* only for rows of micro-batch *k* (no timers), so batch
ids, state versions and outputs are those of a replay that runs alone; each slot's state lives
in its stage's checkpoint, keyed by its slot, read back as the replay's internal topics
(:func:`read_topics`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as st

from qtt.errors import QttError, ReplayError, RuntimeBuildError
from qtt.runtime.infrastructure import first_line
from qtt.runtime.internal_topics import ChangeFeed, change_feed, topic_of
from qtt.runtime.jobs import InternalTopic, Job, batch_major
from qtt.runtime.names import SEQ, SLOT, col, slot_input, slot_output
from qtt.runtime.relay_source import RelayRow, arrow_rows, from_arrow, relay_stream, write_relay
from qtt.runtime.sink_rows import run_and_collect
from qtt.runtime.wide import SlotInput, declared_states, wide_input, wide_operator

if TYPE_CHECKING:
    from qtt.runtime.builder import PlanBuilder, StatefulHook
    from qtt.runtime.stateful import StatefulOperator

#: builds ``job``'s plan over ``raw`` with ``hook`` running its operators (raises QttError)
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
    """Build every job's plan and run its stages; the sinks are left to the caller.

    ``plain`` is the replay source in one micro-batch. A job whose plan cannot be built is left
    out, with its error.

    Raises:
        ReplayError: a stage's query failed (the caller runs the jobs alone).
    """
    group = StagedGroup(builders={}, errors={})
    inputs: dict[int, list[SlotInput]] = {}
    job_of_slot: dict[int, Job] = {}
    numbers = itertools.count()
    for job in jobs:
        captured: list[SlotInput] = []
        try:
            group.builders[job.job_id] = build(plain, job, _relayed(session, checkpoint, numbers, captured))
            _check_inputs(job, captured)
        except QttError as e:
            group.builders.pop(job.job_id, None)
            group.errors[job.job_id] = e
            continue
        for index, part in enumerate(captured):
            inputs.setdefault(index, []).append(part)
            job_of_slot[part.slot] = job
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
    batches = len(batch_major(jobs)[1])
    for stage in sorted(inputs):
        parts = inputs[stage]
        wide = wide_input(parts)
        schema = st.StructType([st.StructField(f.name, f.dataType, nullable=True) for f in wide.schema.fields])
        rows, progress = _run(wide, f"{checkpoint}-stage{stage}-input", f"the input of stage {stage}")
        group.progress.append(progress)
        input_path = Path(f"{checkpoint}-stage{stage}-input.pickle")
        write_relay(input_path, _by_batch(rows, parts, schema, job_of_slot, batches, stage))
        relayed = relay_stream(session, schema, input_path, one_batch=False).where(col(SLOT).isNotNull())
        stage_checkpoint = f"{checkpoint}-stage{stage}"
        written, progress = _run(wide_operator(relayed, parts), stage_checkpoint, f"stage {stage}")
        group.progress.append(progress)
        group.checkpoints.append(stage_checkpoint)
        outputs: dict[int, list[RelayRow]] = {part.slot: [] for part in parts}
        types = {part.slot: [f.dataType for f in part.output.fields] for part in parts}
        for batch, row in written:
            slot = row[SLOT]
            values = tuple(from_arrow(row[slot_output(slot, k)], type_) for k, type_ in enumerate(types[slot]))
            outputs[slot].append(RelayRow(batch, values))
        for slot, relay_rows in outputs.items():
            write_relay(_output_path(checkpoint, slot), relay_rows)
    return group


def _check_inputs(job: Job, captured: Sequence[SlotInput]) -> None:
    for index, part in enumerate(captured):
        if SEQ not in part.df.columns:
            msg = (
                f"the input of stateful operator {index} of {job.query.query_id} has no {SEQ} column: "
                "a staged replay needs it to place each row in its micro-batch"
            )
            raise RuntimeBuildError(msg)


def _run(df: DataFrame, checkpoint: str, what: str) -> tuple[list[tuple[int, Any]], list[Any]]:
    """Run ``df`` to the end; its rows through Arrow with their micro-batch, and its progress."""
    try:
        rows, stream = run_and_collect(df, checkpoint, arrow_rows)
    except PySparkException as e:
        raise ReplayError(f"{what} of a staged replay failed: {first_line(e)}") from e
    failure = stream.exception()
    if failure is not None:
        raise ReplayError(f"{what} of a staged replay failed: {first_line(failure)}") from failure
    return rows, list(stream.recentProgress)


def _by_batch(
    rows: Sequence[tuple[int, Any]],
    parts: Sequence[SlotInput],
    schema: st.StructType,
    job_of_slot: dict[int, Job],
    batches: int,
    stage: int,
) -> list[RelayRow]:
    """A stage's input rows, each in the replay's micro-batch of the input record that caused it.

    Every micro-batch gets a row of nulls first, so that the stage runs every micro-batch of the
    replay, with its batch ids, whether or not a row reaches it.
    """
    seq_columns = {part.slot: slot_input(part.slot, part.df.columns.index(SEQ)) for part in parts}
    batch_of: dict[int, dict[int, int]] = {}
    out = [RelayRow(batch, (None,) * len(schema.fields)) for batch in range(batches)]
    for _, row in rows:
        slot = row[SLOT]
        job = job_of_slot[slot]
        if job.job_id not in batch_of:
            batch_of[job.job_id] = job.batch_of_seq()
        seq = row[seq_columns[slot]]
        if seq not in batch_of[job.job_id]:
            msg = f"stage {stage}: a row of {job.query.query_id} has {SEQ} {seq}, which is no input record of it"
            raise ReplayError(msg)
        values = tuple(from_arrow(row[f.name], f.dataType) for f in schema.fields)
        out.append(RelayRow(batch_of[job.job_id][seq], values))
    return out


def _output_path(checkpoint: str, slot: int) -> Path:
    return Path(f"{checkpoint}-slot{slot}.pickle")


def _relayed(session: SparkSession, checkpoint: str, numbers: Iterator[int], captured: list[SlotInput]) -> StatefulHook:
    """Records each operator's input; its output is what its stage wrote, relayed in one micro-batch."""

    def hook(
        index: int, df: DataFrame, keys: list[str], processor: StatefulOperator, output: st.StructType
    ) -> DataFrame:
        slot = next(numbers)
        captured.append(SlotInput(slot, df, tuple(keys), processor, output))
        schema = st.StructType([st.StructField(f.name, f.dataType, nullable=True) for f in output.fields])
        return relay_stream(session, schema, _output_path(checkpoint, slot), one_batch=True)

    return hook


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
