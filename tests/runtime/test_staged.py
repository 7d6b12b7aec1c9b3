"""A staged replay: the stage layout, and each state change given the unit of the write it was (no JVM)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pyspark.sql import Row
from pyspark.sql import types as st

from qtt.errors import ReplayError
from qtt.runtime.build.names import SEQ, SLOT
from qtt.runtime.execute.internal_topics import ChangeFeed
from qtt.runtime.execute.staged import _units
from qtt.runtime.operators.stateful import StatefulOperator
from qtt.runtime.operators.wide import SlotInput, SlotState, wide_layout


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
