"""The time limit of a replay's streaming queries.

Every streaming query a replay runs in must end within the limit: one that does not is
stopped, and what its sink had collected by then comes back in
:class:`~qtt.errors.TimeLimitReached`. The harness makes that the ``timed out`` status, with
what had arrived on each topic (:mod:`qtt.harness.replay.time_limits`), and goes on with the
next item. Spark's own timeouts are minutes long or infinite; a hanging source, a stuck
Python worker or a runaway plan must not hold a run of thousands of replays.

The limit is one per process, kept in the environment (``QTT_TIME_LIMIT``, seconds), so that
the threads of a run and pytest-xdist's workers see the same one; ``qtt run --time-limit`` and
``pytest --qtt-time-limit`` set it.
"""

from __future__ import annotations

import math
import os

from qtt.errors import QttError

ENV = "QTT_TIME_LIMIT"
#: generous for a loaded 2-core machine: a group's longest query (a stage of 64 stateful
#: replays) takes well under a minute there
DEFAULT_SECONDS = 600.0


def seconds() -> float:
    """The limit in force: ``QTT_TIME_LIMIT`` if set, else :data:`DEFAULT_SECONDS`."""
    text = os.environ.get(ENV)
    return DEFAULT_SECONDS if not text else parse(text, where=f"the environment variable {ENV}")


def set_seconds(value: float) -> None:
    """Set the limit for this process and the processes it starts."""
    os.environ[ENV] = f"{value:g}"


def parse(text: str, *, where: str = "--time-limit") -> float:
    """``"90"`` or ``"2.5"`` as seconds, above zero."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise QttError(
            f"{where}: {text!r} is not a time limit; expected seconds above zero (for example 600)",
            hint=f"the default is {DEFAULT_SECONDS:g} s; raise it on a slow machine",
        )
    return value
