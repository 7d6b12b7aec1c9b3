"""A staged replay places each stage input row in its replay's micro-batch, by SEQ (no JVM)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import types as st

from qtt.errors import ReplayError
from qtt.runtime.jobs import Job, ReplayRecord
from qtt.runtime.names import SEQ, SLOT, slot_input
from qtt.runtime.staged import _by_batch
from qtt.runtime.wide import SlotInput


def _job(job_id: int, seqs: list[int], ends: list[int]) -> Job:
    records = tuple(
        ReplayRecord(job=job_id, seq=seq, topic="t", partition=0, offset=seq, timestamp=0, key=None, value=None)
        for seq in seqs
    )
    return Job(job_id, SimpleNamespace(query_id=f"Q{job_id}"), records, tuple(ends))  # type: ignore[arg-type]


def _part(slot: int) -> SlotInput:
    frame: Any = SimpleNamespace(columns=["K", SEQ])
    return SlotInput(slot, frame, ("K",), None, st.StructType())  # type: ignore[arg-type]


SCHEMA = st.StructType(
    [
        st.StructField(SLOT, st.IntegerType()),
        st.StructField(slot_input(0, 0), st.StringType()),
        st.StructField(slot_input(0, 1), st.LongType()),
        st.StructField(slot_input(1, 0), st.StringType()),
        st.StructField(slot_input(1, 1), st.LongType()),
    ]
)


def _rows(*rows: tuple[int, str, int]) -> pa.Table:
    """Rows of the two slots' input, as the stage's input query collects them."""
    columns: dict[str, list[Any]] = {f.name: [] for f in SCHEMA.fields}
    for slot, key, seq in rows:
        columns[SLOT].append(slot)
        for other in (0, 1):
            columns[slot_input(other, 0)].append(key if other == slot else None)
            columns[slot_input(other, 1)].append(seq if other == slot else None)
    types = [pa.int32(), pa.string(), pa.int64(), pa.string(), pa.int64()]
    arrays = [pa.array(values, type_) for values, type_ in zip(columns.values(), types, strict=True)]
    return pa.table(dict(zip(columns, arrays, strict=True)))


def test_each_row_goes_to_its_replays_micro_batch_and_every_batch_is_there() -> None:
    # job 0: seqs 0, 1, 2 one per batch; job 1: seqs 10, 11 in batch 0, 12 in batch 1
    jobs = {0: _job(0, [0, 1, 2], [1, 2, 3]), 1: _job(1, [10, 11, 12], [2, 3])}
    collected = [(0, _rows((1, "b", 12), (0, "a", 2), (1, "c", 10), (0, "d", 0)))]
    batches = _by_batch(collected, [_part(0), _part(1)], SCHEMA, jobs, batches=4, stage=0)

    assert [t.num_rows for t in batches] == [2, 1, 1, 0]  # batch 3 runs too, with no row
    assert batches[0].column(slot_input(0, 0)).to_pylist() == [None, "d"]  # order kept within a batch
    assert batches[0].column(slot_input(1, 1)).to_pylist() == [10, None]
    assert batches[1].column(slot_input(1, 1)).to_pylist() == [12]
    assert batches[2].column(slot_input(0, 1)).to_pylist() == [2]


def test_a_stage_with_no_rows_still_runs_every_micro_batch() -> None:
    batches = _by_batch([], [_part(0)], SCHEMA, {0: _job(0, [0, 1], [1, 2])}, batches=2, stage=1)
    assert [t.num_rows for t in batches] == [0, 0]
    assert batches[0].column_names == SCHEMA.fieldNames()


def test_a_row_of_no_input_record_is_an_error_not_a_guess() -> None:
    with pytest.raises(ReplayError, match=r"has \S+ 7, which is no input record of it"):
        _by_batch([(0, _rows((0, "a", 7)))], [_part(0)], SCHEMA, {0: _job(0, [0], [1])}, batches=1, stage=0)
