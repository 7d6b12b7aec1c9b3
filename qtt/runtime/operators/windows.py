"""Windowed aggregation: stream time, the windows a row joins, and the grace rule.

Kafka Streams decides what a windowed aggregate takes with the stream time of the task (its
source partition): the newest timestamp of any record that reached the aggregate so far, of
any key. A row joins every window that holds its timestamp, except a window whose end plus
the grace period is at or before stream time: that window has closed, and the row is
dropped from it (KStreamWindowAggregate). Stream time crosses keys, so it cannot live in the
aggregate's own state, which is per group and window; it is a stateful operator of its own,
keyed by partition (:class:`StreamTimeProcessor`), that hands every row the stream time as of
that row. The windows are then plain columns: the row is exploded into one row per window
(``WINDOWSTART``, ``WINDOWEND``), closed windows are filtered out, and the ordinary aggregate
operator groups by key and window.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql import types as st
from pyspark.sql.streaming.stateful_processor import StatefulProcessorHandle

from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import WINDOWEND, WINDOWSTART
from qtt.runtime.build.names import (
    HAD_PREVIOUS,
    KEY_BYTES,
    NULL_KEY,
    ORDER,
    ROWTIME,
    SEQ,
    STREAM_TIME,
    TOMBSTONE,
    WINDOW_POSITION,
    col,
    previous_name,
)
from qtt.runtime.operators.state_codec import StateCodec, decode, is_nested
from qtt.runtime.operators.stateful import (
    AggregateProcessor,
    AggregateSpec,
    StatefulOperator,
    pseudo_values,
    unless_keyed,
)
from qtt.runtime.spark.workers.worker_memory import freeze_once

_STATE = st.StructType([st.StructField("streamTime", st.LongType())])


@dataclass(frozen=True)
class StreamTimeSpec:
    """What the stream-time operator needs: its state variable and the rows it passes on."""

    state_name: str
    rows: st.StructType


class StreamTimeProcessor(StatefulOperator):
    """Per source partition: the newest timestamp so far, attached to every row as of that row.

    State: one value, the partition's stream time, stored after each input record (a row
    that is later dropped from every window still moves stream time on, as in Kafka Streams).
    """

    def __init__(self, spec: StreamTimeSpec) -> None:
        self.spec = spec

    def state_names(self) -> tuple[str, ...]:
        return (self.spec.state_name,)

    def init(self, handle: StatefulProcessorHandle) -> None:
        freeze_once("operator")
        self.codec = StateCodec(_STATE)
        self.state = handle.getValueState(self.spec.state_name, self.codec.stored)
        self.nested = {f.name: f.dataType for f in self.spec.rows.fields if is_nested(f.dataType)}

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        ordered = sorted(rows, key=lambda r: (r[SEQ], r[ORDER]))
        stored = self.codec.read(self.state)
        stream_time = stored[0] if stored is not None else None
        for position, row in enumerate(ordered):
            if position and row[SEQ] != ordered[position - 1][SEQ] and stream_time is not None:
                (stream_time,) = self.through_store(self.state, self.codec, (stream_time,))
            timestamp = row[ROWTIME]
            stream_time = timestamp if stream_time is None else max(stream_time, timestamp)
            values = {
                f.name: decode(row[f.name], self.nested[f.name]) if f.name in self.nested else row[f.name]
                for f in self.spec.rows.fields
            }
            yield Row(**values, **{STREAM_TIME: stream_time})
        if stream_time is not None:
            self.state.update(self.codec.encode((stream_time,)))

    def close(self) -> None:
        pass


def stream_time_operator(df: DataFrame, state_name: str) -> tuple[StreamTimeProcessor, st.StructType]:
    """The operator that adds each row's stream time to ``df``'s rows, and its output schema;
    the builder starts it over ``df`` grouped by source partition (``PlanBuilder._stateful``)."""
    processor = StreamTimeProcessor(StreamTimeSpec(state_name, df.schema))
    return processor, st.StructType([*df.schema.fields, st.StructField(STREAM_TIME, st.LongType())])


def windowed_rows(df: DataFrame, window: s.WindowExpression) -> DataFrame:
    """Every row once per window that holds its timestamp and is still open, in start order.

    Windows are aligned to the epoch: a row at ``t`` joins the windows starting at the
    multiples of ``advance`` in ``(t - size, t]`` (none below 0). ``ORDER`` numbers a row's
    windows by start, so their outputs keep Kafka Streams' order.
    """
    timestamp = col(ROWTIME)
    size, advance = F.lit(window.size_ms).cast("long"), F.lit(window.advance_ms).cast("long")
    lowest = F.greatest(F.lit(0).cast("long"), timestamp - size + advance)
    first = lowest - F.pmod(lowest, advance)
    starts = F.when(timestamp >= 0, F.sequence(first, timestamp, advance))
    per_row = -(-window.size_ms // window.advance_ms)
    exploded = df.select("*", F.posexplode(starts).alias(WINDOW_POSITION, WINDOWSTART))
    exploded = exploded.withColumn(WINDOWEND, col(WINDOWSTART) + size)
    open_ = exploded.where(col(WINDOWEND) > col(STREAM_TIME) - F.lit(window.grace_ms).cast("long"))
    return open_.withColumn(ORDER, (col(ORDER) * per_row + col(WINDOW_POSITION)).cast("int")).drop(
        WINDOW_POSITION, STREAM_TIME
    )


@dataclass(frozen=True)
class SessionSpec:
    """A session-windowed aggregate: the plain aggregate's spec, the inactivity gap and grace,
    and the schema of its state, one list of sessions (start, end, accumulators) per key."""

    aggregate: AggregateSpec
    gap_ms: int
    grace_ms: int
    retention_ms: int
    sessions: st.StructType


#: outputs one input record causes at most, per output it had before (tombstones, then the session)
_PER_ROW = 1000


class SessionAggregateProcessor(AggregateProcessor):
    """Per key: its sessions. A row at ``t`` merges every session ending at or after ``t - gap``
    and starting at or before ``t + gap`` into one (accumulators merged oldest first), unless
    the merged session ends before the close time, stream time less grace less gap: then the
    row is dropped. Each session it replaces gets a tombstone (stamped with that session's end)
    before the merged session is emitted, stamped with its end (Kafka Streams'
    KStreamSessionWindowAggregate). A session that ended ``retention`` or longer before stream
    time is gone from the store: no row finds it, and it leaves the state.
    """

    def __init__(self, spec: SessionSpec) -> None:
        super().__init__(spec.aggregate)
        self.session_spec = spec

    def state_codec(self) -> StateCodec:
        return StateCodec(self.session_spec.sessions)

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        ordered = sorted(rows, key=lambda r: (r[SEQ], r[ORDER]))
        if not ordered:
            return
        gap, grace = self.session_spec.gap_ms, self.session_spec.grace_ms
        held = self.codec.read(self.state)
        sessions = [tuple(s) for s in held[0]] if held is not None else []
        key_values = {k: ordered[0][k] for k in self.spec.key_names}
        for position, row in enumerate(ordered):
            if position and row[SEQ] != ordered[position - 1][SEQ]:
                (stored,) = self.through_store(self.state, self.codec, (sessions,))
                sessions = [tuple(s) for s in stored]
            self.current = row[SEQ]
            timestamp, stream_time = row[ROWTIME], row[STREAM_TIME]
            # the store keeps sessions ending within the retention of stream time (its newest end)
            sessions = [s for s in sessions if s[1] >= stream_time - self.session_spec.retention_ms + 1]
            found = sorted(
                (s for s in sessions if s[1] >= timestamp - gap and s[0] <= timestamp + gap),
                key=lambda s: (s[1], s[0]),
            )
            start = min([timestamp, *(s[0] for s in found)])
            end = max([timestamp, *(s[1] for s in found)])
            if end < stream_time - grace - gap:
                continue  # the merged session closed already
            accumulators = [udaf.initial() for udaf in self.udafs]
            for session in found:
                accumulators = [
                    udaf.merge(mine, theirs)
                    for udaf, mine, theirs in zip(self.udafs, accumulators, session[2:], strict=True)
                ]
            order = row[ORDER] * _PER_ROW
            if (start, end) != (timestamp, timestamp):
                for session in found:
                    earlier = self._results(list(session[2:]))
                    yield self._output(key_values, row, session[0], session[1], None, order, earlier)
                    order += 1
            sessions = [s for s in sessions if s not in found]
            for i, (udaf, (_, _, columns)) in enumerate(zip(self.udafs, self.spec.calls, strict=True)):
                accumulators[i] = self.applied(udaf, accumulators[i], [self._argument(row, c) for c in columns])
            sessions.append((start, end, *accumulators))
            yield self._output(key_values, row, start, end, self._results(accumulators), order)
        if sessions:
            self.state.update(self.codec.encode((sessions,)))
        else:
            self.state.clear()

    def _output(
        self,
        key_values: dict[str, Any],
        row: Row,
        start: int,
        end: int,
        results: list[Any] | None,
        order: int,
        earlier: list[Any] | None = None,
    ) -> Row:
        """One session's row; a replaced session's tombstone carries its last results as the
        previous ones (a HAVING filter deletes it downstream only if it passed)."""
        out = {**key_values, WINDOWSTART: start, WINDOWEND: end}
        for index, (_, alias, _) in enumerate(self.spec.calls):
            out[alias] = None if results is None else results[index]
        out.update(unless_keyed({**pseudo_values(row), ROWTIME: end}, out))
        out.update({SEQ: row[SEQ], TOMBSTONE: results is None, NULL_KEY: False, ORDER: order})
        if self.spec.emit_previous:
            for index, (_, alias, _) in enumerate(self.spec.calls):
                out[previous_name(alias)] = None if earlier is None else earlier[index]
            out[HAD_PREVIOUS] = earlier is not None
        return Row(**out)


@dataclass(frozen=True)
class FinalSpec:
    """``EMIT FINAL`` over time windows: the state variable, the aggregate's rows (passed on
    unchanged when their window closes), and the windows."""

    state_name: str
    rows: st.StructType
    window: s.WindowExpression
    #: Kafka Streams' suppress buffer's rule (``tableSuppressV1``) instead of emit-on-window-close
    suppress: bool = False


class WindowFinalProcessor(StatefulOperator):
    """Per source partition: the windows not yet emitted; each one is emitted once, when it closes.

    Kafka Streams' emit-on-window-close (with ksqlDB's emit interval of 0): after each input
    record, if the close time (stream time less grace) moved on, every window whose start lies
    in ``[lower, close - size]`` is emitted, ``lower`` being 0 the first time and one past the
    last emission's ``close - size`` after that, in start order and then by key bytes. A
    window older than the store's retention (its start before the newest window start less
    ``retention``) is no longer in the store, so it is never emitted. With ``suppress`` (ksqlDB's
    ``tableSuppressV1``, before 0.28) it is Kafka Streams' suppress buffer instead: every window
    whose end is at most stream time less grace is emitted, however old, in end order, then by
    key bytes and start; over sessions too, stream time then being the newest session end the
    aggregate emitted (its records' timestamps), and a replaced session's tombstone taking that
    session out of the buffer.

    Sessions (Kafka Streams' session aggregate, emit-on-window-close): the close time is stream
    time less grace less gap, the sessions emitted are those ending in ``[lower, close - 1]``,
    ``lower`` being the last close time (0 the first time), in end order, then by key bytes and
    start; a session the aggregate replaced (its tombstone) is no longer waiting.
    """

    def __init__(self, spec: FinalSpec) -> None:
        self.spec = spec

    def state_names(self) -> tuple[str, ...]:
        return (self.spec.state_name,)

    def init(self, handle: StatefulProcessorHandle) -> None:
        freeze_once("operator")
        fields = [
            st.StructField("streamTime", st.LongType()),
            st.StructField("lastEmitCloseTime", st.LongType()),
            st.StructField("newestWindowStart", st.LongType()),
            st.StructField("windows", st.ArrayType(self.spec.rows)),
        ]
        self.codec = StateCodec(st.StructType(fields))
        self.state = handle.getValueState(self.spec.state_name, self.codec.stored)
        self.names = [f.name for f in self.spec.rows.fields]

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        ordered = sorted(rows, key=lambda r: (r[SEQ], r[ORDER]))
        if not ordered:
            return
        state = self._load()
        for position, row in enumerate(ordered):
            if position and row[SEQ] != ordered[position - 1][SEQ]:
                state = self._stored(state)
            stream_time, last, newest, windows = state
            values = tuple(row[name] for name in self.names)
            identity = self._identity(values)
            windows = [w for w in windows if self._identity(w) != identity]
            if not row[TOMBSTONE]:
                windows.append(values)
            stream_time = row[ROWTIME] if stream_time is None else max(stream_time, row[ROWTIME])
            newest = row[WINDOWSTART] if newest is None else max(newest, row[WINDOWSTART])
            state = (stream_time, last, newest, windows)
            if position + 1 == len(ordered) or ordered[position + 1][SEQ] != row[SEQ]:
                emitted, state = self._emit(state)
                for order, window in enumerate(emitted):
                    yield self._output(window, row, order)
        self.state.update(self.codec.encode((state[0], state[1], state[2], state[3])))

    def _load(self) -> tuple[Any, Any, Any, list[tuple[Any, ...]]]:
        stored = self.codec.read(self.state)
        if stored is None:
            return None, None, None, []
        stream_time, last, newest, windows = stored
        return stream_time, last, newest, [tuple(w) for w in windows]

    def _stored(
        self, state: tuple[Any, Any, Any, list[tuple[Any, ...]]]
    ) -> tuple[Any, Any, Any, list[tuple[Any, ...]]]:
        stream_time, last, newest, windows = self.through_store(self.state, self.codec, state)
        return stream_time, last, newest, [tuple(w) for w in windows]

    def _identity(self, values: tuple[Any, ...]) -> tuple[Any, Any, Any]:
        named = dict(zip(self.names, values, strict=True))
        return named[KEY_BYTES], named[WINDOWSTART], named[WINDOWEND]

    def _emit(
        self, state: tuple[Any, Any, Any, list[tuple[Any, ...]]]
    ) -> tuple[list[tuple[Any, ...]], tuple[Any, Any, Any, list[tuple[Any, ...]]]]:
        stream_time, last, newest, windows = state
        window = self.spec.window
        close = stream_time - window.grace_ms
        if self.spec.suppress:
            return self._emit_suppressed(state, close)
        if window.type == "SESSION":
            return self._emit_sessions(state)
        if last is not None and last >= close:
            return [], state
        upper = close - window.size_ms
        if upper < 0:
            return [], state
        lower = 0 if last is None else max(0, last - window.size_ms) + 1
        if last is not None and window_starts(upper, window) == window_starts(lower - 1, window):
            return [], state
        start_at = self.names.index(WINDOWSTART)
        oldest = newest - window.retention_ms
        due = [w for w in windows if lower <= w[start_at] <= upper and w[start_at] >= oldest]
        due.sort(key=lambda w: (w[start_at], bytes(self._identity(w)[0] or b"")))
        # what is emitted, or closed, or past retention can never be emitted again
        kept = [w for w in windows if w[start_at] > upper and w[start_at] >= oldest]
        return due, (stream_time, close, newest, kept)

    def _emit_suppressed(
        self, state: tuple[Any, Any, Any, list[tuple[Any, ...]]], close: int
    ) -> tuple[list[tuple[Any, ...]], tuple[Any, Any, Any, list[tuple[Any, ...]]]]:
        stream_time, _, newest, windows = state
        start_at, end_at = self.names.index(WINDOWSTART), self.names.index(WINDOWEND)
        due = [w for w in windows if w[end_at] <= close]
        due.sort(key=lambda w: (w[end_at], bytes(self._identity(w)[0] or b""), w[start_at]))
        kept = [w for w in windows if w[end_at] > close]
        return due, (stream_time, close, newest, kept)

    def _emit_sessions(
        self, state: tuple[Any, Any, Any, list[tuple[Any, ...]]]
    ) -> tuple[list[tuple[Any, ...]], tuple[Any, Any, Any, list[tuple[Any, ...]]]]:
        stream_time, last, newest, sessions = state
        close = stream_time - self.spec.window.grace_ms - self.spec.window.size_ms
        if last is not None and last >= close:
            return [], state
        upper, lower = close - 1, max(0, last if last is not None else -1)
        if upper < 0 or upper < lower:
            return [], state
        start_at, end_at = self.names.index(WINDOWSTART), self.names.index(WINDOWEND)
        due = [w for w in sessions if lower <= w[end_at] <= upper]
        due.sort(key=lambda w: (w[end_at], bytes(self._identity(w)[0] or b""), w[start_at]))
        kept = [w for w in sessions if w[end_at] > upper]
        return due, (stream_time, close, newest, kept)

    def _output(self, values: tuple[Any, ...], current: Row, order: int) -> Row:
        out = dict(zip(self.names, values, strict=True))
        for name in pseudo_values(current):
            if name != ROWTIME and name in out:
                out[name] = current[name]
        out.update({SEQ: current[SEQ], ORDER: order, TOMBSTONE: False})
        if HAD_PREVIOUS in out:  # a HAVING filter sees a window's final row as its first
            out.update({name: None for name in out if name.startswith(previous_name(""))})
            out[HAD_PREVIOUS] = False
        return Row(**out)

    def close(self) -> None:
        pass


def window_starts(timestamp: int, window: s.WindowExpression) -> list[int]:
    """The starts of the windows that hold ``timestamp`` (Kafka Streams' ``windowsFor``)."""
    start = max(0, timestamp - window.size_ms + window.advance_ms) // window.advance_ms * window.advance_ms
    return list(range(start, timestamp + 1, window.advance_ms)) if start <= timestamp else []
