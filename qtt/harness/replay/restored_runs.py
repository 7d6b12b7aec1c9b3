"""Runs at a restore point: capture a query's checkpoint there, or resume a query from one.

A stateful query of an item with a :class:`Restore` (a restore point) runs alone: a
checkpoint belongs to one query. Capturing runs it over its records before the point and
keeps the checkpoint in ``folder/<queryId>``; resuming starts it from that checkpoint and feeds
it the records from the point on. With ``Restore.keep``, a resumed query's checkpoint is kept
there too, so that a later restore point can resume from it in turn (a chain of upgrades).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from qtt.errors import QttError, TimeLimitReached
from qtt.plan.ir import steps as s
from qtt.runtime.jobs import Job, QueryRun, ReplayMode, ReplayRecord, Runtime
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
) -> Stored:
    """Run the query alone over its records before the restore point; keep its checkpoint."""
    before = tuple(record for record in records if record.seq < restore.point)
    if not before:
        return Stored(0)
    job = Job(0, query, before, _per_record(before), registry=registry)
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
    if consumed and stored.is_dir():
        written_at = restore.written_at.get(query_id, "")
        seed = partial(copy_checkpoint, stored, written_at=written_at)
    else:
        consumed = 0
    after = [record for record in records if record.seq >= restore.point]
    replayed = (_CONSUMED,) * consumed + tuple(after)
    kept = None
    if restore.keep is not None:
        checkpoint = restore.keep / query_id
        kept = Stored(len(replayed), str(checkpoint.absolute()))
    if restore.keep is None:  # the inputs after the point in one micro-batch; its state read as it ends
        ends = tuple(range(1, consumed + 1)) + ((len(replayed),) if after else ())
        mode = ReplayMode(capture_state=capture_state, final_state=True)
    else:  # a chain of restore points counts a query's micro-batches as its inputs
        ends, mode = _per_record(replayed), ReplayMode(capture_state=capture_state)
    job = Job(0, query, replayed, ends, mode, registry=registry)
    run = runtime.run_jobs([job], str(checkpoint), seed=seed)[0]
    if run.error is not None and seed is not None:
        unreadable = runtime.unreadable_state(checkpoint, run.error)
        if unreadable is not None:
            run.error.message = f"{query_id}: {unreadable}"
    for topic in run.internal_topics:  # a final state (batch -1) is what the whole history left
        topic.records = [record for record in topic.records if record.batch >= consumed or record.batch < 0]
    return run, kept
