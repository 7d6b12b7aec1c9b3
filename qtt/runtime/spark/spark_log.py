"""The JVM's console output, copied into a log file that never grows past a cap.

The JVM writes into a pipe; a daemon thread copies it into the log. When the log reaches
its cap, it becomes ``<log>.1`` (replacing the previous one) and a new log starts, so the
two files together never hold more than twice the cap. Pure: no pyspark import.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import IO

#: the default cap, in bytes, of one log file (``QTT_SPARK_LOG_MAX_BYTES``)
DEFAULT_CAP = 10 * 1024 * 1024


def cap_from_environment() -> int:
    """``QTT_SPARK_LOG_MAX_BYTES``, or :data:`DEFAULT_CAP`."""
    text = os.environ.get("QTT_SPARK_LOG_MAX_BYTES", "")
    try:
        return max(int(text), 4096) if text else DEFAULT_CAP
    except ValueError:
        return DEFAULT_CAP


class CappedLog:
    """An append-only log file that rotates to ``<path>.1`` when it reaches ``cap`` bytes."""

    def __init__(self, path: str | Path, cap: int) -> None:
        self.path = Path(path)
        self.cap = cap
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._out: IO[bytes] = self._open()

    def _open(self) -> IO[bytes]:
        if self.path.exists() and self.path.stat().st_size >= self.cap:
            self._rotate()
        return self.path.open("ab")

    def _rotate(self) -> None:
        os.replace(self.path, f"{self.path}.1")

    def write(self, data: bytes) -> None:
        """Append ``data``, rotating first if it would pass the cap."""
        if self._out.tell() + len(data) > self.cap and self._out.tell() > 0:
            self._out.close()
            self._rotate()
            self._out = self.path.open("ab")
        self._out.write(data[-self.cap :])
        self._out.flush()

    def close(self) -> None:
        """Close the current file."""
        self._out.close()


def pump(source: IO[bytes], log: CappedLog) -> threading.Thread:
    """Copy ``source`` into ``log`` on a daemon thread until ``source`` ends."""

    def copy() -> None:
        fd = source.fileno()
        try:
            while chunk := os.read(fd, 65536):
                log.write(chunk)
        except (OSError, ValueError):  # the pipe or the file is gone: the process is ending
            pass
        finally:
            log.close()

    thread = threading.Thread(target=copy, name="qtt-spark-log", daemon=True)
    thread.start()
    return thread
