"""Runs at a restore point: capture a query's checkpoint there, or resume a query from one.

A stateful query of an item with a :class:`Restore` (a restore point) runs alone: a
checkpoint belongs to one query. Capturing runs it over its records before the point and
keeps the checkpoint in ``folder/<queryId>``; resuming starts it from that checkpoint and feeds
it the records from the point on. With ``Restore.keep``, a resumed query's checkpoint is kept
there too, so that a later restore point can resume from it in turn (a chain of upgrades).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from qtt.errors import QttError, TimeLimitReached
from qtt.plan.ir import steps as s
from qtt.runtime.jobs import (
    DEFAULT_SETTINGS,
    InternalTopic,
    Job,
    QueryRun,
    QuerySettings,
    ReplayMode,
    ReplayRecord,
    Runtime,
    logged_offset,
)
from qtt.runtime.spark import merged_checkpoints as merged
from qtt.runtime.spark.checkpoint_files import copy_checkpoint

if TYPE_CHECKING:
    from qtt.serde.registry.schema_registry import RegistrySnapshot

#: stands in for a record a restored query consumed before the restore point (never read again)
_CONSUMED = ReplayRecord(job=0, seq=-1, topic="", partition=0, offset=0, timestamp=0, key=None, value=None)


@dataclass(frozen=True)
class Restore:
    """Checkpoints at a restore point: input record ``point`` is the first one after it.

    With ``capture``, each stateful query also runs alone over its records before the point,
    and its checkpoint stays in ``folder/<queryId>``. Without, each stateful query starts from
    ``folder/<queryId>`` (it consumed ``consumed[queryId]`` records there) and runs over the
    rest: the result holds only what the inputs from the point on caused.
    """

    point: int
    folder: Path
    capture: bool
    consumed: Mapping[str, int] = field(default_factory=dict)
    #: per query: the directory its stored checkpoint was written in (Spark's metadata names it)
    written_at: Mapping[str, str] = field(default_factory=dict)
    #: resuming: keep each query's checkpoint after the run in ``keep/<queryId>`` (for a next point)
    keep: Path | None = None
    #: resuming: the queries that ran before the point. One of them with no stored checkpoint
    #: kept no state there (an upgrade made it stateful): it rebuilds its state from every record
    #: before the point, its outputs for them dropped, as ksqlDB's materialized source would
    #: hold them. A query not among them starts at the point with empty state.
    running: frozenset[str] = frozenset()
    #: resuming: the queries swapped in place at the point (docs/upgrades.md, "Swap-in-place"):
    #: each reads every record from the first into empty state, one record per micro-batch,
    #: and all its outputs are kept (its start gate, not the harness, drops those before the cut)
    backfill: frozenset[str] = frozenset()
    #: resuming: the offset each (topic, partition) had reached at the point in the recorded run,
    #: where a record after the point continues (its ROWOFFSET). A resumed query does not write
    #: again what it wrote before the point, so this run cannot count it. Empty: counted here.
    offsets: Mapping[tuple[str, int], int] = field(default_factory=dict)


@dataclass(frozen=True)
class Stored:
    """A checkpoint a run left for a later restore: how many records it consumed, and where."""

    consumed: int
    written_at: str | None = None
    error: QttError | None = None


def _per_record(records: Sequence[ReplayRecord]) -> tuple[int, ...]:
    """One micro-batch per record, as every stateful query runs."""
    return tuple(range(1, len(records) + 1))


def capture(
    runtime: Runtime,
    query: s.QueryPlan,
    records: Sequence[ReplayRecord],
    restore: Restore,
    registry: RegistrySnapshot | None,
    settings: QuerySettings = DEFAULT_SETTINGS,
) -> Stored:
    """Run the query alone over its records before the restore point; keep its checkpoint."""
    before = tuple(record for record in records if record.seq < restore.point)
    if not before:
        return Stored(0)
    job = Job(0, query, before, _per_record(before), registry=registry, settings=settings)
    checkpoint = restore.folder / query.query_id
    run = runtime.run_jobs([job], str(checkpoint))[0]
    error = run.error if run.timed_out is None else TimeLimitReached(run.timed_out)  # a partial checkpoint
    return Stored(len(before), str(checkpoint.absolute()), error)


def run_restored(
    runtime: Runtime,
    query: s.QueryPlan,
    records: Sequence[ReplayRecord],
    restore: Restore,
    registry: RegistrySnapshot | None,
    checkpoint: Path,
    capture_state: bool,
    settings: QuerySettings = DEFAULT_SETTINGS,
) -> tuple[QueryRun, Stored | None]:
    """Start the query from its stored checkpoint and feed it the records after the restore point.

    Spark resumes from the checkpoint's offsets, so the records it consumed are never read
    again; only their count matters. Its internal topics keep the changes made after the point.
    The run's checkpoint is written to ``checkpoint``, or kept in ``keep/<queryId>``: then the
    second value says where, for a next restore point.
    """
    query_id = query.query_id
    consumed = restore.consumed.get(query_id, 0)
    stored = restore.folder / query_id
    seed = None
    after = [record for record in records if record.seq >= restore.point]
    if query_id in restore.backfill:
        consumed, after = 0, list(records)
    elif consumed and stored.is_dir():
        written_at = restore.written_at.get(query_id, "")
        seed = partial(copy_checkpoint, stored, written_at=written_at)
    else:
        consumed = 0
        if query_id in restore.running:  # no state to resume: rebuilt from the records before the point
            after = list(records)
    replayed = (_CONSUMED,) * consumed + tuple(after)
    kept = None
    if restore.keep is not None:
        checkpoint = restore.keep / query_id
        kept = Stored(len(replayed), str(checkpoint.absolute()))
    resumes_at = None
    if restore.keep is None and query_id not in restore.backfill:
        # the inputs after the point in one micro-batch, each key's last change
        ends = _one_batch_after(consumed, len(replayed))
        mode = ReplayMode(capture_state=capture_state, final_state=True)
        resumes_at = consumed if seed is not None else None
    else:  # a chain of restore points counts a query's micro-batches as its inputs
        ends, mode = _per_record(replayed), ReplayMode(capture_state=capture_state)
    job = Job(0, query, replayed, ends, mode, registry=registry, resumes_at=resumes_at, settings=settings)
    run = runtime.run_jobs([job], str(checkpoint), seed=seed)[0]
    if run.error is not None and seed is not None:
        unreadable = runtime.unreadable_state(checkpoint, run.error)
        if unreadable is not None:
            run.error.message = f"{query_id}: {unreadable}"
    for topic in run.internal_topics:  # each key's last change after the point is batch -1
        topic.records = [record for record in topic.records if record.batch >= consumed or record.batch < 0]
    return run, kept


@dataclass(frozen=True)
class Resume:
    """One stateful query to resume from its stored checkpoint (the arguments of :func:`run_restored`)."""

    query: s.QueryPlan
    records: Sequence[ReplayRecord]
    restore: Restore
    registry: RegistrySnapshot | None
    capture_state: bool
    settings: QuerySettings = DEFAULT_SETTINGS

    @property
    def stored(self) -> Path:
        return self.restore.folder / self.query.query_id

    def merge_key(self) -> str | None:
        """Which resumes it can share a streaming query with (:func:`run_restored_together`);
        None: it runs alone (no stored checkpoint, a chain of upgrades, or files that
        :mod:`~qtt.runtime.spark.merged_checkpoints` does not merge)."""
        if self.restore.keep is not None or not self.restore.consumed.get(self.query.query_id, 0):
            return None
        return merged.merge_key(self.stored) if self.stored.is_dir() else None


def run_restored_together(runtime: Runtime, resumes: Sequence[Resume], checkpoint: Path) -> list[QueryRun] | None:
    """Resume every query from its stored checkpoint in one streaming query, over a merged
    checkpoint (:mod:`qtt.runtime.spark.merged_checkpoints`); each run as :func:`run_restored`
    gives it. None when any of them failed: a merged checkpoint cannot say whose fault it
    was, so each is then resumed alone.

    Every resume must have the same :meth:`Resume.merge_key`.
    """
    parts = [merged.StoredCheckpoint(r.stored, r.restore.written_at.get(r.query.query_id, "")) for r in resumes]
    batches = [merged.last_batch(part.path) for part in parts]
    last = max(b for b in batches if b is not None)
    jobs = []
    for job_id, resume in enumerate(resumes):
        after = [record for record in resume.records if record.seq >= resume.restore.point]
        # the batches before the merged checkpoint's are never read again: one stand-in each
        replayed = (replace(_CONSUMED, job=job_id),) * (last + 1) + tuple(replace(r, job=job_id) for r in after)
        mode = ReplayMode(capture_state=resume.capture_state, final_state=True)
        ends = _one_batch_after(last + 1, len(replayed))
        resumed = Job(job_id, resume.query, replayed, ends, mode, resume.registry, last + 1, resume.settings)
        jobs.append(resumed)
    # batch k <= last holds one stand-in of every job (see batch_major)
    offset = lambda batch: logged_offset(len(resumes) * (batch + 1))  # noqa: E731

    def seed(dest: Path) -> None:
        merged.merge(parts, dest, offset)

    runs = runtime.run_jobs(jobs, str(checkpoint), seed=seed)
    if any(run.error is not None for run in runs.values()):
        return None
    out = []
    for job_id, batch in enumerate(batches):
        assert batch is not None
        run, shift = runs[job_id], last - batch
        run.records = [replace(record, batch=record.batch - shift) for record in run.records]
        run.internal_topics = [_shifted(topic, shift) for topic in run.internal_topics]
        out.append(run)
    return out


def _one_batch_after(consumed: int, total: int) -> tuple[int, ...]:
    """Micro-batch ends: one per record already consumed, then the rest in one micro-batch."""
    return tuple(range(1, consumed + 1)) + ((total,) if total > consumed else ())


def _shifted(topic: InternalTopic, shift: int) -> InternalTopic:
    """A merged run's internal topic, in the micro-batches of the query's own checkpoint (a
    key's last change, batch -1, has none)."""
    records = [replace(record, batch=record.batch - shift if record.batch >= 0 else -1) for record in topic.records]
    return InternalTopic(topic.name, topic.key_schema, topic.value_schema, records)


#: streaming queries of restores run at once: a query spends much of its time waiting for Spark
RESTORE_THREADS = 2
#: stored checkpoints resumed in one streaming query over a merged checkpoint (shares of 12
#: measured no faster: a union of stateful queries plans superlinearly)
MERGED_SIZE = 6


def resume_all(
    runtime: Runtime, resumes: Sequence[Resume], root: Path, round_: int
) -> Iterator[tuple[int, QueryRun, Stored | None]]:
    """Resume each query from its stored checkpoint; each run comes back as soon as its query
    ended, with its index in ``resumes``.

    Resumes whose checkpoints merge (:meth:`Resume.merge_key`) share a streaming query, up to
    :data:`MERGED_SIZE` at a time, each timed as its share of it; the others, and every resume
    of a shared query that failed, resume alone, each timed alone. :data:`RESTORE_THREADS`
    queries run at once."""
    done: dict[int, tuple[QueryRun, Stored | None]] = {}
    by_key: dict[str, list[int]] = {}
    for index, one in enumerate(resumes):
        key = one.merge_key()
        if key is not None:
            by_key.setdefault(key, []).append(index)
    shares = [indexes[i : i + MERGED_SIZE] for indexes in by_key.values() for i in range(0, len(indexes), MERGED_SIZE)]
    shares = [share for share in shares if len(share) > 1]

    def alone(index: int) -> tuple[QueryRun, Stored | None]:
        began = time.perf_counter()
        one = resumes[index]
        run, kept = run_restored(
            runtime,
            one.query,
            one.records,
            one.restore,
            one.registry,
            root / f"round{round_}-restored{index}",
            one.capture_state,
            one.settings,
        )
        run.seconds = time.perf_counter() - began
        return run, kept

    def together(number: int, share: list[int]) -> dict[int, tuple[QueryRun, Stored | None]]:
        began = time.perf_counter()
        runs = run_restored_together(runtime, [resumes[i] for i in share], root / f"round{round_}-merged{number}")
        if runs is None:  # whose fault it was, only each alone can say
            return {index: alone(index) for index in share}
        for run in runs:
            run.seconds = (time.perf_counter() - began) / len(share)
        return {index: (run, None) for index, run in zip(share, runs, strict=True)}

    if not resumes:
        return
    # The first alone: two resumed at once as a fresh JVM's first stateful work failed every
    # restore of the run, now and then (java.io.OptionalDataException deserializing a task).
    first = 0 if not shares else shares[0][0]
    done[first] = alone(first)
    shares = [[i for i in share if i != first] for share in shares]
    with ThreadPoolExecutor(RESTORE_THREADS, thread_name_prefix="qtt-restore") as pool:
        # each result as soon as its query ended, so that progress is steady
        pending: dict[int, Future[dict[int, tuple[QueryRun, Stored | None]]]] = {}
        for number, share in enumerate(shares):
            if len(share) > 1:
                future = pool.submit(together, number, share)
                pending.update(dict.fromkeys(share, future))
        for index in range(len(resumes)):
            if index not in done and index not in pending:
                pending[index] = pool.submit(lambda i: {i: alone(i)}, index)
        yield from ((index, *outcome) for index, outcome in done.items())
        for future in as_completed(set(pending.values())):
            yield from ((index, *outcome) for index, outcome in future.result().items())
