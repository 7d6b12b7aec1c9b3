"""Windowed keys as Kafka Streams writes them, around the bytes of the key's own format.

A time-windowed key (tumbling and hopping windows) is the key's bytes followed by the window
start as an 8-byte big-endian long; its end is not stored, so reading it needs the window
size. A session-windowed key is the key's bytes followed by the session's end and then its
start, 8 bytes each (Kafka Streams' ``TimeWindowedSerializer`` and ``SessionWindowedSerializer``).
A windowed key is partitioned by the key's own bytes, so every window of a key lands on one
partition.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from qtt.errors import SerdeError

SESSION = "SESSION"
_LONG = struct.Struct(">q")


@dataclass(frozen=True)
class WindowBounds:
    """A key's window: start and end in epoch millis, and ``time`` or ``session``."""

    start: int
    end: int
    type: str


def window_kind(window_type: str) -> str:
    """The ``type`` a case file gives a window of this ``WINDOW`` type."""
    return "session" if window_type.upper() == SESSION else "time"


def wrap(inner: bytes | None, start: int, end: int, window_type: str) -> bytes:
    """The windowed key bytes of ``inner`` (a null key has the empty key's bytes)."""
    head = inner or b""
    if window_type.upper() == SESSION:
        return head + _LONG.pack(end) + _LONG.pack(start)
    return head + _LONG.pack(start)


def unwrap(data: bytes, window_type: str, size_ms: int | None) -> tuple[bytes, WindowBounds]:
    """The key's own bytes and its window, from windowed key bytes.

    Raises:
        SerdeError: the bytes are too short to hold a window.
    """
    session = window_type.upper() == SESSION
    suffix = 16 if session else 8
    if len(data) < suffix:
        msg = f"a {window_type.lower()}-windowed key needs at least {suffix} bytes, got {len(data)}"
        raise SerdeError(msg)
    inner = data[:-suffix]
    if session:
        end = _LONG.unpack_from(data, len(data) - 16)[0]
        start = _LONG.unpack_from(data, len(data) - 8)[0]
        return inner, WindowBounds(start, end, "session")
    start = _LONG.unpack_from(data, len(data) - 8)[0]
    if size_ms is None:
        msg = f"a {window_type.lower()}-windowed key needs the window size to know its end"
        raise SerdeError(msg)
    return inner, WindowBounds(start, start + size_ms, "time")
