"""Packing a stage's micro-batches (qtt.runtime.packing): pure Python, no Spark."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest
from pyspark.sql import Row
from pyspark.sql import types as st

from qtt.errors import ReplayError
from qtt.runtime.names import SLOT
from qtt.runtime.packing import Packing, key_text, pack, packable


def _batch(*rows: tuple[int, str, int]) -> pa.Table:
    """Rows of (slot, key, seq)."""
    return pa.table(
        {
            SLOT: pa.array([r[0] for r in rows], pa.int32()),
            "k": pa.array([r[1] for r in rows], pa.string()),
            "seq": pa.array([r[2] for r in rows], pa.int64()),
        }
    )


def _seqs(tables: list[pa.Table]) -> list[list[int]]:
    return [table["seq"].to_pylist() for table in tables]


def test_a_slots_micro_batches_share_one_unless_they_share_a_key() -> None:
    # one slot, keys A B A C A: A's three micro-batches run apart, B and C beside A's first
    batches = [_batch((0, "A", 0)), _batch((0, "B", 1)), _batch((0, "A", 2)), _batch((0, "C", 3)), _batch((0, "A", 4))]
    packed, packing = pack(batches, [SLOT, "k"])
    assert _seqs(packed) == [[0, 1, 3], [2], [4]]
    assert packing.batch_of(Row(**{SLOT: 0, "k": "C"}), 0) == 3
    assert packing.batch_of(Row(**{SLOT: 0, "k": "A"}), 2) == 4


def test_slots_never_wait_for_each_other() -> None:
    batches = [_batch((0, "A", 0), (1, "A", 0)), _batch((0, "A", 1), (1, "B", 1))]
    packed, packing = pack(batches, [SLOT, "k"])
    assert _seqs(packed) == [[0, 0, 1], [1]]
    assert packing.batch_of(Row(**{SLOT: 1, "k": "B"}), 0) == 1
    assert packing.batch_of(Row(**{SLOT: 0, "k": "A"}), 1) == 1


def test_a_micro_batch_with_two_keys_waits_for_both() -> None:
    # a table update retracts from one key and adds to another in one micro-batch
    batches = [_batch((0, "A", 0)), _batch((0, "B", 1)), _batch((0, "B", 2)), _batch((0, "A", 3), (0, "C", 3))]
    packed, _ = pack(batches, [SLOT, "k"])
    assert _seqs(packed) == [[0, 1], [2, 3, 3]]


def test_empty_micro_batches_are_dropped_but_a_stage_runs_at_least_one() -> None:
    empty = _batch((0, "A", 0)).slice(0, 0)
    packed, _ = pack([empty, _batch((0, "A", 1)), empty], [SLOT, "k"])
    assert _seqs(packed) == [[1]]
    packed, packing = pack([empty, empty], [SLOT, "k"])
    assert _seqs(packed) == [[]]
    assert packing.own == ()


def test_a_change_whose_key_no_row_had_is_an_error_not_a_guess() -> None:
    _, packing = pack([_batch((0, "A", 0))], [SLOT, "k"])
    with pytest.raises(ReplayError, match="packed micro-batch 0"):
        packing.batch_of(Row(**{SLOT: 0, "k": "Z"}), 0)


def test_an_unpacked_stage_keeps_its_batch_numbers() -> None:
    assert Packing(own=None).batch_of(Row(**{SLOT: 0, "k": "A"}), 7) == 7


def test_arrow_and_spark_values_of_one_key_have_one_text() -> None:
    arrow = pa.table(
        {
            "s": pa.array([{"a": 1, "b": "x"}], pa.struct([("a", pa.int32()), ("b", pa.string())])),
            "d": pa.array([decimal.Decimal("1.50")], pa.decimal128(5, 2)),
            "day": pa.array([datetime.date(2024, 2, 29)], pa.date32()),
            "raw": pa.array([b"\x00\x01"], pa.binary()),
            "l": pa.array([[1, 2]], pa.list_(pa.int64())),
        }
    )
    from_arrow = [arrow[c].to_pylist()[0] for c in arrow.column_names]
    from_spark = [Row(a=1, b="x"), decimal.Decimal("1.50"), datetime.date(2024, 2, 29), bytearray(b"\x00\x01"), [1, 2]]
    assert key_text(from_arrow) == key_text(from_spark)


@pytest.mark.parametrize(
    ("data_type", "ok"),
    [
        (st.LongType(), True),
        (st.StructType([st.StructField("a", st.StringType()), st.StructField("b", st.DateType())]), True),
        (st.ArrayType(st.DecimalType(5, 2)), True),
        (st.DoubleType(), False),  # Spark turns -0.0 into 0.0 in a grouping key
        (st.TimestampType(), False),  # read back in the driver's zone
        (st.StructType([st.StructField("a", st.FloatType())]), False),
        (st.MapType(st.StringType(), st.IntegerType()), False),
    ],
)
def test_only_keys_read_back_exactly_are_packed(data_type: st.DataType, ok: bool) -> None:
    schema = st.StructType([st.StructField(SLOT, st.IntegerType()), st.StructField("k", data_type)])
    assert packable(schema, [SLOT, "k"]) is ok
