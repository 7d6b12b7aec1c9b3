"""Windowed keys in Spark columns: Kafka Streams' layout (:mod:`qtt.serde.windowed`) around
the bytes of the key format, written by sinks and read by windowed sources."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import WINDOWEND, WINDOWSTART
from qtt.runtime.build.names import INNER_KEY, WINDOW_END, WINDOW_START, col

__all__ = ["INNER_KEY", "source_window", "window_suffix", "windowed_key"]


def source_window(key: Column, window: s.WindowInfo) -> tuple[Column, list[Column]]:
    """A windowed key's own bytes, and its window as columns (``WINDOWSTART``, ``WINDOWEND`` and
    the runtime's copies): the reverse of :func:`windowed_key`. Bytes too short to hold a
    window keep them whole and have no window."""

    def long_at(position: int) -> Column:  # the signed 8-byte big-endian long ``position`` bytes from the end
        return F.conv(F.hex(F.expr(f"substring(key, -{position}, 8)")), 16, -10).cast("long")

    session = window.type == "SESSION"
    suffix = 16 if session else 8
    whole = F.length(key) >= suffix
    inner = F.when(whole, F.expr(f"substring(key, 1, length(key) - {suffix})")).otherwise(key)
    start = F.when(whole, long_at(8))
    end = F.when(whole, long_at(16)) if session else start + F.lit(window.size_ms or 0)
    return inner, [
        start.alias(WINDOWSTART),
        end.alias(WINDOWEND),
        start.alias(WINDOW_START),
        end.alias(WINDOW_END),
    ]


def windowed_key(inner: Column, rows: DataFrame, window: s.WindowInfo) -> Column:
    """The key bytes followed by the window: its start (time windows), or end and start
    (session windows), each an 8-byte big-endian long (:mod:`qtt.serde.windowed`)."""
    if WINDOW_START not in rows.columns:
        raise KeyError(WINDOW_START)

    return F.concat(F.coalesce(inner, F.lit(b"").cast("binary")), *_window_parts(window))


def window_suffix(window: s.WindowInfo) -> Column:
    """The bytes :func:`windowed_key` puts after a key's own bytes (null when a bound is)."""
    return F.concat(*_window_parts(window))


def _window_parts(window: s.WindowInfo) -> list[Column]:
    """Each window bound after the key: an 8-byte big-endian long."""

    def long_bytes(column: Column) -> Column:
        return F.unhex(F.lpad(F.hex(column.cast("long")), 16, "0"))

    bounds = [col(WINDOW_END), col(WINDOW_START)] if window.type == "SESSION" else [col(WINDOW_START)]
    return [long_bytes(b) for b in bounds]
