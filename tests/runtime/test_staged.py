"""A staged replay gives each stage input row its replay's micro-batch as its unit, by SEQ (no JVM)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import Row
from pyspark.sql import types as st

from qtt.errors import ReplayError
from qtt.runtime.internal_topics import ChangeFeed
from qtt.runtime.jobs import Job, ReplayRecord
from qtt.runtime.names import SEQ, SLOT, UNIT
from qtt.runtime.staged import _in_units, _units
from qtt.runtime.stateful import StatefulOperator
from qtt.runtime.wide import SlotInput, SlotState, wide_layout


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


def test_each_row_gets_its_replays_micro_batch_as_its_unit_and_rows_are_ordered_by_unit() -> None:
    # job 0: seqs 0, 1, 2 one per batch; job 1: seqs 10, 11 in batch 0, 12 in batch 1
    jobs = {0: _job(0, [0, 1, 2], [1, 2, 3]), 1: _job(1, [10, 11, 12], [2, 3])}
    collected = [(0, _rows((1, "b", 12), (0, "a", 2), (1, "c", 10), (0, "d", 0)))]
    table = _in_units(collected, [_part(0), _part(1)], LAYOUT, jobs, stage=0)

    assert table.column(UNIT).to_pylist() == [0, 0, 1, 2]
    assert table.column(SLOT).to_pylist() == [1, 0, 1, 0]  # order kept within a unit
    assert table.column(KEY).to_pylist() == ["c", "d", "b", "a"]
    assert table.schema.names == LAYOUT.operator_schema.fieldNames()


def test_a_stage_with_no_rows_is_an_empty_table_of_the_operators_input() -> None:
    table = _in_units([], [_part(0)], LAYOUT, {0: _job(0, [0, 1], [1, 2])}, stage=1)
    assert table.num_rows == 0
    assert table.column_names == LAYOUT.operator_schema.fieldNames()


def test_a_row_of_no_input_record_is_an_error_not_a_guess() -> None:
    with pytest.raises(ReplayError, match=r"has \S+ 7, which is no input record of it"):
        _in_units([(0, _rows((0, "a", 7)))], [_part(0)], LAYOUT, {0: _job(0, [0], [1])}, stage=0)


_STATE = SlotState("Aggregate-Aggregate", st.StructType(), 0, (), ())
_KEY_TYPE = st.StructType([st.StructField(SLOT, st.IntegerType())])


def _feed(*changes: tuple[int, str]) -> ChangeFeed:
    rows = [
        Row(batch_id=0, change_type=kind, key=Row(**{SLOT: slot}), value=None, partition_id=0) for slot, kind in changes
    ]
    return ChangeFeed(rows, _KEY_TYPE, st.StructType())


def test_each_change_of_the_feed_takes_the_unit_of_the_write_it_was() -> None:
    feed = _feed((3, "update"), (5, "delete"), (3, "update"))
    assert _units(feed, [(3, 0, False), (5, 4, True), (3, 2, False)], 0, _STATE) == [0, 4, 2]


@pytest.mark.parametrize(
    ("writes", "message"),
    [
        ([(3, 0, False)], "the change feed has 2 change"),
        ([(3, 0, False), (3, 1, False)], "change 1 of the change feed"),
        ([(3, 0, True), (5, 1, True)], "change 0 of the change feed"),
    ],
)
def test_a_feed_that_is_not_the_recorded_writes_is_an_error(writes: list[tuple[int, int, bool]], message: str) -> None:
    with pytest.raises(ReplayError, match=message):
        _units(_feed((3, "update"), (5, "delete")), writes, 0, _STATE)
