"""A staged replay places each stage input row in its replay's micro-batch, by SEQ (no JVM)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import types as st

from qtt.errors import ReplayError
from qtt.runtime.jobs import Job, ReplayRecord
from qtt.runtime.names import SEQ, SLOT
from qtt.runtime.staged import _by_batch
from qtt.runtime.stateful import StatefulOperator
from qtt.runtime.wide import SlotInput, wide_layout


def _job(job_id: int, seqs: list[int], ends: list[int]) -> Job:
    records = tuple(
        ReplayRecord(job=job_id, seq=seq, topic="t", partition=0, offset=seq, timestamp=0, key=None, value=None)
        for seq in seqs
    )
    return Job(job_id, SimpleNamespace(query_id=f"Q{job_id}"), records, tuple(ends))  # type: ignore[arg-type]


class _Stateless(StatefulOperator):
    """An operator that declares no state (a stage's layout only reads its declarations)."""

    def init(self, handle: Any) -> None:
        pass

    def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Any:
        return iter(())


def _part(slot: int, schema: st.StructType | None = None, keys: tuple[str, ...] = ("K",)) -> SlotInput:
    schema = schema or st.StructType([st.StructField("K", st.StringType()), st.StructField(SEQ, st.LongType())])
    frame: Any = SimpleNamespace(columns=schema.fieldNames(), schema=schema)
    return SlotInput(slot, frame, keys, _Stateless(), st.StructType())


LAYOUT = wide_layout([_part(0), _part(1)])
SCHEMA = LAYOUT.input_schema
KEY, SEQ_COLUMN = LAYOUT.inputs[0]


def _rows(*rows: tuple[int, str, int]) -> pa.Table:
    """Rows of the two slots' input, as the stage's input query collects them."""
    return pa.table(
        {
            SLOT: pa.array([slot for slot, _, _ in rows], pa.int32()),
            KEY: pa.array([key for _, key, _ in rows], pa.string()),
            SEQ_COLUMN: pa.array([seq for _, _, seq in rows], pa.int64()),
        }
    )


def test_slots_share_the_columns_of_a_data_type_and_keys_have_a_pool_of_their_own() -> None:
    nested = st.ArrayType(st.IntegerType(), containsNull=False)
    first = st.StructType(
        [
            st.StructField("ID", st.LongType()),
            st.StructField("A", st.StringType()),
            st.StructField("B", st.StringType()),
            st.StructField("N", nested),
        ]
    )
    second = st.StructType(
        [
            st.StructField("B2", st.StringType()),
            st.StructField("ID2", st.LongType()),
            st.StructField("N2", st.ArrayType(st.IntegerType())),
        ]
    )
    layout = wide_layout([_part(0, first, keys=("ID",)), _part(1, second, keys=("ID2",))])

    assert layout.inputs[0][0] == layout.inputs[1][1]  # the two BIGINT keys: one key column
    assert layout.keys == (layout.inputs[0][0],)
    assert layout.inputs[0][1] == layout.inputs[1][0]  # each slot's first STRING value column
    assert layout.inputs[0][3] != layout.inputs[1][2]  # nested nullability differs: not shared
    assert len(layout.input_schema.fields) == 1 + 1 + 2 + 2  # slot, one key, two strings, two arrays
    assert [layout.input_schema[name].dataType for name in layout.inputs[0]] == [f.dataType for f in first.fields]
    assert len(set(layout.inputs[0])) == len(first.fields)  # a slot never holds two columns in one


def test_each_row_goes_to_its_replays_micro_batch_and_every_batch_is_there() -> None:
    # job 0: seqs 0, 1, 2 one per batch; job 1: seqs 10, 11 in batch 0, 12 in batch 1
    jobs = {0: _job(0, [0, 1, 2], [1, 2, 3]), 1: _job(1, [10, 11, 12], [2, 3])}
    collected = [(0, _rows((1, "b", 12), (0, "a", 2), (1, "c", 10), (0, "d", 0)))]
    batches = _by_batch(collected, [_part(0), _part(1)], LAYOUT, jobs, batches=4, stage=0)

    assert [t.num_rows for t in batches] == [2, 1, 1, 0]  # batch 3 runs too, with no row
    assert batches[0].column(SLOT).to_pylist() == [1, 0]  # order kept within a batch
    assert batches[0].column(KEY).to_pylist() == ["c", "d"]
    assert batches[1].column(SEQ_COLUMN).to_pylist() == [12]
    assert batches[2].column(SEQ_COLUMN).to_pylist() == [2]


def test_a_stage_with_no_rows_still_runs_every_micro_batch() -> None:
    batches = _by_batch([], [_part(0)], LAYOUT, {0: _job(0, [0, 1], [1, 2])}, batches=2, stage=1)
    assert [t.num_rows for t in batches] == [0, 0]
    assert batches[0].column_names == SCHEMA.fieldNames()


def test_a_row_of_no_input_record_is_an_error_not_a_guess() -> None:
    with pytest.raises(ReplayError, match=r"has \S+ 7, which is no input record of it"):
        _by_batch([(0, _rows((0, "a", 7)))], [_part(0)], LAYOUT, {0: _job(0, [0], [1])}, batches=1, stage=0)
