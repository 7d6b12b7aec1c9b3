"""The wide operator: one ``transformWithState`` that runs a stage's operators of many replays.

Each replay's operator is a *slot*. The wide operator's input holds every slot's columns, laid
out by :class:`WideLayout`: a row's slot column says whose it is, and slots share columns by
data type (a slot's third BIGINT column is the same physical column as another slot's third
BIGINT column), so the width grows with the variety of types, not with the number of slots;
Spark generates code per column in every task, and 32 slots laid side by side made 348 columns.
Key columns have a pool of their own: the grouping key is the slot column followed by the key
pool, which holds each row's own key and nulls. Each group is handed to its own slot's processor
with the rows, the key and the state variables it would see alone: its rows under their own
names and its key columns only; a slot's processor is started (``init``) on its first group
of a micro-batch, not for micro-batches where it has no rows.
State variables are pooled the same way: a slot's *n*-th state variable is a view
(:class:`PooledValueState`) of the wide operator's *n*-th variable
(:func:`~qtt.runtime.build.names.pooled_state`), whose fields are pooled by data type as the input
columns are, its rows kept apart by the slot column of the key. A stage then declares as many
state variables as its busiest slot, not one per slot's schema: every micro-batch declares
each variable through the state server and sets up its encoder on the first update, tens of
ms a variable, and the state is read back in a Spark job per variable. Neither rows nor state
ever cross slots. The output is laid out the same way, from a pool of its own.

A stage runs in one micro-batch. Each input row belongs to a *unit*: the replay's own
micro-batch of the input record that caused it, found by the row's ``SEQ`` (:attr:`Slot.units`).
A key's rows are handed to its slot's processor unit by unit, in order, one ``handleInputRows``
call each, so the processor sees what it would see micro-batch by micro-batch (a processor keeps
nothing between calls but its state, sees only its own key's, and orders a call's rows itself,
by ``SEQ`` and ``ORDER``). State writes are recorded as they happen: after each unit, the
operator writes one row per state write (:data:`~qtt.runtime.build.names.WRITE_STATE`,
``WRITE_UNIT``, ``WRITE_DELETE``), in write order, which is the order of the state store's
change log; the read-back gives each change its unit from them
(:func:`qtt.runtime.execute.staged.read_topics`).

A staged replay (:mod:`qtt.runtime.execute.staged`) collects a stage's input with :func:`wide_input`
and runs :func:`wide_operator` over them, in one query and one micro-batch.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql import types as st
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from qtt.runtime.build.names import SEQ, SLOT, WRITE_DELETE, WRITE_STATE, WRITE_UNIT, col, pooled_state, wide_column
from qtt.runtime.spark.frames import in_threads, union_all
from qtt.runtime.spark.workers.worker_memory import freeze_once

if TYPE_CHECKING:
    from qtt.runtime.operators.stateful import StatefulOperator


@dataclass(frozen=True)
class SlotState:
    """One of a slot's state variables, in the wide operator's variable of its position."""

    #: as the slot's processor declares it
    name: str
    schema: st.StructType
    #: which of the wide operator's variables holds it, and where its fields are in that
    #: variable's rows (the pooled field names, and their indices)
    position: int
    fields: tuple[str, ...]
    indices: tuple[int, ...]

    @property
    def variable(self) -> str:
        return pooled_state(self.position)


@dataclass(frozen=True)
class Slot:
    """One replay's operator in a wide operator, picklable for the Python workers.

    ``inputs`` are its input columns' own names and ``columns`` the wide columns holding them;
    ``keys`` are the positions of its key columns in the wide grouping key; ``outputs`` are its
    output columns' own names and ``positions`` where each goes in the wide output row;
    ``states`` are its state variables; ``units`` gives each of its replay's input records
    (by ``SEQ``) the replay's micro-batch that holds it.
    """

    slot: int
    processor: StatefulOperator
    inputs: tuple[str, ...]
    columns: tuple[str, ...]
    keys: tuple[int, ...]
    outputs: tuple[str, ...]
    positions: tuple[int, ...]
    states: tuple[SlotState, ...] = ()
    units: Mapping[int, int] = field(default_factory=dict)

    def unit_of(self, row: Row) -> int:
        """The unit of one of the slot's rows (under its own names)."""
        unit = self.units.get(row[SEQ])
        if unit is None:
            raise ValueError(f"slot {self.slot}: a row has {SEQ} {row[SEQ]}, which is no input record of its replay")
        return unit


class PooledValueState:
    """A slot's value state: its fields of a row of the wide operator's pooled variable.

    A key (slot column included) belongs to one slot, so the row exists exactly when the
    slot's state does; the other slots' fields are null in it. Each write is appended to the
    journal's writes as ``(position, delete)``. Within one call of the slot's processor, the
    row is read from the state server once until the processor writes it: ``exists()`` and the
    ``get()`` that follows share one round trip (the store's own answer, read back after a
    write, is what a later read returns, as :meth:`StatefulOperator.through_store` needs).
    """

    def __init__(self, pooled: Any, indices: Sequence[int], width: int, position: int, journal: _Journal) -> None:
        self._pooled = pooled
        self._indices = tuple(indices)
        self._width = width
        self._position = position
        self._journal = journal
        self._read_in = -1  # the processor call the row was read in
        self._row: Any = None

    def _stored(self) -> Any:
        if self._read_in != self._journal.call:
            self._row = self._pooled.get()
            self._read_in = self._journal.call
        return self._row

    def exists(self) -> bool:
        return self._stored() is not None

    def get(self) -> tuple[Any, ...] | None:
        row = self._stored()
        return None if row is None else tuple(row[i] for i in self._indices)

    def update(self, value: Sequence[Any]) -> None:
        row: list[Any] = [None] * self._width
        for index, field_value in zip(self._indices, value, strict=True):
            row[index] = field_value
        self._pooled.update(tuple(row))
        self._read_in = -1
        self._journal.writes.append((self._position, False))

    def clear(self) -> None:
        self._pooled.clear()
        self._read_in = -1
        self._journal.writes.append((self._position, True))


class _Journal:
    """What a wide operator's slots do in a micro-batch: which call of a slot's processor runs
    (each unit of each key is one), and the state writes not yet written as rows."""

    def __init__(self) -> None:
        self.call = 0
        self.writes: list[tuple[int, bool]] = []


class _SlotHandle:
    """A slot's view of the wide operator's handle: its value states, each a view of a pooled
    variable (:class:`PooledValueState`)."""

    def __init__(
        self,
        states: Sequence[SlotState],
        pooled: Sequence[Any],
        widths: Sequence[int],
        journal: _Journal,
    ) -> None:
        self._states = {state.name: state for state in states}
        self._pooled = pooled
        self._widths = widths
        self._journal = journal

    def getValueState(self, name: str, schema: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            raise NotImplementedError("a slot of a wide operator cannot pass value state options (a TTL, say)")
        state = self._states[name]
        position = state.position
        return PooledValueState(self._pooled[position], state.indices, self._widths[position], position, self._journal)

    def __getattr__(self, name: str) -> Any:
        raise NotImplementedError(f"a slot of a wide operator cannot call {name}: add it to qtt.runtime.operators.wide")


class _Declared:
    """Records the value states a processor declares, in order."""

    def __init__(self) -> None:
        self.states: list[tuple[str, st.StructType]] = []

    def getValueState(self, name: str, schema: Any, *args: Any, **kwargs: Any) -> None:
        if not isinstance(schema, st.StructType):
            raise NotImplementedError(f"state variable {name} of a wide operator's slot needs a StructType schema")
        self.states.append((name, schema))

    def __getattr__(self, name: str) -> Any:
        raise NotImplementedError(f"a slot of a wide operator cannot call {name}: add it to qtt.runtime.operators.wide")


def declared_states(processor: StatefulOperator) -> list[tuple[str, st.StructType]]:
    """The state variables ``processor`` declares, in order, with their schemas (``init`` runs on
    a copy, here on the driver, with a handle that only records)."""
    declared = _Declared()
    copy.deepcopy(processor).init(declared)  # type: ignore[arg-type]
    return declared.states


class WideProcessor(StatefulProcessor):
    """Hands each group to its slot's processor; see the module's docstring."""

    def __init__(self, slots: Sequence[Slot], names: Sequence[str], states: Sequence[st.StructType] = ()) -> None:
        self.slots = {slot.slot: slot for slot in slots}
        self.names = tuple(names)
        self.states = tuple(states)
        self._write_columns = tuple(self.names.index(name) for name in (WRITE_STATE, WRITE_UNIT, WRITE_DELETE))

    def init(self, handle: StatefulProcessorHandle) -> None:
        freeze_once("operator")
        pooled = [handle.getValueState(pooled_state(n), schema) for n, schema in enumerate(self.states)]
        widths = [len(schema.fields) for schema in self.states]
        self._journal = _Journal()
        self._handles = {
            number: _SlotHandle(slot.states, pooled, widths, self._journal) for number, slot in self.slots.items()
        }
        self._started: set[int] = set()

    def _processor(self, slot: Slot) -> StatefulOperator:
        """``slot``'s processor, started on its first group of the micro-batch: most slots have
        no rows in most micro-batches, and starting one costs a millisecond or two each time."""
        if slot.slot not in self._started:
            slot.processor.init(self._handles[slot.slot])  # type: ignore[arg-type]
            self._started.add(slot.slot)
        return slot.processor

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        slot = self.slots[key[0]]
        processor = self._processor(slot)
        pairs = tuple(zip(slot.inputs, slot.columns, strict=True))
        units: dict[int, list[Row]] = {}
        for row in rows:
            own = Row(**{name: row[wide] for name, wide in pairs})
            units.setdefault(slot.unit_of(own), []).append(own)
        own_key = tuple(key[position] for position in slot.keys)
        for unit in sorted(units):
            self._journal.call += 1
            for out in processor.handleInputRows(own_key, iter(units[unit]), timerValues):
                values: list[Any] = [None] * len(self.names)
                values[0] = slot.slot
                for name, position in zip(slot.outputs, slot.positions, strict=True):
                    values[position] = out[name]
                yield Row(**dict(zip(self.names, values, strict=True)))
            yield from self._written(slot.slot, unit)

    def _written(self, slot: int, unit: int) -> Iterator[Row]:
        """A row for each state write the slot made in ``unit``, in order."""
        state_column, unit_column, delete_column = self._write_columns
        for position, delete in self._journal.writes:
            values: list[Any] = [None] * len(self.names)
            values[0], values[state_column], values[unit_column], values[delete_column] = slot, position, unit, delete
            yield Row(**dict(zip(self.names, values, strict=True)))
        self._journal.writes.clear()

    def close(self) -> None:
        for number in self._started:
            self.slots[number].processor.close()


@dataclass(frozen=True)
class SlotInput:
    """What one replay's operator was built with: input, key columns, processor, output."""

    slot: int
    df: DataFrame
    keys: tuple[str, ...]
    processor: StatefulOperator
    output: st.StructType


class ColumnPool:
    """Columns handed out by data type: a slot takes its n-th column of a type from the n-th
    column of that type (its own DataType, nested nullability included, so no union widens it)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.fields: list[st.StructField] = []
        self._by_type: dict[str, list[str]] = {}
        self._index: dict[str, int] = {}

    def take(self, data_types: Sequence[st.DataType]) -> tuple[str, ...]:
        """Wide columns for one slot's columns of ``data_types``, in their order."""
        used: dict[str, int] = {}
        names = []
        for data_type in data_types:
            text = data_type.json()
            columns = self._by_type.setdefault(text, [])
            nth = used.get(text, 0)
            used[text] = nth + 1
            if nth == len(columns):
                columns.append(wide_column(self.name, len(self.fields)))
                self._index[columns[-1]] = len(self.fields)
                self.fields.append(st.StructField(columns[-1], data_type, nullable=True))
            names.append(columns[nth])
        return tuple(names)

    def index(self, column: str) -> int:
        """Where ``column`` is in :attr:`fields` (columns are only ever added at the end)."""
        return self._index[column]


@dataclass(frozen=True)
class WideLayout:
    """Where each slot's columns are in a wide operator's input, grouping key and output."""

    #: each slot's input columns (in its own column order), as wide columns
    inputs: dict[int, tuple[str, ...]]
    #: the key pool: the wide grouping key is the slot column followed by these
    keys: tuple[str, ...]
    #: each slot's output columns, as wide columns
    outputs: dict[int, tuple[str, ...]]
    input_schema: st.StructType
    #: the slots' output columns, then the columns of the rows that record state writes
    output_schema: st.StructType
    #: each slot's state variables, and the wide operator's variables' schemas, by position
    states: dict[int, tuple[SlotState, ...]]
    state_schemas: tuple[st.StructType, ...]

    def column(self, part: SlotInput, name: str) -> str:
        """The wide column that holds ``part``'s input column ``name``."""
        return self.inputs[part.slot][part.df.columns.index(name)]


_WRITE_FIELDS = (
    st.StructField(WRITE_STATE, st.IntegerType(), nullable=True),
    st.StructField(WRITE_UNIT, st.LongType(), nullable=True),
    st.StructField(WRITE_DELETE, st.BooleanType(), nullable=True),
)


def wide_layout(inputs: Sequence[SlotInput]) -> WideLayout:
    """Lay out the slots' columns; see the module's docstring."""
    keys, values, outputs = ColumnPool("key"), ColumnPool("value"), ColumnPool("output")
    laid_out: dict[int, tuple[str, ...]] = {}
    laid_out_outputs: dict[int, tuple[str, ...]] = {}
    for part in inputs:
        fields = part.df.schema.fields
        key_names = iter(keys.take([f.dataType for f in fields if f.name in part.keys]))
        value_names = iter(values.take([f.dataType for f in fields if f.name not in part.keys]))
        laid_out[part.slot] = tuple(next(key_names if f.name in part.keys else value_names) for f in fields)
        laid_out_outputs[part.slot] = outputs.take([f.dataType for f in part.output.fields])
    states, state_schemas = pooled_states(inputs)
    slot_field = st.StructField(SLOT, st.IntegerType(), nullable=True)
    return WideLayout(
        inputs=laid_out,
        keys=tuple(f.name for f in keys.fields),
        outputs=laid_out_outputs,
        input_schema=st.StructType([slot_field, *keys.fields, *values.fields]),
        output_schema=st.StructType([slot_field, *outputs.fields, *_WRITE_FIELDS]),
        states=states,
        state_schemas=state_schemas,
    )


def pooled_states(inputs: Sequence[SlotInput]) -> tuple[dict[int, tuple[SlotState, ...]], tuple[st.StructType, ...]]:
    """Each slot's state variables, the *n*-th pooled into the wide operator's *n*-th variable."""
    pools: list[ColumnPool] = []
    states: dict[int, tuple[SlotState, ...]] = {}
    for part in inputs:
        mine = []
        for position, (name, schema) in enumerate(declared_states(part.processor)):
            if position == len(pools):
                pools.append(ColumnPool(f"state{position}"))
            pool = pools[position]
            fields = pool.take([f.dataType for f in schema.fields])
            mine.append(SlotState(name, schema, position, fields, tuple(pool.index(f) for f in fields)))
        states[part.slot] = tuple(mine)
    return states, tuple(st.StructType(pool.fields) for pool in pools)


def wide_input(inputs: Sequence[SlotInput], layout: WideLayout) -> DataFrame:
    """Every slot's input rows in one DataFrame, laid out by ``layout``; a column a slot does not
    use is null in its rows."""
    # one null Column per wide column, shared by every slot's select: each is three JVM calls
    nulls = {f.name: F.lit(None).cast(f.dataType).alias(f.name) for f in layout.input_schema.fields}
    return union_all(in_threads(_laid_out, [(part, layout, nulls) for part in inputs]))


def _laid_out(part: SlotInput, layout: WideLayout, nulls: dict[str, Column]) -> DataFrame:
    """``part``'s rows in ``layout``'s columns, its own or null."""
    mine = dict(zip(layout.inputs[part.slot], part.df.columns, strict=True))
    return part.df.select(
        *[
            F.lit(part.slot).cast(f.dataType).alias(SLOT)
            if f.name == SLOT
            else (col(mine[f.name]).alias(f.name) if f.name in mine else nulls[f.name])
            for f in layout.input_schema.fields
        ]
    )


def wide_operator(
    rows: DataFrame, inputs: Sequence[SlotInput], layout: WideLayout, units: Mapping[int, Mapping[int, int]]
) -> DataFrame:
    """One ``transformWithState`` over ``rows``, laid out by ``layout`` (see the module's
    docstring); ``units[slot]`` gives each input record of the slot's replay, by ``SEQ``, its
    micro-batch."""
    key_columns = [SLOT, *layout.keys]
    output_names = [f.name for f in layout.output_schema.fields]
    slots = [
        Slot(
            slot=part.slot,
            processor=part.processor,
            inputs=tuple(part.df.columns),
            columns=layout.inputs[part.slot],
            keys=tuple(key_columns.index(layout.column(part, key)) for key in part.keys),
            outputs=tuple(f.name for f in part.output.fields),
            positions=tuple(output_names.index(name) for name in layout.outputs[part.slot]),
            states=layout.states[part.slot],
            units=units[part.slot],
        )
        for part in inputs
    ]
    return rows.groupBy(*[col(k) for k in key_columns]).transformWithState(
        statefulProcessor=WideProcessor(slots, output_names, layout.state_schemas),
        outputStructType=layout.output_schema,
        outputMode="Update",
        timeMode="None",
    )
