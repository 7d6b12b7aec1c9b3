"""The wide operator hands each group to its own slot, with its own names, key and state (no JVM)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from pyspark.sql import Row
from pyspark.sql import types as st

from qtt.runtime.build.names import SEQ, SLOT, WRITE_DELETE, WRITE_STATE, WRITE_UNIT, pooled_state, wide_column
from qtt.runtime.operators.stateful import StatefulOperator
from qtt.runtime.operators.wide import Slot, SlotInput, WideProcessor, pooled_states

_PAIR = st.StructType([st.StructField("COUNT", st.LongType()), st.StructField("NAME", st.StringType())])
_NAME = st.StructType([st.StructField("LABEL", st.StringType())])
_TOTAL = st.StructType([st.StructField("TOTAL", st.LongType())])
_WRITES = [WRITE_STATE, WRITE_UNIT, WRITE_DELETE]
#: each input record's micro-batch, by its SEQ: records 20 and 21 share micro-batch 2
_UNITS = {seq: seq // 10 for seq in range(100)}
_SEQ = wide_column("value", 2)


def _names(*outputs: str) -> list[str]:
    """A wide operator's output columns: the slot, ``outputs``, and the state write's columns."""
    return [SLOT, *outputs, *_WRITES]


class _Value:
    """A value state as the state server keeps it, for one key."""

    def __init__(self) -> None:
        self.row: tuple[Any, ...] | None = None
        self.reads = 0

    def exists(self) -> bool:
        self.reads += 1
        return self.row is not None

    def get(self) -> tuple[Any, ...] | None:
        self.reads += 1
        return self.row

    def update(self, row: tuple[Any, ...]) -> None:
        self.row = row

    def clear(self) -> None:
        self.row = None


class _Handle:
    def __init__(self) -> None:
        self.declared: dict[str, st.StructType] = {}
        self.values: dict[str, _Value] = {}

    def getValueState(self, name: str, schema: st.StructType) -> _Value:
        self.declared[name] = schema
        return self.values.setdefault(name, _Value())


class _Keeper(StatefulOperator):
    """Declares ``states``; per row, stores the row's value in its first state and emits what
    that state held before, with the key."""

    def __init__(self, *states: tuple[str, st.StructType]) -> None:
        self.states = states

    def state_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.states)

    def init(self, handle: Any) -> None:
        self.values = [handle.getValueState(name, schema) for name, schema in self.states]

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        for row in rows:
            assert row.__fields__ == ["K", "V", SEQ]
            before = self.values[0].get()
            self.values[0].update(row["V"])
            yield Row(K=row["K"], OUT=f"{before}|{key}")

    def close(self) -> None:
        pass


def _inputs() -> list[SlotInput]:
    # pooled_states reads only the slot and its processor
    return [
        SlotInput(0, None, (), _Keeper(("Aggregate-Aggregate", _PAIR)), _PAIR),  # type: ignore[arg-type]
        SlotInput(5, None, (), _Keeper(("Join-left", _NAME), ("Join-right", _TOTAL)), _NAME),  # type: ignore[arg-type]
    ]


def test_slots_pool_their_state_variables_by_position_and_their_fields_by_type() -> None:
    states, schemas = pooled_states(_inputs())

    count, name = wide_column("state0", 0), wide_column("state0", 1)
    assert [f.name for f in schemas[0].fields] == [count, name]  # slot 5's LABEL shares slot 0's NAME
    assert [f.name for f in schemas[1].fields] == [wide_column("state1", 0)]
    (aggregate,) = states[0]
    left, right = states[5]
    assert (aggregate.variable, aggregate.fields, aggregate.indices) == (pooled_state(0), (count, name), (0, 1))
    assert (left.name, left.variable, left.fields, left.indices) == ("Join-left", pooled_state(0), (name,), (1,))
    assert (right.name, right.variable, right.indices) == ("Join-right", pooled_state(1), (0,))
    assert left.schema == _NAME


def _wide() -> tuple[WideProcessor, _Handle]:
    # slot 0's V is a pair, slot 5's a label: each has a value column of its own; their keys
    # share the key column, their outputs the output columns
    inputs = _inputs()
    states, schemas = pooled_states(inputs)
    key, pair, label = wide_column("key", 0), wide_column("value", 0), wide_column("value", 1)
    slots = [
        Slot(0, inputs[0].processor, ("K", "V", SEQ), (key, pair, _SEQ), (1,), ("K", "OUT"), (1, 2), states[0], _UNITS),
        Slot(
            5, inputs[1].processor, ("K", "V", SEQ), (key, label, _SEQ), (1,), ("K", "OUT"), (1, 2), states[5], _UNITS
        ),
    ]
    names = _names(wide_column("output", 0), wide_column("output", 1))
    processor, handle = WideProcessor(slots, names, schemas), _Handle()
    processor.init(handle)  # type: ignore[arg-type]
    return processor, handle


def test_the_wide_operator_declares_one_variable_per_position() -> None:
    _, handle = _wide()
    assert list(handle.declared) == [pooled_state(0), pooled_state(1)]


def test_a_slot_stores_and_reads_only_its_own_fields_of_a_pooled_variable() -> None:
    processor, handle = _wide()
    row = {SLOT: 5, wide_column("key", 0): "k1", wide_column("value", 0): None, wide_column("value", 1): ("gold",)}
    row[_SEQ] = 0

    first, _ = list(processor.handleInputRows((5, "k1"), iter([Row(**row)]), None))
    assert handle.values[pooled_state(0)].row == (None, "gold")
    second, _ = list(processor.handleInputRows((5, "k1"), iter([Row(**row)]), None))

    assert first[SLOT] == 5
    assert first[wide_column("output", 0)] == "k1"
    assert first[wide_column("output", 1)] == "None|('k1',)"
    assert second[wide_column("output", 1)] == "('gold',)|('k1',)"


def test_a_slot_state_passes_exists_and_clear_through() -> None:
    processor, handle = _wide()
    row = {SLOT: 0, wide_column("key", 0): "k1", wide_column("value", 0): (3, "x"), wide_column("value", 1): None}
    row[_SEQ] = 0
    list(processor.handleInputRows((0, "k1"), iter([Row(**row)]), None))
    state = processor.slots[0].processor.values[0]  # type: ignore[attr-defined]

    assert state.exists() and state.get() == (3, "x")
    state.clear()
    assert not state.exists()
    assert handle.values[pooled_state(0)].row is None


def test_a_slot_is_started_on_its_first_group_and_only_a_started_slot_is_closed() -> None:
    closed: list[int] = []

    class _Closing(_Keeper):
        def close(self) -> None:
            closed.append(len(self.values))

    inputs = _inputs()
    states, schemas = pooled_states(inputs)
    shape = (("K", "V", SEQ), ("k", "v", "s"), (1,), ("K", "OUT"), (1, 2))
    slots = [
        Slot(0, _Closing(("Aggregate-Aggregate", _PAIR)), *shape, states[0], _UNITS),
        Slot(5, _Closing(("Join-left", _NAME)), *shape, states[5], _UNITS),
    ]
    processor = WideProcessor(slots, _names("a", "b"), schemas)
    processor.init(_Handle())  # type: ignore[arg-type]
    assert not hasattr(slots[0].processor, "values")  # nothing started before its rows
    list(processor.handleInputRows((5, "k1"), iter([Row(**{SLOT: 5, "k": "k1", "v": ("gold",), "s": 0})]), None))
    processor.close()

    assert not hasattr(slots[0].processor, "values")
    assert closed == [1]  # slot 5 only


def test_a_slot_cannot_reach_handle_calls_the_wide_operator_does_not_pass_on() -> None:
    class _Lister(_Keeper):
        def init(self, handle: Any) -> None:
            handle.getListState("x", None)

    lister = Slot(0, _Lister(), ("K", "V", SEQ), ("k", "v", "s"), (1,), ("K", "OUT"), (1, 2), units=_UNITS)
    processor = WideProcessor([lister], _names("a", "b"))
    processor.init(_Handle())  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="getListState"):
        list(processor.handleInputRows((0, "k1"), iter([Row(**{SLOT: 0, "k": "k1", "v": 1, "s": 0})]), None))


def test_a_state_schema_that_is_no_struct_is_refused_when_the_stage_is_laid_out() -> None:
    text = SlotInput(0, None, (), _Keeper(("Aggregate-Aggregate", "COUNT BIGINT")), _PAIR)  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="StructType"):
        pooled_states([text])


def _row(seq: int, value: Any) -> Row:
    return Row(
        **{
            SLOT: 5,
            wide_column("key", 0): "k1",
            wide_column("value", 0): None,
            wide_column("value", 1): value,
            _SEQ: seq,
        }
    )


def test_a_keys_rows_are_handed_over_unit_by_unit_each_followed_by_its_state_writes() -> None:
    processor, _ = _wide()
    calls: list[list[Any]] = []
    keeper = processor.slots[5].processor
    handle_rows = keeper.handleInputRows

    def recorded(key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        mine = list(rows)
        calls.append([row["V"] for row in mine])
        return handle_rows(key, iter(mine), timerValues)

    keeper.handleInputRows = recorded  # type: ignore[method-assign]
    # rows of units 4 and 2, out of order: unit 2 runs first, its two rows in their order
    rows = [_row(40, ("c",)), _row(20, ("a",)), _row(21, ("b",))]
    out = list(processor.handleInputRows((5, "k1"), iter(rows), None))

    assert calls == [[("a",), ("b",)], [("c",)]]
    kinds = [("write" if row[WRITE_STATE] is not None else "output") for row in out]
    assert kinds == ["output", "output", "write", "write", "output", "write"]
    writes = [
        (row[SLOT], row[WRITE_STATE], row[WRITE_UNIT], row[WRITE_DELETE]) for row in out if row[WRITE_STATE] is not None
    ]
    assert writes == [(5, 0, 2, False), (5, 0, 2, False), (5, 0, 4, False)]
    # the outputs saw the state of the unit before: b after a, c after b
    outputs = [row[wide_column("output", 1)] for row in out if row[WRITE_STATE] is None]
    assert outputs == ["None|('k1',)", "('a',)|('k1',)", "('b',)|('k1',)"]


def test_a_cleared_state_is_recorded_as_a_delete() -> None:
    processor, _ = _wide()
    list(processor.handleInputRows((5, "k1"), iter([_row(0, ("a",))]), None))
    processor.slots[5].processor.values[0].clear()  # type: ignore[attr-defined]
    (write,) = processor._written(5, 3)

    assert (write[WRITE_STATE], write[WRITE_UNIT], write[WRITE_DELETE]) == (0, 3, True)


def test_a_row_of_no_input_record_of_its_replay_fails_the_stage_not_guesses() -> None:
    processor, _ = _wide()
    with pytest.raises(ValueError, match=r"slot 5: a row has \S+ 700, which is no input record of its replay"):
        list(processor.handleInputRows((5, "k1"), iter([_row(700, ("a",))]), None))


def test_a_slot_reads_its_state_once_per_call_until_it_writes_it() -> None:
    class _Checker(_Keeper):
        def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
            state = self.values[0]
            seen = [state.get() if state.exists() else None]  # one read: exists shares get's
            state.update(("x",))
            seen.append(state.get())  # written: read back from the store
            seen.append(state.get())
            for row in rows:
                yield Row(K=row["K"], OUT=str(seen))

    processor, handle = _wide()
    processor.slots[5] = replace(processor.slots[5], processor=_Checker(("Join-left", _NAME)))
    processor.init(handle)  # type: ignore[arg-type]
    out = list(processor.handleInputRows((5, "k1"), iter([_row(0, ("a",))]), None))
    list(processor.handleInputRows((5, "k1"), iter([_row(10, ("b",))]), None))

    assert out[0][wide_column("output", 1)] == "[None, ('x',), ('x',)]"
    # each call reads it once before its write and once after it: 2 x 2, where 2 x 4 reached the server before
    assert handle.values[pooled_state(0)].reads == 4
