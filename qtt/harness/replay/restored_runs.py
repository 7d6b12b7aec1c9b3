"""Runs at a restore point: capture a query's checkpoint there, or resume a query from one.

A stateful query of an item with a :class:`~qtt.harness.replay.driver.Restore` runs alone: a
checkpoint belongs to one query. Capturing runs it over its records before the point and
keeps the checkpoint in ``folder/<queryId>``; resuming starts it from that checkpoint and feeds
it the records from the point on. With ``Restore.keep``, a resumed query's checkpoint is kept
there too, so that a later restore point can resume from it in turn (a chain of upgrades).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from qtt.runtime.jobs import Job, QueryRun, ReplayRecord
from qtt.runtime.spark.checkpoint_files import copy_checkpoint, unreadable_state

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from qtt.harness.replay.driver import _Todo

#: stands in for a record a restored query consumed before the restore point (never read again)
_CONSUMED = ReplayRecord(job=0, seq=-1, topic="", partition=0, offset=0, timestamp=0, key=None, value=None)


def _per_record(records: Sequence[ReplayRecord]) -> tuple[int, ...]:
    """One micro-batch per record, as every stateful query runs."""
    return tuple(range(1, len(records) + 1))


def capture(session: SparkSession, entry: _Todo) -> None:
    """Run the query alone over its records before the restore point; keep its checkpoint."""
    from qtt.runtime.execute.executor import run_jobs

    restore = entry.state.item.restore
    assert restore is not None
    before = tuple(record for record in entry.records if record.seq < restore.point)
    entry.state.result.consumed[entry.query.query_id] = len(before)
    if not before:
        return
    job = Job(0, entry.query, before, _per_record(before), registry=entry.state.registry)
    checkpoint = restore.folder / entry.query.query_id
    entry.state.result.written_at[entry.query.query_id] = str(checkpoint.absolute())
    run = run_jobs(session, [job], str(checkpoint))[0]
    if run.error is not None:
        entry.state.error = run.error


def run_restored(session: SparkSession, entry: _Todo, checkpoint: Path, capture_state: bool) -> QueryRun:
    """Start the query from its stored checkpoint and feed it the records after the restore point.

    Spark resumes from the checkpoint's offsets, so the records it consumed are never read
    again; only their count matters. Its internal topics keep the changes made after the point.
    The run's checkpoint is written to ``checkpoint``, or kept in ``Restore.keep/<queryId>``.
    """
    from qtt.runtime.execute.executor import run_jobs

    restore = entry.state.item.restore
    assert restore is not None
    query_id = entry.query.query_id
    consumed = restore.consumed.get(query_id, 0)
    stored = restore.folder / query_id
    seed = None
    if consumed and stored.is_dir():
        written_at = restore.written_at.get(query_id, "")
        seed = partial(copy_checkpoint, stored, written_at=written_at)
    else:
        consumed = 0
    after = [record for record in entry.records if record.seq >= restore.point]
    records = (_CONSUMED,) * consumed + tuple(after)
    if restore.keep is not None:
        checkpoint = restore.keep / query_id
        entry.state.result.consumed[query_id] = len(records)
        entry.state.result.written_at[query_id] = str(checkpoint.absolute())
    job = Job(0, entry.query, records, _per_record(records), capture_state, registry=entry.state.registry)
    run = run_jobs(session, [job], str(checkpoint), seed=seed)[0]
    if run.error is not None and seed is not None:
        unreadable = unreadable_state(session, checkpoint, run.error)
        if unreadable is not None:
            run.error.message = f"{query_id}: {unreadable}"
    for topic in run.internal_topics:
        topic.records = [record for record in topic.records if record.batch >= consumed]
    return run
