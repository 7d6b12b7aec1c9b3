"""EMIT FINAL over time windows, driven without Spark: which windows close when, by the rule of
Kafka Streams' emit-on-window-close (ksqlDB from 0.28) and by its suppress buffer (before)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Row
from pyspark.sql import types as st

from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import ROWOFFSET, ROWPARTITION, WINDOWEND, WINDOWSTART
from qtt.runtime.build.names import KEY_BYTES, ORDER, ROWTIME, SEQ, TOMBSTONE
from qtt.runtime.operators.windows import FinalSpec, WindowFinalProcessor
from tests.runtime.fake_state import Handle

ROWS = st.StructType(
    [
        st.StructField(KEY_BYTES, st.BinaryType()),
        st.StructField(WINDOWSTART, st.LongType()),
        st.StructField(WINDOWEND, st.LongType()),
        st.StructField("COUNT", st.LongType()),
    ]
)


def _change(seq: int, start: int, count: int, rowtime: int) -> Row:
    fields: dict[str, Any] = {KEY_BYTES: b"k1", WINDOWSTART: start, WINDOWEND: start + 2, "COUNT": count}
    return Row(**fields, **{SEQ: seq, ORDER: 0, TOMBSTONE: False, ROWTIME: rowtime, ROWPARTITION: 0, ROWOFFSET: seq})


# a two-millisecond tumbling count with one of grace, fed k1 at 0, 1, 2, 1, 0 and 5: the changes
# the aggregate passes on (each carries its window's newest timestamp, as Kafka Streams' do)
CHANGES = [_change(0, 0, 1, 0), _change(1, 0, 2, 1), _change(2, 2, 1, 2), _change(3, 0, 3, 1), _change(4, 0, 4, 1)]
LAST = _change(5, 4, 1, 5)


def _emitted(*, suppressed: bool) -> list[list[tuple[int, int]]]:
    window = s.WindowExpression(type="TUMBLING", size_ms=2, advance_ms=2, grace_ms=1, retention_ms=3, emit_final=True)
    processor, handle = WindowFinalProcessor(FinalSpec("Final", ROWS, window, suppress=suppressed)), Handle()
    out = []
    for batch in (CHANGES, [LAST]):
        processor.init(handle)  # type: ignore[arg-type]
        out.append([(row[WINDOWSTART], row["COUNT"]) for row in processor.handleInputRows(None, iter(batch), None)])
    return out


def test_the_suppress_buffer_emits_every_window_stream_time_has_closed_however_old() -> None:
    # stream time 5 less grace 1 closes [0, 2) and [2, 4)
    assert _emitted(suppressed=True) == [[], [(0, 4), (2, 1)]]


def test_emit_on_window_close_no_longer_finds_a_window_past_the_store_s_retention() -> None:
    # the newest window starts at 4: [0, 2) is past the retention of 3 and never emitted
    assert _emitted(suppressed=False) == [[], [(2, 1)]]


def test_each_batch_reads_the_key_s_state_once_and_writes_it_once() -> None:
    window = s.WindowExpression(type="TUMBLING", size_ms=2, advance_ms=2, grace_ms=1, retention_ms=3, emit_final=True)
    processor, handle = WindowFinalProcessor(FinalSpec("Final", ROWS, window, suppress=False)), Handle()
    processor.init(handle)  # type: ignore[arg-type]
    list(processor.handleInputRows(None, iter([LAST]), None))
    assert handle.trips == [("get", "Final"), ("update", "Final")]


def _session(seq: int, order: int, start: int, end: int, count: int, *, tombstone: bool = False) -> Row:
    fields: dict[str, Any] = {KEY_BYTES: b"k1", WINDOWSTART: start, WINDOWEND: end, "COUNT": count}
    at = {SEQ: seq, ORDER: order, TOMBSTONE: tombstone, ROWTIME: end, ROWPARTITION: 0, ROWOFFSET: seq}
    return Row(**fields, **at)


def _sessions_emitted(*, suppressed: bool) -> list[list[tuple[int, int, int]]]:
    # a count over sessions of gap 5 and grace 6, fed k1 at 0, 4, 12, 11 and 25: each change the
    # session aggregate passes on is stamped with its session's end, a merge first tombstones
    # the sessions it replaces
    window = s.WindowExpression(type="SESSION", size_ms=5, advance_ms=5, grace_ms=6, retention_ms=11, emit_final=True)
    processor, handle = WindowFinalProcessor(FinalSpec("Final", ROWS, window, suppress=suppressed)), Handle()
    batches = [
        [_session(0, 0, 0, 0, 1)],
        [_session(1, 0, 0, 0, 1, tombstone=True), _session(1, 1, 0, 4, 2)],
        [_session(2, 0, 12, 12, 1)],
        [_session(3, 0, 12, 12, 1, tombstone=True), _session(3, 1, 11, 12, 2)],
        [_session(4, 0, 25, 25, 1)],
    ]
    out = []
    for batch in batches:
        processor.init(handle)  # type: ignore[arg-type]
        emitted = processor.handleInputRows(None, iter(batch), None)
        out.append([(row[WINDOWSTART], row[WINDOWEND], row["COUNT"]) for row in emitted])
    return out


def test_the_suppress_buffer_over_sessions_closes_a_session_at_its_end_plus_grace() -> None:
    # stream time 12 less grace 6 closes [0, 4]; 25 closes [11, 12], never the replaced [12, 12]
    assert _sessions_emitted(suppressed=True) == [[], [], [(0, 4, 2)], [], [(11, 12, 2)]]


def test_emit_on_window_close_over_sessions_waits_for_the_gap_too() -> None:
    # stream time less grace less gap: 1 at 12 closes nothing, 14 at 25 closes both
    assert _sessions_emitted(suppressed=False) == [[], [], [], [], [(0, 4, 2), (11, 12, 2)]]
