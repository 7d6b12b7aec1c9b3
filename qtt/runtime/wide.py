"""The wide operator: one ``transformWithState`` that runs a stage's operators of many replays.

Each replay's operator is a *slot*. The wide operator's input holds every slot's columns apart
(``slot_input(slot, i)``), its grouping key is the slot number followed by every slot's key
columns, and each group is handed to its own slot's processor with the rows, the key and the
state variables it would see alone: its rows under their own names and its key columns only.
Slots that declare a state variable of the same name and schema share one variable
(:func:`~qtt.runtime.names.shared_state`), their rows kept apart by the slot column of the
key, so a stage's state is read back in a Spark job per variable, not per slot; neither rows
nor state ever cross slots. Its output holds every slot's output columns apart
(``slot_output(slot, i)``).

A staged replay (:mod:`qtt.runtime.staged`) collects a stage's input with :func:`wide_input`
and runs :func:`wide_operator` over it, relayed micro-batch by micro-batch.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql import types as st
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from qtt.runtime.names import SLOT, col, shared_state, slot_input, slot_output

if TYPE_CHECKING:
    from qtt.runtime.stateful import StatefulOperator


@dataclass(frozen=True)
class Slot:
    """One replay's operator in a wide operator, picklable for the Python workers.

    ``keys`` are the positions of its key columns in the wide grouping key; ``offset`` is where
    its output columns start in the wide output (after the slot column).
    """

    slot: int
    processor: StatefulOperator
    inputs: tuple[str, ...]
    keys: tuple[int, ...]
    outputs: tuple[str, ...]
    offset: int


class _SlotHandle:
    """A slot's view of the wide operator's handle: its value states, shared with every slot that
    declares the same name and schema (:func:`~qtt.runtime.names.shared_state`)."""

    def __init__(self, handle: StatefulProcessorHandle, states: dict[str, Any]) -> None:
        self._handle = handle
        self._states = states

    def getValueState(self, name: str, schema: Any, *args: Any, **kwargs: Any) -> Any:
        variable = shared_state(name, _schema_text(schema))
        if variable not in self._states:
            self._states[variable] = self._handle.getValueState(variable, schema, *args, **kwargs)
        return self._states[variable]

    def __getattr__(self, name: str) -> Any:
        raise NotImplementedError(f"a slot of a wide operator cannot call {name}: add it to qtt.runtime.wide")


def _schema_text(schema: Any) -> str:
    return schema.json() if isinstance(schema, st.StructType) else str(schema)


class _Declared:
    """Records the value states a processor declares."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def getValueState(self, name: str, schema: Any, *args: Any, **kwargs: Any) -> None:
        self.names[name] = shared_state(name, _schema_text(schema))

    def __getattr__(self, name: str) -> Any:
        raise NotImplementedError(f"a slot of a wide operator cannot call {name}: add it to qtt.runtime.wide")


def declared_states(processor: StatefulOperator) -> dict[str, str]:
    """Each state variable ``processor`` declares, and the wide operator's variable holding it
    (``init`` runs on a copy, here on the driver, with a handle that only records)."""
    declared = _Declared()
    copy.deepcopy(processor).init(declared)  # type: ignore[arg-type]
    return declared.names


class WideProcessor(StatefulProcessor):
    """Hands each group to its slot's processor; see the module's docstring."""

    def __init__(self, slots: Sequence[Slot], names: Sequence[str]) -> None:
        self.slots = {slot.slot: slot for slot in slots}
        self.names = tuple(names)

    def init(self, handle: StatefulProcessorHandle) -> None:
        states: dict[str, Any] = {}
        for slot in self.slots.values():
            slot.processor.init(_SlotHandle(handle, states))  # type: ignore[arg-type]

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        slot = self.slots[key[0]]
        wide_names = [slot_input(slot.slot, index) for index in range(len(slot.inputs))]
        own = [Row(**{name: row[wide] for name, wide in zip(slot.inputs, wide_names, strict=True)}) for row in rows]
        own_key = tuple(key[position] for position in slot.keys)
        for out in slot.processor.handleInputRows(own_key, iter(own), timerValues):
            values: list[Any] = [None] * len(self.names)
            values[0] = slot.slot
            for index, name in enumerate(slot.outputs):
                values[1 + slot.offset + index] = out[name]
            yield Row(**dict(zip(self.names, values, strict=True)))

    def close(self) -> None:
        for slot in self.slots.values():
            slot.processor.close()


@dataclass(frozen=True)
class SlotInput:
    """What one replay's operator was built with: input, key columns, processor, output."""

    slot: int
    df: DataFrame
    keys: tuple[str, ...]
    processor: StatefulOperator
    output: st.StructType


def wide_input(inputs: Sequence[SlotInput]) -> DataFrame:
    """Every slot's input rows in one DataFrame: the slot column, then each slot's columns apart."""
    parts = [
        part.df.select(
            F.lit(part.slot).alias(SLOT),
            *[col(name).alias(slot_input(part.slot, index)) for index, name in enumerate(part.df.columns)],
        )
        for part in inputs
    ]
    union = parts[0]
    for part_df in parts[1:]:
        union = union.unionByName(part_df, allowMissingColumns=True)
    return union


def wide_operator(rows: DataFrame, inputs: Sequence[SlotInput]) -> DataFrame:
    """One ``transformWithState`` over ``rows``, shaped as :func:`wide_input` (see the module's docstring)."""
    key_columns = [SLOT]
    slots: list[Slot] = []
    output_fields = [st.StructField(SLOT, st.IntegerType())]
    for part in inputs:
        positions = []
        for key in part.keys:
            positions.append(len(key_columns))
            key_columns.append(slot_input(part.slot, part.df.columns.index(key)))
        slots.append(
            Slot(
                slot=part.slot,
                processor=part.processor,
                inputs=tuple(part.df.columns),
                keys=tuple(positions),
                outputs=tuple(f.name for f in part.output.fields),
                offset=len(output_fields) - 1,
            )
        )
        output_fields += [
            st.StructField(slot_output(part.slot, index), f.dataType, nullable=True)
            for index, f in enumerate(part.output.fields)
        ]
    output = st.StructType(output_fields)
    return rows.groupBy(*[col(k) for k in key_columns]).transformWithState(
        statefulProcessor=WideProcessor(slots, [f.name for f in output_fields]),
        outputStructType=output,
        outputMode="Update",
        timeMode="None",
    )
