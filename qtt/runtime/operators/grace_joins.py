"""Stream-stream joins with a ``GRACE PERIOD``: Kafka Streams' KStream-KStream join with the
spurious-result fix (``JoinWindows.ofTimeDifferenceAndGrace``), record by record.

What differs from the join without a grace period (:mod:`qtt.runtime.operators.joins`) crosses keys, so
this operator is keyed by source partition (a Kafka Streams task), as the stream-time and
``EMIT FINAL`` operators are, and keeps every key's rows in its state:

* **Buffers with retention.** Each side's window store keeps rows for ``before + after +
  grace`` of its own stream time (the newest timestamp put into it). A row older than that on
  arrival is not kept, and a lookup never returns a row that old.
* **Stream time** is shared by both sides: the newest timestamp of any row of either side.
* **Held rows** (``LEFT``, ``RIGHT``, ``OUTER``): a row of a kept side that matches nothing
  is held in the outer store, unless its window had already closed on arrival (its upper
  bound before stream time), in which case it is emitted with nulls at once. A later match
  on the other side releases it (deletes it, emitting only the joined row). When a row
  arrives whose timestamp is stream time, held rows whose windows have closed (timestamp
  plus grace plus how far the other side's rows may lie after it, ``after`` for a left row,
  ``before`` for a right one, before stream time) are emitted with nulls, stamped with their
  own timestamps, in the store's order (timestamp, right side before left, key bytes,
  arrival), before the arriving row's own results. Kafka Streams skips that pass while its
  lowest held timestamp (``minTime``) plus the arriving side's ``after`` (``before`` for a
  right row) plus grace is not before stream time, and stops it once a row of each side is
  still open; ``minTime`` is kept as it keeps it: the timestamp of the last held row the pass looked
  at (Kafka Streams' current rules, as of its 4.x releases).

State (per partition): ``<context>-this-join-store`` and ``<context>-other-join-store``, each
``{observedStreamTime, records}`` with records ``(key, columns..., ROWTIME)`` in arrival
order, and ``<context>-outer-shared-join-store``, ``{streamTime, minTime, records}`` with the
held rows. A state is written after the record that changed it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Row
from pyspark.sql import types as st
from pyspark.sql.streaming import StatefulProcessorHandle

from qtt.runtime.build.names import (
    JOIN_SIDE,
    KEY_BYTES,
    NULL_KEY,
    ORDER,
    ROWOFFSET,
    ROWPARTITION,
    ROWTIME,
    SEQ,
    TOMBSTONE,
)
from qtt.runtime.operators.joins import LEFT, OUTPUTS_PER_ROW, RIGHT
from qtt.runtime.operators.state_codec import StateCodec, decode, is_nested
from qtt.runtime.operators.stateful import StatefulOperator
from qtt.runtime.spark.workers.worker_memory import freeze_once

#: the outer store's fields before a held row's key and columns
_HELD = ("timestamp", "leftSide", KEY_BYTES)
_OUTER = 2  # index of the outer store among the states


@dataclass(frozen=True)
class GraceJoinSpec:
    """What a stream-stream join with a grace period needs, picklable for the Python workers.

    ``columns`` are each side's value columns; ``states`` the two buffers and the outer store
    (None for ``INNER``, which holds nothing).
    """

    join_type: str
    key_name: str
    columns: tuple[tuple[str, ...], tuple[str, ...]]
    types: tuple[tuple[str, st.DataType], ...]
    states: tuple[str, str, str | None]
    before_ms: int
    after_ms: int
    grace_ms: int

    @property
    def retention_ms(self) -> int:
        """How long a buffer keeps a row, in its own stream time (Kafka Streams' window store)."""
        return self.before_ms + self.after_ms + self.grace_ms

    def record_schema(self, side: int) -> st.StructType:
        """A buffered row: the key, the side's columns, its timestamp."""
        types = dict(self.types)
        names = (self.key_name, *self.columns[side], ROWTIME)
        return st.StructType([st.StructField(n, types[n] if n != ROWTIME else st.LongType()) for n in names])

    def held_schema(self) -> st.StructType:
        """A held row: timestamp, side and key bytes (the store's order), key, both sides' columns."""
        types = dict(self.types)
        fields = [
            st.StructField("timestamp", st.LongType()),
            st.StructField("leftSide", st.BooleanType()),
            st.StructField(KEY_BYTES, st.BinaryType()),
        ]
        names = (self.key_name, *self.columns[LEFT], *self.columns[RIGHT])
        return st.StructType(fields + [st.StructField(n, types[n]) for n in names])


class GraceJoinProcessor(StatefulOperator):
    """Per source partition: both sides' buffers and the held rows (see the module's rules)."""

    def __init__(self, spec: GraceJoinSpec) -> None:
        self.spec = spec

    def state_names(self) -> tuple[str, ...]:
        return tuple(name for name in self.spec.states if name is not None)

    def init(self, handle: StatefulProcessorHandle) -> None:
        freeze_once("operator")
        spec = self.spec
        buffers = [
            st.StructType(
                [
                    st.StructField("observedStreamTime", st.LongType()),
                    st.StructField("records", st.ArrayType(spec.record_schema(side))),
                ]
            )
            for side in (LEFT, RIGHT)
        ]
        outer = st.StructType(
            [
                st.StructField("streamTime", st.LongType()),
                st.StructField("minTime", st.LongType()),
                st.StructField("records", st.ArrayType(spec.held_schema())),
            ]
        )
        self.codecs = [StateCodec(schema) for schema in (*buffers, outer)]
        self.states = [
            handle.getValueState(name, codec.stored) if name is not None else None
            for name, codec in zip(spec.states, self.codecs, strict=True)
        ]
        self.nested = {name: type_ for name, type_ in spec.types if is_nested(type_)}
        self.kept = {"LEFT": (LEFT,), "RIGHT": (RIGHT,), "OUTER": (LEFT, RIGHT)}.get(spec.join_type, ())

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        ordered = sorted(rows, key=lambda r: (r[SEQ], r[ORDER]))
        if not ordered:
            return
        current = [self._load(index) for index in range(3)]
        touched: set[int] = set()
        for position, row in enumerate(ordered):
            if position and row[SEQ] != ordered[position - 1][SEQ]:
                for index in touched:
                    current[index] = self._round_trip(index, current[index])
                touched.clear()
            yield from self._process(row, current, touched)
        for index in touched:
            self._put(index, current[index])

    # ------------------------------------------------------------------ state

    def _load(self, index: int) -> Any:
        state = self.states[index]
        stored = self.codecs[index].read(state) if state is not None else None
        if stored is None:
            return (None, None, ()) if index == _OUTER else (None, ())
        return self._tuples(stored)

    @staticmethod
    def _tuples(value: Any) -> Any:
        *times, records = value
        return (*times, tuple(tuple(r) for r in records))

    def _put(self, index: int, value: Any) -> None:
        state = self.states[index]
        if state is not None:
            state.update(self.codecs[index].encode((*value[:-1], list(value[-1]))))

    def _round_trip(self, index: int, value: Any) -> Any:
        if self.states[index] is None:
            return value
        stored = self.through_store(self.states[index], self.codecs[index], (*value[:-1], list(value[-1])))
        return self._tuples(stored)

    # ------------------------------------------------------------------ one record

    def _process(self, row: Row, current: list[Any], touched: set[int]) -> Iterator[Row]:
        spec = self.spec
        side, timestamp = row[JOIN_SIDE], row[ROWTIME]
        other = RIGHT if side == LEFT else LEFT
        outer = self.states[_OUTER] is not None
        if outer:  # stream time moves on before a row without a value is skipped
            stream_time, min_time, held = current[_OUTER]
            stream_time = timestamp if stream_time is None else max(stream_time, timestamp)
            current[_OUTER] = (stream_time, min_time, held)
            touched.add(_OUTER)
        if row[TOMBSTONE]:
            return
        key = self._value(row, spec.key_name)
        mine = (key, *(self._value(row, c) for c in spec.columns[side]), timestamp)
        self._buffer(side, mine, current, touched)
        order = row[ORDER] * OUTPUTS_PER_ROW
        emitted = 0
        if outer and timestamp == current[_OUTER][0]:
            for record in self._expired(side, current, touched):
                yield self._held_output(row, record, order + emitted)
                emitted += 1
        before, after = (spec.before_ms, spec.after_ms) if side == LEFT else (spec.after_ms, spec.before_ms)
        low, high = max(0, timestamp - before), max(0, timestamp + after)
        observed, records = current[other]
        if observed is not None:
            low = max(low, observed - spec.retention_ms + 1)
        matches = sorted((r for r in records if r[0] == key and low <= r[-1] <= high), key=lambda r: r[-1])
        for match in matches:
            if outer:
                self._release(other, key, match[-1], current, touched)
            pair = (mine, match) if side == LEFT else (match, mine)
            yield self._output(row, key, pair, max(timestamp, match[-1]), order + emitted)
            emitted += 1
        if matches or side not in self.kept:
            return
        stream_time, min_time, held = current[_OUTER]
        if high < stream_time:  # its window closed before it arrived: nothing can match it now
            yield self._output(row, key, (mine, None) if side == LEFT else (None, mine), timestamp, order + emitted)
            return
        columns = [None] * (len(spec.columns[LEFT]) + len(spec.columns[RIGHT]))
        start = 0 if side == LEFT else len(spec.columns[LEFT])
        columns[start : start + len(mine) - 2] = mine[1:-1]
        record = (timestamp, side == LEFT, row[KEY_BYTES], key, *columns)
        min_time = timestamp if min_time is None else min(min_time, timestamp)
        current[_OUTER] = (stream_time, min_time, (*held, record))

    def _value(self, row: Row, column: str) -> Any:
        type_ = self.nested.get(column)
        return row[column] if type_ is None else decode(row[column], type_)

    def _buffer(self, side: int, record: tuple[Any, ...], current: list[Any], touched: set[int]) -> None:
        """Put a row into its side's window store; rows past the store's retention are gone."""
        observed, records = current[side]
        observed = record[-1] if observed is None else max(observed, record[-1])
        live = observed - self.spec.retention_ms + 1
        current[side] = (observed, tuple(r for r in (*records, record) if r[-1] >= live))
        touched.add(side)

    def _release(self, side: int, key: Any, timestamp: int, current: list[Any], touched: set[int]) -> None:
        """A match found a held row of ``side``: every held row of its timestamp, side and key goes."""
        stream_time, min_time, held = current[_OUTER]
        kept = tuple(r for r in held if not (r[0] == timestamp and r[1] == (side == LEFT) and r[3] == key))
        if len(kept) != len(held):
            current[_OUTER] = (stream_time, min_time, kept)
            touched.add(_OUTER)

    def _expired(self, side: int, current: list[Any], touched: set[int]) -> list[tuple[Any, ...]]:
        """The held rows whose windows have closed, in the store's order, removed from it."""
        spec = self.spec
        stream_time, min_time, held = current[_OUTER]
        after = spec.after_ms if side == LEFT else spec.before_ms  # the arriving side's
        if min_time is None or min_time + after + spec.grace_ms >= stream_time:
            return []
        min_time = None
        due: list[tuple[Any, ...]] = []
        still_open: set[bool] = set()
        # the store's order: timestamp, right side before left, key bytes; arrival among equals
        for record in sorted(held, key=lambda r: (r[0], r[1], bytes(r[2] or b""))):
            if len(still_open) == 2:
                break
            min_time = record[0]
            # a left row can meet right rows up to `after` later, a right row left rows up to `before`
            look_back = spec.after_ms if record[1] else spec.before_ms
            if record[0] + look_back + spec.grace_ms >= stream_time:
                still_open.add(record[1])
                continue
            due.append(record)
        remaining = tuple(r for r in held if not any(r is d for d in due))
        current[_OUTER] = (stream_time, min_time, remaining)
        touched.add(_OUTER)
        return due

    # ------------------------------------------------------------------ outputs

    def _held_output(self, row: Row, record: tuple[Any, ...], order: int) -> Row:
        spec = self.spec
        timestamp, _, _, key, *columns = record
        left = len(spec.columns[LEFT])
        if record[1]:
            pair: tuple[Any, Any] = ((key, *columns[:left], timestamp), None)
        else:
            pair = (None, (key, *columns[left:], timestamp))
        return self._output(row, key, pair, timestamp, order)

    def _output(self, row: Row, key: Any, pair: tuple[Any, Any], rowtime: int, order: int) -> Row:
        """The joined row: ``pair`` holds each side's buffered record or None."""
        spec = self.spec
        out: dict[str, Any] = {spec.key_name: key}
        for side in (LEFT, RIGHT):
            record = pair[side]
            for index, column in enumerate(spec.columns[side]):
                out[column] = None if record is None else record[index + 1]
        out.update(
            {
                ROWTIME: rowtime,
                ROWPARTITION: row[ROWPARTITION],
                ROWOFFSET: row[ROWOFFSET],
                SEQ: row[SEQ],
                TOMBSTONE: False,
                NULL_KEY: False,
                ORDER: order,
            }
        )
        return Row(**out)

    def close(self) -> None:
        pass
