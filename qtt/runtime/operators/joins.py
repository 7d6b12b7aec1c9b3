"""The join operator: both inputs of a join, keyed by the join key, through one stateful processor.

Kafka Streams' rules, record by record (ksqlDB with record caching off):

* **stream-table** (KStream-KTable join): a table row replaces (a tombstone deletes) the
  table's row of its key and emits nothing; a stream row joins the table row of its key as it
  is at that moment, or (``LEFT``) nulls; a stream row without a value is dropped. The output
  carries the stream row's timestamp.
* **stream-stream** (KStream-KStream join within ``WITHIN``, without the spurious-result fix):
  a row joins the other side's buffered rows of its key whose timestamps lie in its window,
  in timestamp order, each output stamped with the later of the two timestamps; a row that
  joins nothing emits itself with nulls at once if its side is kept (``LEFT``, ``RIGHT``,
  both for ``OUTER``); every row stays in its side's buffer.
* **table-table** (KTable-KTable joins): a change on either side first updates that side's
  row, then emits the key's joined row with the other side's current row, stamped with the
  newer of the two rows' timestamps. ``INNER`` emits only when the other side has a row (a
  tombstone when this side's row was deleted); ``LEFT`` (``RIGHT`` mirrored) emits for a change
  of the left row unless neither the old nor the new row exists and the right has none, and
  for a change of the right row only when the left has a row (a deleted right row joins as
  nulls); ``OUTER`` emits unless neither side has a row now and this side had none before
  (a tombstone when both are gone).

Rows with a null join key never reach the operator: Kafka Streams drops them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Row
from pyspark.sql import types as st
from pyspark.sql.streaming import StatefulProcessorHandle

from qtt.runtime.build.names import (
    HAD_PREVIOUS,
    JOIN_SIDE,
    NULL_KEY,
    ORDER,
    ROWOFFSET,
    ROWPARTITION,
    ROWTIME,
    SEQ,
    TOMBSTONE,
    WINDOW_END,
    WINDOW_START,
    previous_name,
)
from qtt.runtime.operators.state_codec import StateCodec, decode, is_nested
from qtt.runtime.operators.stateful import StatefulOperator
from qtt.runtime.spark.workers.worker_memory import freeze_once

LEFT, RIGHT = 0, 1
#: outputs one input row causes at most (a stream-stream join's matches)
OUTPUTS_PER_ROW = 1000


@dataclass(frozen=True)
class JoinSpec:
    """What a join operator needs, picklable for the Python workers.

    ``states`` names the state variable of each side the join keeps (None for a stream side),
    ``columns`` each side's output columns, ``stored`` each side's stored row (its columns,
    then its timestamp).
    """

    table_table: bool
    join_type: str
    key_name: str
    key_type: st.DataType
    columns: tuple[tuple[str, ...], tuple[str, ...]]
    states: tuple[str | None, str | None]
    stored: tuple[st.StructType, st.StructType]
    #: send each key's joined row before this change along (a table filter downstream needs it)
    emit_previous: bool = False
    #: a stream-stream join's window: how far before and after a left row a right row may lie
    window: tuple[int, int] | None = None
    #: the sides are windowed sources: rows are keyed by their window too, and outputs keep it
    windowed: bool = False


def system_values(row: Row, rowtime: int, tombstone: bool, order: int) -> dict[str, Any]:
    """The system columns of a join's output row (:data:`OUTPUT_SYSTEM`), caused by ``row``."""
    return {
        ROWTIME: rowtime,
        ROWPARTITION: row[ROWPARTITION],
        ROWOFFSET: row[ROWOFFSET],
        SEQ: row[SEQ],
        TOMBSTONE: tombstone,
        NULL_KEY: False,
        ORDER: order,
    }


#: the system columns of a join's output rows, after its data columns
OUTPUT_SYSTEM: tuple[tuple[str, st.DataType], ...] = (
    (ROWTIME, st.LongType()),
    (ROWPARTITION, st.IntegerType()),
    (ROWOFFSET, st.LongType()),
    (SEQ, st.LongType()),
    (TOMBSTONE, st.BooleanType()),
    (NULL_KEY, st.BooleanType()),
    (ORDER, st.IntegerType()),
)


class JoinProcessor(StatefulOperator):
    """Per join key: the current row of each side the join keeps (see the module's rules)."""

    def __init__(self, spec: JoinSpec) -> None:
        self.spec = spec

    def state_names(self) -> tuple[str, ...]:
        return tuple(name for name in self.spec.states if name is not None)

    def init(self, handle: StatefulProcessorHandle) -> None:
        freeze_once("operator")
        self.codecs: dict[int, StateCodec] = {}
        self.states: dict[int, Any] = {}
        for side in (LEFT, RIGHT):
            name = self.spec.states[side]
            if name is not None:
                stored = self.spec.stored[side]
                if self.spec.window is not None:  # a stream side keeps its rows in a buffer
                    stored = st.StructType([st.StructField("records", st.ArrayType(stored))])
                self.codecs[side] = StateCodec(stored)
                self.states[side] = handle.getValueState(name, self.codecs[side].stored)
        self.nested = {
            f.name: f.dataType for schema in self.spec.stored for f in schema.fields if is_nested(f.dataType)
        }

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        ordered = sorted(rows, key=lambda r: (r[SEQ], r[ORDER]))
        if not ordered:
            return
        current: dict[int, Any] = {side: self._load(side) for side in self.states}
        if self.spec.window is not None:
            step = self._stream_stream
        else:
            step = self._table_table if self.spec.table_table else self._stream_table
        # only a side a row of that side put to is written (a stream row only reads the table):
        # the store's change feed is the internal topic, one record per put, as Kafka Streams' is
        touched: set[int] = set()
        for position, row in enumerate(ordered):
            if position and row[SEQ] != ordered[position - 1][SEQ]:
                for side in touched:
                    current[side] = self._round_trip(side, current[side])
                touched.clear()
            yield from step(row, current, touched)
        for side in touched:
            self._put(side, current[side])

    def _wrapped(self, value: Any) -> tuple[Any, ...]:
        """A side's value as its state row: a table's row, or a stream's buffer as one field."""
        return (list(value),) if self.spec.window is not None else value

    def _unwrapped(self, row: tuple[Any, ...]) -> Any:
        return tuple(tuple(record) for record in row[0]) if self.spec.window is not None else row

    def _load(self, side: int) -> Any:
        state = self.states[side]
        stored = self.codecs[side].read(state)
        if stored is None:
            return () if self.spec.window is not None else None
        return self._unwrapped(stored)

    def _put(self, side: int, value: Any) -> None:
        """Store a side's value; an empty one deletes what the store holds (nothing if it holds none)."""
        state = self.states[side]
        if value:
            state.update(self.codecs[side].encode(self._wrapped(value)))
        elif state.exists():
            state.clear()

    def _round_trip(self, side: int, value: Any) -> Any:
        if not value:
            self._put(side, value)
            return value
        return self._unwrapped(self.through_store(self.states[side], self.codecs[side], self._wrapped(value)))

    def _stored(self, row: Row, side: int) -> tuple[Any, ...] | None:
        """The side's row as the state keeps it, or None for a tombstone."""
        if row[TOMBSTONE]:
            return None
        values = [row[c] if c not in self.nested else decode(row[c], self.nested[c]) for c in self.spec.columns[side]]
        return (*values, row[ROWTIME])

    def _stream_table(self, row: Row, current: dict[int, Any], touched: set[int]) -> Iterator[Row]:
        if row[JOIN_SIDE] == RIGHT:
            current[RIGHT] = self._stored(row, RIGHT)
            touched.add(RIGHT)
            return
        stream = self._stored(row, LEFT)
        table = current[RIGHT]
        if stream is None or (table is None and self.spec.join_type == "INNER"):
            return
        yield self._output(row, (stream, table), row[ROWTIME])

    def _stream_stream(self, row: Row, current: dict[int, Any], touched: set[int]) -> Iterator[Row]:
        assert self.spec.window is not None
        side = row[JOIN_SIDE]
        mine = self._stored(row, side)
        if mine is None:
            return
        current[side] = (*current[side], mine)
        touched.add(side)
        before, after = self.spec.window if side == LEFT else self.spec.window[::-1]
        timestamp = row[ROWTIME]
        low, high = max(0, timestamp - before), max(0, timestamp + after)
        other = LEFT if side == RIGHT else RIGHT
        # the other buffer in timestamp order (rows of one timestamp in arrival order)
        matches = sorted((r for r in current[other] if low <= r[-1] <= high), key=lambda r: r[-1])
        order = row[ORDER] * OUTPUTS_PER_ROW
        for index, match in enumerate(matches):
            pair = (mine, match) if side == LEFT else (match, mine)
            yield self._output(row, pair, max(timestamp, match[-1]), order=order + index)
        kept = {"LEFT": (LEFT,), "RIGHT": (RIGHT,), "OUTER": (LEFT, RIGHT)}.get(self.spec.join_type, ())
        if not matches and side in kept:
            yield self._output(row, (mine, None) if side == LEFT else (None, mine), timestamp, order=order)

    def _table_table(self, row: Row, current: dict[int, Any], touched: set[int]) -> Iterator[Row]:
        side = row[JOIN_SIDE]
        other = RIGHT if side == LEFT else LEFT
        old, new = current[side], self._stored(row, side)
        current[side] = new
        touched.add(side)
        theirs = current[other]
        join_type = self.spec.join_type
        preserved = {"LEFT": LEFT, "RIGHT": RIGHT}.get(join_type)
        if join_type == "INNER" or (preserved is not None and side != preserved):
            # only a row the other side has can change the join: the other side is kept
            if theirs is None:
                return
            deleted = join_type == "INNER" and new is None
        else:  # this side is kept (LEFT, RIGHT) or both are (OUTER)
            if theirs is None and new is None and old is None:
                return
            deleted = new is None and (join_type != "OUTER" or theirs is None)
        joined = None if deleted else ((new, theirs) if side == LEFT else (theirs, new))
        rowtime = row[ROWTIME] if theirs is None else max(row[ROWTIME], theirs[-1])
        before = (old, theirs) if side == LEFT else (theirs, old)
        existed = {
            "INNER": before[LEFT] is not None and before[RIGHT] is not None,
            "LEFT": before[LEFT] is not None,
            "RIGHT": before[RIGHT] is not None,
        }.get(join_type, before[LEFT] is not None or before[RIGHT] is not None)
        yield self._output(row, joined, rowtime, before if existed else None)

    def _output(
        self,
        row: Row,
        joined: tuple[Any, Any] | None,
        rowtime: int,
        previous: tuple[Any, Any] | None = None,
        order: int | None = None,
    ) -> Row:
        """The joined row (``joined`` holds each side's stored row or None), or a tombstone;
        with ``emit_previous``, the key's joined row before (``previous``) too."""
        key = row[self.spec.key_name]
        out: dict[str, Any] = {self.spec.key_name: decode(key, self.spec.key_type) if key is not None else None}
        for side in (LEFT, RIGHT):
            stored = None if joined is None else joined[side]
            for index, column in enumerate(self.spec.columns[side]):
                out[column] = None if stored is None else stored[index]
        out.update(system_values(row, rowtime, joined is None, row[ORDER] if order is None else order))
        if self.spec.windowed:
            out.update({WINDOW_START: row[WINDOW_START], WINDOW_END: row[WINDOW_END]})
        if self.spec.emit_previous:
            for side in (LEFT, RIGHT):
                stored = None if previous is None else previous[side]
                for index, column in enumerate(self.spec.columns[side]):
                    out[previous_name(column)] = None if stored is None else stored[index]
            out[HAD_PREVIOUS] = previous is not None
        return Row(**out)

    def close(self) -> None:
        pass
