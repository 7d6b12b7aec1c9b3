"""The start gate of a swap-in-place upgrade, driven without Spark: what it drops, holds and lets through."""

from __future__ import annotations

from pyspark.sql import Row
from pyspark.sql import types as st

from qtt.runtime.build.names import ORDER, ROWPARTITION, SEQ
from qtt.runtime.operators.gates import CONTROL_PARTITION, CONTROL_PARTITIONS, GateSpec, StartGate
from tests.runtime.fake_state import Handle

ROWS = st.StructType(
    [
        st.StructField(SEQ, st.LongType()),
        st.StructField(ROWPARTITION, st.IntegerType()),
        st.StructField(ORDER, st.IntegerType()),
        st.StructField("N", st.MapType(st.StringType(), st.IntegerType())),
    ]
)


def _data(seq: int, partition: int) -> Row:
    return Row(**{SEQ: seq, ROWPARTITION: partition, ORDER: 0, "N": {"n": seq}, CONTROL_PARTITION: None})


def _control(seq: int, partition: int) -> Row:
    fields = {SEQ: seq, ROWPARTITION: None, ORDER: None, "N": None}
    return Row(**fields, **{CONTROL_PARTITION: partition, CONTROL_PARTITIONS: 2})


def _through(batches: list[list[Row]]) -> list[list[int]]:
    """What the gate lets through in each micro-batch (by SEQ), its state kept in between."""
    gate, handle = StartGate(GateSpec("StartGate", ROWS)), Handle()
    out = []
    for batch in batches:
        gate.init(handle)  # type: ignore[arg-type]
        out.append([row[SEQ] for row in gate.handleInputRows(None, iter(batch), None)])
    return out


def test_rows_before_their_partitions_control_event_are_dropped_and_after_it_held_until_all_arrived() -> None:
    batches = [[_data(0, 0)], [_control(1, 0)], [_data(2, 1)], [_data(3, 0)], [_control(4, 1)], [_data(5, 1)]]
    # 2 is partition 1's before its control event: the old query's; 3 is held until 4 opens the gate
    assert _through(batches) == [[], [], [], [], [3], [5]]


def test_a_control_event_counts_before_the_data_of_the_same_micro_batch() -> None:
    batch = [_data(3, 0), _control(1, 1), _data(2, 1), _control(0, 0)]
    assert _through([batch]) == [[2, 3]]


def test_a_held_row_keeps_its_values_through_the_state_store_form() -> None:
    gate, handle = StartGate(GateSpec("StartGate", ROWS)), Handle()
    gate.init(handle)  # type: ignore[arg-type]
    assert list(gate.handleInputRows(None, iter([_control(0, 0), _data(1, 0)]), None)) == []
    gate.init(handle)  # type: ignore[arg-type]
    (released,) = list(gate.handleInputRows(None, iter([_control(2, 1)]), None))
    assert released == _data(1, 0)[:4] and released["N"] == {"n": 1}
    assert not handle.states["StartGate-held"].exists()
