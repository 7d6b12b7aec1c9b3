"""The wide operator hands each group to its own slot, with its own names, key and state (no JVM)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import Row

from qtt.runtime.names import SLOT, shared_state, shared_state_name, wide_column
from qtt.runtime.stateful import StatefulOperator
from qtt.runtime.wide import Slot, WideProcessor, declared_states


class _Handle:
    def __init__(self) -> None:
        self.declared: list[str] = []

    def getValueState(self, name: str, schema: Any) -> str:
        self.declared.append(name)
        return f"state {name}"


class _Echo(StatefulOperator):
    """Emits, per row, the state it was given, the key and the row's own value."""

    def __init__(self, state: str) -> None:
        self.state_name = state

    def state_names(self) -> tuple[str, ...]:
        return (self.state_name,)

    def init(self, handle: Any) -> None:
        self.state = handle.getValueState(self.state_name, None)

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        for row in rows:
            assert row.__fields__ == ["K", "V"]
            yield Row(K=row["K"], OUT=f"{self.state}|{key}|{row['V']}")

    def close(self) -> None:
        pass


def _wide() -> tuple[WideProcessor, _Handle]:
    # slot 0's V is a string, slot 5's a number: each has a value column of its own; their keys
    # share the key column, their outputs the output columns
    key, string, number = wide_column("key", 0), wide_column("value", 0), wide_column("value", 1)
    slots = [
        Slot(
            slot=0,
            processor=_Echo("Aggregate-Aggregate"),
            inputs=("K", "V"),
            columns=(key, string),
            keys=(1,),
            outputs=("K", "OUT"),
            positions=(1, 2),
        ),
        Slot(
            slot=5,
            processor=_Echo("Aggregate-Aggregate"),
            inputs=("K", "V"),
            columns=(key, number),
            keys=(1,),
            outputs=("K", "OUT"),
            positions=(1, 2),
        ),
    ]
    names = [SLOT, wide_column("output", 0), wide_column("output", 1)]
    processor, handle = WideProcessor(slots, names), _Handle()
    processor.init(handle)  # type: ignore[arg-type]
    return processor, handle


def test_slots_share_a_state_variable_of_the_same_name_and_schema() -> None:
    processor, handle = _wide()
    assert handle.declared == [shared_state("Aggregate-Aggregate", "None")]  # declared once
    assert shared_state_name(handle.declared[0]) == "Aggregate-Aggregate"
    assert declared_states(processor.slots[0].processor) == {"Aggregate-Aggregate": handle.declared[0]}


def test_a_state_variable_of_another_schema_is_another_variable() -> None:
    assert shared_state("Aggregate-Aggregate", "STRUCT<a: INT>") != shared_state("Aggregate-Aggregate", "None")


def test_a_group_reaches_its_own_slot_with_its_own_names_and_key() -> None:
    processor, _ = _wide()
    columns = {SLOT: 5, wide_column("key", 0): "k1", wide_column("value", 0): None, wide_column("value", 1): 42}
    (out,) = list(processor.handleInputRows((5, "k1"), iter([Row(**columns)]), None))

    assert out[SLOT] == 5
    assert out[wide_column("output", 0)] == "k1"
    assert out[wide_column("output", 1)] == f"state {shared_state('Aggregate-Aggregate', 'None')}|('k1',)|42"


def test_a_slot_cannot_reach_handle_calls_the_wide_operator_does_not_pass_on() -> None:
    class _Lister(_Echo):
        def init(self, handle: Any) -> None:
            handle.getListState("x", None)

    lister = Slot(0, _Lister("s"), ("K", "V"), ("k", "v"), (1,), ("K", "OUT"), (1, 2))
    processor = WideProcessor([lister], [SLOT, "a", "b"])
    with pytest.raises(NotImplementedError, match="getListState"):
        processor.init(_Handle())  # type: ignore[arg-type]
