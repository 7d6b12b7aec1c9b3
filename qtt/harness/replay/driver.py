"""Replay plans: encode the inputs, run every query in dependency order, decode the sinks.

Ordering rule: every output record inherits the position (``seq``) of the input record that
caused it. A topic's records are ordered by that position, then by the statement order of
the query that wrote them, then by the order in which that query emitted them for that
input. This is ksqlDB's order when each input record is processed on its own.

Many plans are replayed together (:func:`replay_many`): round *r* runs the *r*-th query of
every plan, and the queries of different plans share Spark streaming queries.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from qtt.errors import QttError, SerdeError
from qtt.harness.cases.model import Record, TopicSpec
from qtt.harness.replay import restored_runs, same_jobs
from qtt.harness.replay.inputs import InputRecord, encode_inputs
from qtt.harness.replay.restored_runs import Restore
from qtt.harness.replay.schemas import registry_for_case, registry_for_recorded
from qtt.harness.replay.topic_serdes import TopicSerde, sink_serdes
from qtt.plan.inserts import Insert
from qtt.plan.ir import steps as s
from qtt.plan.ir.shape import QueryShape, query_levels
from qtt.runtime.jobs import (
    FRESH,
    Headers,
    InternalTopic,
    Job,
    LogEntry,
    QueryRun,
    QuerySettings,
    ReplayMode,
    ReplayRecord,
    Runtime,
    keeps_old_placement,
    seq_tells_batch,
)
from qtt.runtime.spark import scratch
from qtt.serde.registry.schema_registry import RegisteredSchema, Registry, RegistrySnapshot
from qtt.serde.windowed import WindowBounds

#: how many queries may share one streaming query (64 against 32: the 338 historical plans in
#: 201 s and 197 s against 212 s and 227 s, alternating, once unions ran as two tasks)
GROUP_SIZE = 64
#: how many queries with a step that holds rows back share one streaming query: they run
#: unstaged, where 64 stateful replays in one union ran out of task memory (UNABLE_TO_ACQUIRE_MEMORY)
HOLDING_GROUP_SIZE = 16
#: how many stateful queries whose input seq spans micro-batches share one streaming query: they
#: run unstaged, micro-batch by micro-batch (about 3.5 s a replay in a union of 37 as of 2), so
#: small groups spread them over both group threads and keep a union's task memory small, as
#: for queries that hold rows back; 8 is a choice, not measured against other sizes
SPANNING_GROUP_SIZE = 8
#: the temp folders of replays (checkpoints); a killed run's are cleaned by the next replay
REPLAY_PREFIX = "qtt-replay-"


@dataclass(frozen=True)
class OutputRecord:
    """A record a query wrote: its bytes, and the bytes decoded back into case-file JSON."""

    topic: str
    key: Any
    value: Any
    timestamp: int
    seq: int
    query_id: str
    key_bytes: bytes | None = None
    value_bytes: bytes | None = None
    partition: int = 0
    #: the headers of the input record that caused this one (Kafka Streams forwards them)
    headers: Headers = ()
    #: the micro-batch that wrote it (-1 when not known); scenario failures name it
    batch: int = -1
    #: the window of a windowed key (start, end, ``time`` or ``session``)
    window: WindowBounds | None = None

    def as_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "key": self.key, "value": self.value, "timestamp": self.timestamp}


@dataclass
class ReplayResult:
    """Everything one plan's replay produced."""

    inputs: list[InputRecord] = field(default_factory=list)
    outputs: dict[str, list[OutputRecord]] = field(default_factory=dict)
    processing_log: list[LogEntry] = field(default_factory=list)
    step_schemas: dict[str, dict[str, str]] = field(default_factory=dict)
    runs: list[QueryRun] = field(default_factory=list)
    sinks: dict[str, TopicSerde] = field(default_factory=dict)
    stateful: bool = False
    #: every state store's change feed, per query
    internal_topics: list[InternalTopic] = field(default_factory=list)
    #: every subject version the replay registered or read, in order
    schemas: list[RegisteredSchema] = field(default_factory=list)
    #: with :class:`Restore` capture: how many records each stateful query consumed before the point
    consumed: dict[str, int] = field(default_factory=dict)
    #: with :class:`Restore` capture: where each stateful query's checkpoint was written
    written_at: dict[str, str] = field(default_factory=dict)
    #: the query stopped at the time limit, and the limit (seconds): the outputs are partial
    #: (what had arrived by then) and the queries after it did not run
    timed_out: tuple[str, float] | None = None

    @property
    def batches(self) -> int:
        return sum(run.batches for run in self.runs)

    @property
    def seconds(self) -> float:
        return sum(run.seconds for run in self.runs)


@dataclass(frozen=True)
class ReplayItem:
    """A plan, the input bytes to replay through it, and its schema registry (if it uses one)."""

    plan: s.Plan
    inputs: tuple[InputRecord, ...]
    registry: Registry | None = field(default=None, compare=False)
    #: capture checkpoints at a restore point, or start from stored ones (see :class:`Restore`)
    restore: Restore | None = field(default=None, compare=False)
    #: how its queries run: the scenario, and whether state is read back (see :class:`ReplayMode`)
    mode: ReplayMode = field(default=FRESH, compare=False)
    #: its queries are expected to stop at run time (:class:`~qtt.errors.QueryStoppedError`), so
    #: each runs in a streaming query of its own: a query that stops fails the query it shares,
    #: which then runs again without it
    stops: bool = field(default=False, compare=False)

    @classmethod
    def from_case(
        cls,
        plan: s.Plan,
        records: Sequence[Record],
        *,
        where: str = "$.inputs",
        topics: Sequence[TopicSpec] = (),
        topics_where: str = "$.topics",
        inserts: Sequence[Insert] = (),
    ) -> ReplayItem:
        """Register the case's schemas, then encode its input records with the plan's formats.

        ``inserts`` (the case's ``INSERT INTO ... VALUES`` rows) follow the input records, as
        ksqlDB's test driver pipes them: a query reads the rows inserted into a topic only when
        the case's inputs name no record of that topic.

        Raises:
            CaseFileError: a record names an unknown topic or does not fit its format.
        """
        registry = registry_for_case(plan, topics, where=topics_where)
        snapshot = registry.snapshot() if registry is not None else None
        encoded = encode_inputs(plan, records, where=where, registry=snapshot, inserts=inserts)
        return cls(plan, tuple(encoded), registry)

    @classmethod
    def from_recorded(
        cls, plan: s.Plan, inputs: Sequence[InputRecord], schemas: Sequence[RegisteredSchema]
    ) -> ReplayItem:
        """A historical replay: recorded input bytes, and the recorded case schemas registered again."""
        return cls(plan, tuple(inputs), registry_for_recorded(plan, schemas))

    @property
    def snapshot(self) -> RegistrySnapshot | None:
        return self.registry.snapshot() if self.registry is not None else None


@dataclass(frozen=True)
class _Pending:
    """A record waiting to be replayed: an input, or an output of an earlier query."""

    seq: int
    rank: tuple[int, int]  # (writer's statement position, emission order); inputs rank first
    topic: str
    partition: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: Headers


def batch_ends(markers: Sequence[bool], *, per_record: bool) -> list[int]:
    """Micro-batch boundaries (exclusive end indexes) over the replayed records.

    A stateless plan takes everything in one batch unless the case splits its inputs with
    ``qttBatch``; a stateful plan processes one record per batch, as ksqlDB does with record
    caching off. ``markers[i]`` says whether record ``i`` starts a new batch.
    """
    count = len(markers)
    if per_record:
        return list(range(1, count + 1))
    ends = [i for i, marker in enumerate(markers) if marker and i > 0]
    return sorted(set(ends) | {count}) if count else []


class _State:
    """One plan's replay in progress."""

    def __init__(self, item: ReplayItem) -> None:
        self.item = item
        self.registry = item.snapshot
        self.settings = QuerySettings.of(item.plan.config)
        self.result = ReplayResult(
            sinks={topic: serde.with_registry(self.registry) for topic, serde in sink_serdes(item.plan).items()}
        )
        if item.registry is not None:
            self.result.schemas = list(item.registry.journal)
        #: the queries in levels: a level's queries read only what earlier levels wrote
        self.levels = query_levels(item.plan)
        self.queries = [query for level in self.levels for query in level]
        self.rank = {q.query_id: i for i, q in enumerate(item.plan.queries())}
        self.offsets: dict[tuple[str, int], int] = {}
        self.offsets_after_point: dict[tuple[str, int], int] = {}
        self.topic_records: dict[str, list[tuple[_Pending, int]]] = {}
        self.error: QttError | None = None
        self.result.inputs = list(item.inputs)
        self.result.stateful = any(shape.stateful for _, shape in self.queries)
        for seq, record in enumerate(item.inputs):
            self.add(
                _Pending(
                    seq,
                    (-1, 0),
                    record.topic,
                    record.partition,
                    record.timestamp,
                    record.key,
                    record.value,
                    record.headers,
                )
            )

    def add(self, record: _Pending) -> None:
        key = (record.topic, record.partition)
        restore = self.item.restore
        offsets, first = self.offsets, 0
        if restore is not None and restore.offsets and record.seq >= restore.point:
            offsets, first = self.offsets_after_point, restore.offsets.get(key, 0)
        offset = offsets.get(key, first)
        offsets[key] = offset + 1
        self.topic_records.setdefault(record.topic, []).append((record, offset))

    def records_for(self, shape: QueryShape) -> tuple[list[ReplayRecord], list[bool]]:
        """The query's input records (job 0: its job id is set once its group is known), and
        which of them start a micro-batch of the case's own (``qttBatch``)."""
        selected = sorted(
            (item for topic in shape.source_topics for item in self.topic_records.get(topic, [])),
            key=lambda item: (item[0].seq, item[0].rank),
        )
        records = [
            ReplayRecord(
                job=0,
                seq=r.seq,
                topic=r.topic,
                partition=r.partition,
                offset=offset,
                timestamp=r.timestamp,
                key=r.key,
                value=r.value,
                headers=r.headers,
            )
            for r, offset in selected
        ]
        markers = [r.rank[0] < 0 and self.item.inputs[r.seq].new_batch for r, _ in selected]
        return records, markers

    def accept(self, query: s.QueryPlan, shape: QueryShape, run: QueryRun) -> None:
        if run.error is not None:
            self.error = run.error
            return
        self.result.runs.append(run)
        self.result.processing_log.extend(run.processing_log)
        self.result.internal_topics.extend(run.internal_topics)
        self.result.step_schemas[query.query_id] = {ctx: str(schema) for ctx, schema in run.schemas.items()}
        if run.timed_out is not None and self.result.timed_out is None:
            self.result.timed_out = (query.query_id, run.timed_out)
        topic = shape.sink_topic
        assert topic is not None, "the executor refuses a query without a sink"
        rank = self.rank[query.query_id]
        for out in run.records:
            # Every output carries the headers of the input record that caused it, as in ksqlDB.
            headers = self.item.inputs[out.seq].headers
            produced = _Pending(
                out.seq, (rank, out.order), topic, out.partition, out.timestamp, out.key, out.value, headers
            )
            self.add(produced)
            self.result.outputs.setdefault(topic, []).append(
                replace(_decode(self.result.sinks[topic], produced, query.query_id), batch=out.batch)
            )

    def stored(self, query_id: str, stored: restored_runs.Stored) -> None:
        """A query's checkpoint was left at a restore point: record where, or its failure."""
        self.result.consumed[query_id] = stored.consumed
        if stored.written_at is not None:
            self.result.written_at[query_id] = stored.written_at
        if stored.error is not None:
            self.error = stored.error

    def finish(self) -> ReplayResult:
        restore = self.item.restore
        if restore is not None and not restore.capture:  # only what the inputs after the point caused
            self.result.outputs = {
                topic: [r for r in records if r.seq >= restore.point or r.query_id in restore.backfill]
                for topic, records in self.result.outputs.items()
            }
            self.result.processing_log = [e for e in self.result.processing_log if e.seq >= restore.point]
        for topic, records in self.result.outputs.items():
            # stable: the records one query wrote for one input keep their emission order
            self.result.outputs[topic] = sorted(records, key=lambda r: (r.seq, self.rank[r.query_id]))
        return self.result


def _run_restored(
    runtime: Runtime, restored: Sequence[_Todo], root: Path, round_: int
) -> Iterator[tuple[int, QueryRun, restored_runs.Stored | None]]:
    """Resume each entry's query from its stored checkpoint (:func:`restored_runs.resume_all`):
    each run as its query ends, with the entry's index."""
    resumes = [
        restored_runs.Resume(
            entry.query,
            entry.records,
            _restore_point(entry),
            entry.state.registry,
            entry.state.item.mode.capture_state,
            entry.state.settings,
        )
        for entry in restored
    ]
    yield from restored_runs.resume_all(runtime, resumes, root, round_)


def replay_many(
    items: Sequence[ReplayItem],
    *,
    runtime: Runtime,
    workdir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[ReplayResult | QttError]:
    """Replay every item on ``runtime``; a failure affects only its own item, returned as the error.

    Each item's :class:`ReplayMode` says how its queries run; with ``capture_state`` every state
    store is also read back as internal topics, which snapshots record and historical replays
    compare (a plain case run does not need them).
    ``progress(done, len(items))`` is called whenever items finish: an item is done when its
    last query ran (or it failed), one that cannot start is done at once.
    """
    states: list[_State | QttError] = []
    for item in items:
        try:
            states.append(_State(item))
        except QttError as e:
            states.append(e)
    live = [st for st in states if isinstance(st, _State)]
    rounds = max((len(st.levels) for st in live), default=0)
    scratch.clean_stale(workdir, f"{REPLAY_PREFIX}*")
    root = scratch.make_owned(REPLAY_PREFIX, workdir)
    finished = {id(st) for st in live if not st.queries}
    total, reported = len(items), [0]

    def report() -> None:
        done = total - len(live) + len(finished)
        if progress is not None and done > reported[0]:
            reported[0] = done
            progress(done, total)

    report()
    try:
        for r in range(rounds):
            todo = []
            for st in live:
                if r < len(st.levels) and st.error is None and st.result.timed_out is None:
                    for query, shape in st.levels[r]:
                        records, markers = st.records_for(shape)
                        ends = batch_ends(markers, per_record=shape.stateful and st.item.mode.per_record)
                        todo.append(_Todo(st, query, shape, records, ends))
            ran = _Round(todo, r)
            restored = [entry for entry in todo if _restores(entry)]
            todo = [entry for entry in todo if not _restores(entry)]
            for index, run, kept in _run_restored(runtime, restored, root, r):
                entry = restored[index]
                if kept is not None:
                    entry.state.stored(entry.query.query_id, kept)
                finished.update(ran.done(entry, run))
                report()
            shared, to_run = same_jobs.session_runs(), list[_Todo]()
            for entry in todo:  # a run the session kept does for an entry with the same content
                kept_run = shared.run_for(entry) if shared is not None else None
                if kept_run is None:
                    to_run.append(entry)
                else:
                    finished.update(ran.done(entry, kept_run))
            report()
            distinct, served = same_jobs.runs_once(to_run, same_jobs.job_content)
            groups = _groups(distinct)
            jobs = [_jobs(group) for group in groups]
            checkpoints = [str(root / f"round{r}-group{index}") for index in range(len(groups))]
            for group, runs in zip(groups, runtime.run_groups(jobs, checkpoints), strict=True):
                for job_id, entry in enumerate(group):
                    if shared is not None:
                        shared.keep(entry, runs[job_id])
                    mine = served[id(entry)]
                    for each, run in zip(mine, same_jobs.shared(runs[job_id], len(mine)), strict=True):
                        finished.update(ran.done(each, run))
                report()
            for entry in todo:
                if _captures(entry):
                    stored = restored_runs.capture(
                        runtime,
                        entry.query,
                        entry.records,
                        _restore_point(entry),
                        entry.state.registry,
                        entry.state.settings,
                    )
                    entry.state.stored(entry.query.query_id, stored)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out: list[ReplayResult | QttError] = []
    for state in states:
        if isinstance(state, QttError):
            out.append(state)
        elif state.error is not None:
            out.append(state.error)
        else:
            out.append(state.finish())
    return out


def _jobs(group: Sequence[_Todo]) -> list[Job]:
    return [
        Job(
            job_id,
            entry.query,
            tuple(replace(record, job=job_id) for record in entry.records),
            tuple(entry.ends),
            _job_mode(entry),
            registry=entry.state.registry,
            settings=entry.state.settings,
        )
        for job_id, entry in enumerate(group)
    ]


def _job_mode(entry: _Todo) -> ReplayMode:
    """The item's mode, for one query: only a stateful query has state to read back."""
    mode = entry.state.item.mode
    return replace(mode, capture_state=mode.capture_state and entry.shape.stateful)


@dataclass(frozen=True)
class _Todo:
    """One plan's query to run in this round, with its records and micro-batch boundaries."""

    state: _State
    query: s.QueryPlan
    shape: QueryShape
    records: list[ReplayRecord]
    ends: list[int]


class _Round:
    """One round's runs, handed to each plan's replay in query order once all of its level ran.

    The queries of a level may run in any group and any order; a plan accepts their runs in
    :func:`~qtt.plan.ir.shape.query_order`, so the offsets of the topics they write, the processing
    log and the outputs are those of a replay that runs its queries one by one.
    """

    def __init__(self, todo: Sequence[_Todo], index: int) -> None:
        self.index = index
        self.waiting: dict[int, list[_Todo]] = {}
        for entry in todo:
            self.waiting.setdefault(id(entry.state), []).append(entry)
        self.runs: dict[int, QueryRun] = {}

    def done(self, entry: _Todo, run: QueryRun) -> list[int]:
        """Record ``entry``'s run; the ids of the plans whose replay this finished."""
        self.runs[id(entry)] = run
        mine = self.waiting[id(entry.state)]
        if any(id(other) not in self.runs for other in mine):
            return []
        st = entry.state
        for other in mine:
            if st.error is not None:
                break
            try:
                st.accept(other.query, other.shape, self.runs[id(other)])
            except QttError as e:
                st.error = e
        ended = st.error is not None or st.result.timed_out is not None
        return [id(st)] if ended or self.index == len(st.levels) - 1 else []


def _groups(todo: list[_Todo]) -> list[list[_Todo]]:
    """Queries in groups of up to :data:`GROUP_SIZE`, queries with as many micro-batches together.

    Every query can share a streaming query (see :mod:`qtt.runtime.execute.executor`); a group runs as
    many micro-batches as its deepest query, so queries of equal depth go side by side. A query
    with a step that holds rows back (a start gate) keeps its group from running staged, so such
    queries are grouped apart, and so are the queries whose seq spans micro-batches
    (:func:`~qtt.runtime.jobs.seq_tells_batch`: they run unstaged too, and the stateful ones in
    groups of :data:`SPANNING_GROUP_SIZE`), apart again in folders recorded with the placement of
    :attr:`~qtt.runtime.jobs.ReplayMode.last_batch_of_seq` (:func:`~qtt.runtime.jobs.keeps_old_placement`,
    which runs them staged). A query expected to stop
    (:attr:`ReplayItem.stops`) runs alone.
    """
    groups = []

    def kind(entry: _Todo) -> tuple[bool, bool, bool, bool, int, bool]:
        mode = entry.state.item.mode
        old_placement = keeps_old_placement(mode, entry.records, entry.ends)
        # 1: a stateless query whose seq spans micro-batches, 2: a stateful one (see SPANNING_GROUP_SIZE)
        spans = not old_placement and not seq_tells_batch(entry.records, entry.ends)
        spanning = (2 if entry.shape.stateful else 1) if spans else 0
        return (mode.restart, mode.bounded, old_placement, entry.shape.holds_rows, spanning, entry.state.item.stops)

    kinds = {id(entry): kind(entry) for entry in todo}
    for mode in sorted(set(kinds.values())):  # a restarted or bounded group runs all its queries that way
        ordered = sorted((e for e in todo if kinds[id(e)] == mode), key=lambda e: len(e.ends))
        size = 1 if mode[5] else HOLDING_GROUP_SIZE if mode[3] else SPANNING_GROUP_SIZE if mode[4] == 2 else GROUP_SIZE
        groups += [ordered[i : i + size] for i in range(0, len(ordered), size)]
    return groups


def _restore_point(entry: _Todo) -> Restore:
    restore = entry.state.item.restore
    assert restore is not None
    return restore


def _restores(entry: _Todo) -> bool:
    restore = entry.state.item.restore
    return restore is not None and not restore.capture and entry.shape.stateful


def _captures(entry: _Todo) -> bool:
    restore = entry.state.item.restore
    return restore is not None and restore.capture and entry.shape.stateful and entry.state.error is None


def replay(
    plan: s.Plan,
    inputs: Sequence[Record],
    *,
    runtime: Runtime,
    workdir: Path | None = None,
    inputs_path: str = "$.inputs",
) -> ReplayResult:
    """Replay one plan over a case's input records; raises the :class:`QttError` that stopped it."""
    item = ReplayItem.from_case(plan, inputs, where=inputs_path)
    result = replay_many([item], runtime=runtime, workdir=workdir)[0]
    if isinstance(result, QttError):
        raise result
    return result


def decode_record(
    serde: TopicSerde,
    key: bytes | None,
    value: bytes | None,
    *,
    timestamp: int,
    seq: int,
    query_id: str,
    partition: int,
    headers: Headers,
) -> OutputRecord:
    """A record's bytes read back as its topic's formats read them (``query_id`` '' for a
    record the case wrote itself)."""
    decoded_key, decoded_value, window = serde.decode_key(key), serde.decode_value(value), serde.decode_window(key)
    return OutputRecord(
        serde.topic, decoded_key, decoded_value, timestamp, seq, query_id, key, value, partition, headers, window=window
    )


def _decode(serde: TopicSerde, record: _Pending, query_id: str) -> OutputRecord:
    try:
        return decode_record(
            serde,
            record.key,
            record.value,
            timestamp=record.timestamp,
            seq=record.seq,
            query_id=query_id,
            partition=record.partition,
            headers=record.headers,
        )
    except QttError as e:
        msg = f"{query_id} wrote bytes to {serde.topic} that its own format cannot read back: {e}"
        raise SerdeError(msg) from None
