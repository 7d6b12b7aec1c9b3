"""The fuzz suite's two hypothesis profiles, and which one this run uses.

The quick profile runs in every test run; the long one only under ``pytest -m fuzz``
(``conftest.py`` picks it before the test modules are imported, so each test's
``@fuzz_settings`` sees the choice).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

F = TypeVar("F", bound=Callable[..., object])

ROOT = Path(__file__).resolve().parents[2]

QUICK, LONG = "qtt-fuzz-quick", "qtt-fuzz-long"
#: examples per target in the long profile; QTT_FUZZ_EXAMPLES overrides it.
LONG_EXAMPLES = int(os.environ.get("QTT_FUZZ_EXAMPLES", "10000"))

_COMMON = {
    # failing examples are replayed first on the next run; .hypothesis/ is git-ignored
    "database": DirectoryBasedExampleDatabase(str(ROOT / ".hypothesis" / "examples")),
    # Examples take milliseconds and a stall takes minutes (1E+999999 took 90 s); a loaded
    # 2-core CI machine runs at a third of the speed, and hypothesis fails a test whose
    # example is slow only once ("unreliable timings"), so the bound is seconds, not ms.
    "deadline": timedelta(seconds=5),
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
settings.register_profile(QUICK, max_examples=30, **_COMMON)
settings.register_profile(LONG, max_examples=LONG_EXAMPLES, **_COMMON)

active = QUICK


def fuzz_settings(test: F) -> F:
    """Apply the profile this run uses (see module docstring) to a ``@given`` test."""
    return settings(settings.get_profile(active))(test)


#: frames a default interpreter (limit 1000) leaves to qtt below the CLI's or pytest's own.
PRODUCTION_FRAMES = 900


@contextlib.contextmanager
def production_stack() -> Iterator[None]:
    """Run with the stack room qtt has in production.

    Hypothesis raises the recursion limit while it runs a test, which would hide the
    RecursionErrors a user meets; this sets it back to what a default interpreter leaves.
    It also stops the code below if it never ends (:func:`stall_guard`).
    """
    old = sys.getrecursionlimit()
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back  # type: ignore[assignment]
    sys.setrecursionlimit(depth + PRODUCTION_FRAMES)
    try:
        with stall_guard():
            yield
    finally:
        sys.setrecursionlimit(old)


#: seconds after which an example is stopped: well past the deadline, for examples that never end.
STALL_SECONDS = 20


class Stalled(Exception):
    """An example ran for :data:`STALL_SECONDS`: qtt is stuck (a loop that never ends)."""


@contextlib.contextmanager
def stall_guard(seconds: float = STALL_SECONDS) -> Iterator[None]:
    """Raise :class:`Stalled` inside the code below if it runs for ``seconds``.

    Hypothesis's deadline judges an example only after it returns; an endless loop would
    hang the run instead of failing it. SIGALRM interrupts Python code (main thread only;
    elsewhere the guard does nothing).
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Stalled(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
