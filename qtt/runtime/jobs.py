"""What a replay hands the runtime, and what it gets back: plain data, no Spark.

A :class:`Job` is one query with its :class:`ReplayRecord` s and micro-batch boundaries; the
executor (:mod:`qtt.runtime.execute.executor`) runs jobs on Spark and returns a :class:`QueryRun` per
job: the :class:`SinkRecord` s it wrote, its processing log, its step schemas and, when asked,
its state stores' change feeds as :class:`InternalTopic` s. The replay source's options
(:func:`encode_options`, :func:`decode_options`) carry the records to Spark's Python workers.

This module never imports pyspark, so the harness can type with these classes and the plugin
can collect without a JVM.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from qtt.errors import QttError
from qtt.plan.ir.schema import LogicalSchema
from qtt.plan.ir.steps import QueryPlan
from qtt.plan.settings import (
    EXPRESSION_ERROR_SCOPE,
    NESTED_ERROR_SET_NULL,
    WHOLE_EXPRESSION,
    WHOLE_EXPRESSION_FUNCTIONS,
    enabled,
)
from qtt.serde.registry.schema_registry import RegistrySnapshot

#: the name the replay source registers under: ``spark.readStream.format(FORMAT_NAME)``
FORMAT_NAME = "qtt_replay"
#: the replay source's rows: shaped like Kafka source rows, plus ``job`` and ``seq``
SCHEMA = (
    "job INT, seq LONG, topic STRING, partition INT, offset LONG, timestamp LONG, key BINARY, value BINARY, "
    "headers ARRAY<STRUCT<key: STRING, value: BINARY>>"
)

Headers = tuple[tuple[str, bytes | None], ...]


@dataclass(frozen=True)
class ReplayRecord:
    """One record to replay; ``seq`` is its position in the case's input order.

    ``job`` tells apart the independent replays that share one streaming query.
    """

    job: int
    seq: int
    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: Headers = ()


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def source_row(r: ReplayRecord) -> tuple[Any, ...]:
    """``r`` as a row of :data:`SCHEMA`'s columns, in their order."""
    return (r.job, r.seq, r.topic, r.partition, r.offset, r.timestamp, r.key, r.value, list(r.headers))


def encode_options(
    records: Sequence[ReplayRecord],
    batch_ends: Sequence[int],
    *,
    stop_file: str | None = None,
    checkpoint: str | None = None,
) -> dict[str, str]:
    """The reader options that carry ``records`` and the micro-batch boundaries.

    ``stop_file``, when it exists as a query starts, holds the offset that start stops at.
    ``checkpoint``: the query's checkpoint, whose offset log says where a restarted query
    resumes (read on pyspark 4.1 only, see :mod:`qtt.runtime.spark.source.stepped_reader`).
    """
    rows = []
    for record in records:
        *fields, key, value, headers = source_row(record)
        rows.append([*fields, _b64(key), _b64(value), [[k, _b64(v)] for k, v in headers]])
    options = {"records": json.dumps(rows), "batch_ends": json.dumps(list(batch_ends))}
    if stop_file is not None:
        options["stop_file"] = stop_file
    if checkpoint is not None:
        options["checkpoint"] = checkpoint
    return options


def decode_options(options: Mapping[str, str]) -> tuple[list[list[Any]], list[int]]:
    """The encoded rows and the batch boundaries that :func:`encode_options` wrote."""
    return json.loads(options.get("records", "[]")), json.loads(options.get("batch_ends", "[]"))


def logged_offset(next_record: int) -> str:
    """The replay source's offset before record ``next_record`` (0-based), as Spark's offset log
    holds it (its readers' offsets are ``{"next": n}``)."""
    return json.dumps({"next": next_record})


def decode_row(row: Sequence[Any]) -> tuple[Any, ...]:
    """One encoded row as a tuple of :data:`SCHEMA`'s columns, bytes decoded."""
    job, seq, topic, partition, offset, timestamp, key, value, headers = row
    return (
        job,
        seq,
        topic,
        partition,
        offset,
        timestamp,
        _unb64(key),
        _unb64(value),
        [(k, _unb64(v)) for k, v in headers],
    )


@dataclass(frozen=True)
class ReplayMode:
    """How a replay runs its queries: the one value for the ways a query's life can go.

    The harness's scenarios set it (restart, rebatch, batch); snapshots and historical replays
    capture state. The default is the fresh replay.
    """

    #: stop the streaming query after every micro-batch and start it again from its checkpoint
    #: (the restart scenario)
    restart: bool = False
    #: run as a bounded batch query over all records at once (the batch scenario); nothing is
    #: checkpointed, so no internal topics
    bounded: bool = False
    #: stateful queries take one record per micro-batch (ksqlDB with record caching off); off,
    #: every query follows the inputs' ``new_batch`` marks (the rebatch and batch scenarios)
    per_record: bool = True
    #: read the query's state stores back as internal topics (a few Spark jobs per query)
    capture_state: bool = False
    #: with ``capture_state``: each key's last change in each state store (batch -1), from the
    #: micro-batch a resumed job resumes at (:func:`qtt.runtime.execute.internal_topics.last_changes`):
    #: a query that ran many inputs in one micro-batch changed a key several times in one version
    final_state: bool = False
    #: place rows as replays recorded before per-record placement did: a staged group placed every
    #: row an input ``seq`` caused in the last micro-batch that seq is in, so a stateful job whose
    #: seq spans micro-batches runs staged (:meth:`Job.seq_tells_batch`; historical folders only,
    #: :mod:`qtt.harness.historical.recorded_with`)
    last_batch_of_seq: bool = False


#: the fresh replay: streaming, one record per micro-batch for stateful queries, no state read back
FRESH = ReplayMode()
#: the fresh replay with every state store read back (snapshots and historical replays)
CAPTURE = ReplayMode(capture_state=True)


#: ksqlDB's setting that stops a query on a timestamp it cannot extract (else the record is dropped)
TIMESTAMP_THROW_ON_INVALID = "ksql.timestamp.throw.on.invalid"
#: ksqlDB's setting that keeps a null null when cast to STRING (off: the text ``null``)
CAST_STRINGS_PRESERVE_NULLS = "ksql.cast.strings.preserve.nulls"


@dataclass(frozen=True)
class QuerySettings:
    """The plan's config that changes how a query runs (and how CAST writes a null as text)."""

    #: a timestamp column that is null or cannot be parsed stops the query (:class:`~qtt.errors.QueryStoppedError`)
    timestamp_throw_on_invalid: bool = False
    #: ``CAST(x AS STRING)`` of a null is null (else the text ``null``, :func:`~qtt.runtime.build.builtins.casts.cast`)
    cast_strings_preserve_nulls: bool = True
    #: the plan's :data:`~qtt.plan.settings.EXPRESSION_ERROR_SCOPE` (None: a failing part nulls
    #: only itself; :mod:`qtt.plan.analysis.expression_errors` says which plans record which value)
    error_scope: str | None = None
    #: ``ksql.nested.error.set.null``: with ``whole_expression_errors``, a CAST, an array item, a
    #: map entry, a struct field and a call or field access passed to a call fail only themselves
    nested_errors_caught: bool = True

    @property
    def whole_expression_errors(self) -> bool:
        """A failing part nulls its whole expression, as in ksqlDB."""
        return self.error_scope in (WHOLE_EXPRESSION, WHOLE_EXPRESSION_FUNCTIONS)

    @property
    def function_errors(self) -> bool:
        """With :attr:`whole_expression_errors`, a function that throws on its input fails the expression too."""
        return self.error_scope == WHOLE_EXPRESSION_FUNCTIONS

    @classmethod
    def of(cls, config: Mapping[str, object]) -> QuerySettings:
        """The settings of a plan's ``config`` (its properties, as the case or script set them)."""
        throw = config.get(TIMESTAMP_THROW_ON_INVALID, False)
        preserve = config.get(CAST_STRINGS_PRESERVE_NULLS, True)
        scope = config.get(EXPRESSION_ERROR_SCOPE)
        return cls(
            timestamp_throw_on_invalid=str(throw).strip().lower() == "true",
            cast_strings_preserve_nulls=str(preserve).strip().lower() != "false",
            error_scope=None if scope is None else str(scope),
            nested_errors_caught=enabled(config, NESTED_ERROR_SET_NULL, True),
        )


#: what a plan without such config runs with
DEFAULT_SETTINGS = QuerySettings()


@dataclass(frozen=True)
class Job:
    """One query to replay over its own records. ``job_id`` must be unique in a group."""

    job_id: int
    query: QueryPlan
    records: tuple[ReplayRecord, ...]
    batch_ends: tuple[int, ...]
    #: how the query runs (a group restarts, or is bounded, if any of its jobs is)
    mode: ReplayMode = FRESH
    #: the schemas of the replay's registry, for the registry formats
    registry: RegistrySnapshot | None = None
    #: a job resumed from a stored checkpoint: the micro-batch it resumes at (its query keeps
    #: the operators that wrote the checkpoint, never runs staged, and its failure is the
    #: group's: a checkpoint holds every job's state). None: it starts from empty state.
    resumes_at: int | None = None
    #: the plan's config that changes how the query runs
    settings: QuerySettings = DEFAULT_SETTINGS

    def batch_of_seq(self) -> dict[int, int]:
        """Each record's micro-batch, by its ``seq`` (see :meth:`seq_tells_batch`)."""
        return {record.seq: batch for batch, record in self._batched()}

    def seq_tells_batch(self) -> bool:
        """Whether a record's ``seq`` tells its micro-batch (:func:`seq_tells_batch`)."""
        return seq_tells_batch(self.records, self.batch_ends)

    def _batched(self) -> Iterator[tuple[int, ReplayRecord]]:
        return _batched(self.records, self.batch_ends)


def seq_tells_batch(records: Sequence[ReplayRecord], batch_ends: Sequence[int]) -> bool:
    """Whether a record's ``seq`` tells its micro-batch: not when two records share a seq (a
    case input and the copy another query wrote of it, or the rows one EXPLODE made of one
    input) but not a micro-batch."""
    batches: dict[int, int] = {}
    return all(batches.setdefault(record.seq, batch) == batch for batch, record in _batched(records, batch_ends))


def keeps_old_placement(mode: ReplayMode, records: Sequence[ReplayRecord], batch_ends: Sequence[int]) -> bool:
    """Whether the old placement (:attr:`ReplayMode.last_batch_of_seq`) changes anything for
    these records: only when a seq spans micro-batches. Elsewhere a run is today's and may be
    shared with, or grouped beside, today's runs."""
    return mode.last_batch_of_seq and not seq_tells_batch(records, batch_ends)


def _batched(records: Sequence[ReplayRecord], batch_ends: Sequence[int]) -> Iterator[tuple[int, ReplayRecord]]:
    for batch, (begin, end) in enumerate(zip([0, *batch_ends], batch_ends, strict=False)):
        for record in records[begin:end]:
            yield batch, record


def batch_major(jobs: Sequence[Job]) -> tuple[list[ReplayRecord], list[int]]:
    """All jobs' records, and the micro-batch boundaries over them: batch k holds every job's k-th batch.

    Each job keeps its own batch boundaries and its records' order, and its k-th batch runs
    as micro-batch k whatever the other jobs hold, so batch ids (which the internal topics
    record) are the ones the job has when it runs alone.
    """
    slices = [
        [job.records[begin:end] for begin, end in zip([0, *job.batch_ends], job.batch_ends, strict=False)]
        for job in jobs
    ]
    records: list[ReplayRecord] = []
    ends: list[int] = []
    for k in range(max((len(batches) for batches in slices), default=0)):
        for batches in slices:
            if k < len(batches):
                records.extend(batches[k])
        ends.append(len(records))
    return records, ends


@dataclass(frozen=True)
class SinkRecord:
    """One record a query wrote to its sink topic."""

    seq: int  # the input record that caused it
    order: int  # its position among the records caused by the same input
    batch: int
    timestamp: int
    partition: int
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True)
class LogEntry:
    """One processing-log entry: a record skipped because its bytes did not decode."""

    seq: int
    query_id: str
    context: str
    message: str


#: the change of a repartition topic's records: appended records, not a state store's changes
APPENDED = "append"


@dataclass(frozen=True)
class InternalRecord:
    """One change of a state store: its key and value as plain JSON, and where it happened."""

    key: Any
    value: Any
    change: str
    batch: int
    partition: int
    #: a repartition topic's record timestamp (a state store's change has none)
    timestamp: int | None = None

    def sort_key(self) -> tuple[int, int, str, str]:
        """The documented order of a change feed (see :mod:`qtt.runtime.execute.internal_topics`)."""
        return (self.batch, self.partition, json.dumps(self.key, sort_keys=True), self.change)


@dataclass
class InternalTopic:
    """A state store's change feed, under ``<queryId>-<state variable>-changelog``, or a join's
    repartition topic (:mod:`qtt.runtime.build.repartitions`)."""

    name: str
    key_schema: str
    value_schema: str
    records: list[InternalRecord] = field(default_factory=list)


@dataclass
class QueryRun:
    """What one query did during a replay."""

    query_id: str
    topic: str
    records: list[SinkRecord] = field(default_factory=list)
    processing_log: list[LogEntry] = field(default_factory=list)
    schemas: dict[str, LogicalSchema] = field(default_factory=dict)
    batches: int = 0
    started: bool = False
    seconds: float = 0.0
    group_size: int = 1
    #: how many times its streaming query was started (more than once in the restart scenario)
    starts: int = 1
    #: how many stages of a staged replay (:mod:`qtt.runtime.execute.staged`) its operators ran in
    stages: int = 0
    #: how many micro-batches the stages of its group ran, all stages together (one a stage:
    #: each key's rows run unit by unit inside it, see :mod:`qtt.runtime.operators.wide`)
    stage_batches: int = 0
    error: QttError | None = None
    internal_topics: list[InternalTopic] = field(default_factory=list)
    #: how many stateful operators today's runtime built for it (none: it keeps no state)
    state_operators: int = 0
    #: the time limit (seconds) its streaming query hit: it was stopped, ``records`` are what
    #: its sink had written by then, and its state was not read back
    timed_out: float | None = None


class Runtime(Protocol):
    """What a replay runs its jobs on. :class:`qtt.runtime.execute.spark_runtime.SparkRuntime`
    is Spark; a test may pass another."""

    def run_groups(self, groups: Sequence[Sequence[Job]], checkpoints: Sequence[str]) -> Iterator[dict[int, QueryRun]]:
        """Run each group of jobs as one query, in order, yielding each group's runs by job id."""
        ...

    def run_jobs(
        self, jobs: Sequence[Job], checkpoint: str, *, seed: Callable[[Path], None] | None = None
    ) -> dict[int, QueryRun]:
        """Run ``jobs`` as one query; ``seed`` fills the checkpoint directory before it starts."""
        ...

    def unreadable_state(self, checkpoint: Path, error: QttError) -> str | None:
        """Which stored state variable ``error`` says today's operators cannot read, if any."""
        ...
