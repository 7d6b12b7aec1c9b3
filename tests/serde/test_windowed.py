"""Windowed keys: Kafka Streams' byte layout around the key's own bytes."""

from __future__ import annotations

import pytest

from qtt.errors import SerdeError
from qtt.serde import windowed


def test_a_time_windowed_key_is_the_key_then_the_start_as_a_big_endian_long() -> None:
    data = windowed.wrap(b"a", 30_000, 60_000, "TUMBLING")
    assert data == b"a" + (30_000).to_bytes(8, "big")
    assert windowed.unwrap(data, "HOPPING", 30_000) == (b"a", windowed.WindowBounds(30_000, 60_000, "time"))


def test_a_session_windowed_key_is_the_key_then_end_then_start() -> None:
    data = windowed.wrap(b"k", 1_000, 6_000, "SESSION")
    assert data == b"k" + (6_000).to_bytes(8, "big") + (1_000).to_bytes(8, "big")
    assert windowed.unwrap(data, "SESSION", None) == (b"k", windowed.WindowBounds(1_000, 6_000, "session"))


def test_negative_bounds_keep_their_sign() -> None:
    data = windowed.wrap(b"", -5, 5, "TUMBLING")
    assert windowed.unwrap(data, "TUMBLING", 10)[1] == windowed.WindowBounds(-5, 5, "time")


def test_bytes_too_short_for_a_window_are_a_serde_error() -> None:
    with pytest.raises(SerdeError, match="session-windowed key needs at least 16 bytes, got 9"):
        windowed.unwrap(b"x" * 9, "SESSION", None)
    with pytest.raises(SerdeError, match="needs the window size"):
        windowed.unwrap(b"x" * 9, "TUMBLING", None)
