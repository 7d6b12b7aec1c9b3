"""Progress of a long run on a stream: ``replayed X/Y <noun> (Ns)``, never silent for long.

A stage (case variants, SQL tests, historical plans, restored checkpoints, a scenario) reports
``(done, total)`` whenever items finish. Items finish in batches, and one batch of stateful
queries can take a minute, so a heartbeat thread repeats the current line whenever nothing was
printed for ``every`` seconds: a user always sees that the run is alive, where it is and how
long it has taken.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

#: the longest a run stays silent, in seconds
EVERY = 10.0


class ProgressLine:
    """One run's progress on ``stream``, as a context manager that runs the heartbeat.

    On a terminal the line is rewritten in place; elsewhere (a CI log, a pipe) each update is a
    line of its own. ``quiet`` prints nothing.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        every: float = EVERY,
        quiet: bool = False,
        clock: Callable[[], float] = time.perf_counter,
        began: float | None = None,
    ) -> None:
        self.stream = stream
        self.every = every
        self.quiet = quiet
        self.clock = clock
        self.began = clock() if began is None else began
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._live = bool(getattr(stream, "isatty", lambda: False)())
        self._noun = ""
        self._done = 0
        self._total: int | None = None
        self._printed = self.began
        #: set each time the heartbeat repeats the line (tests wait on it; nothing sleeps)
        self.beat = threading.Event()

    def stage(self, noun: str) -> Callable[[int, int], None]:
        """The ``(done, total)`` callback of a stage named ``noun``; the stage starts now."""
        with self._lock:
            self._noun, self._done, self._total = noun, 0, None

        def progress(done: int, total: int) -> None:
            with self._lock:
                if noun != self._noun:  # a stage that ended long ago: its counts are history
                    return
                self._done, self._total = done, total
                self._print(final=done >= total)

        return progress

    def line(self) -> str:
        """The current line (without the terminal's carriage return)."""
        seconds = f"({self.clock() - self.began:.0f}s)"
        if self._total is None:
            return f"  replaying {self._noun} {seconds}"
        return f"  replayed {self._done}/{self._total} {self._noun} {seconds}"

    def __enter__(self) -> ProgressLine:
        if not self.quiet and self.every > 0:
            self._thread = threading.Thread(target=self._heartbeat, name="qtt-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self._live and self._noun and self._total != self._done:
                self.stream.write("\n")  # leave the terminal's line whole
                self.stream.flush()

    def _heartbeat(self) -> None:
        while not self._stop.wait(max(0.0, self._printed + self.every - self.clock())):
            with self._lock:
                if not self._noun:  # no stage yet: nothing to repeat
                    self._printed = self.clock()
                elif self.clock() - self._printed >= self.every:
                    self._print(final=False)
                    self.beat.set()

    def _print(self, *, final: bool) -> None:
        """Print the current line; the caller holds the lock."""
        self._printed = self.clock()
        if self.quiet:
            return
        if self._live:
            self.stream.write("\r" + self.line() + ("\n" if final else ""))
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
