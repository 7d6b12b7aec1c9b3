"""The Spark lines qtt runs on, and what differs between them.

qtt supports pyspark 4.1, 4.2 and 4.3. One difference matters to a replay: from 4.2 a Python
streaming source controls how much each micro-batch reads (admission control, the
``pyspark.sql.streaming.datasource`` module) and runs under ``Trigger.AvailableNow``; on 4.1 it
cannot, so the replay source steps through its micro-batches one ``latestOffset`` call at a
time under the default trigger, and a query runs until everything available is processed
(:func:`run_to_end`). Outputs, state and checkpoints are the same on every line.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from qtt.errors import QttError

if TYPE_CHECKING:
    from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

#: the pyspark lines qtt supports, oldest first (``project.dependencies`` pins the same range)
SUPPORTED = ((4, 1), (4, 2), (4, 3))


def line(version: str) -> tuple[int, int]:
    """``"4.2.1"`` -> ``(4, 2)``."""
    major, minor, *_ = (int(part) if part.isdigit() else 0 for part in [*version.split("."), "0"])
    return major, minor


def pyspark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def check_supported(version: str | None = None) -> None:
    """Raise a :class:`QttError` naming the supported lines when ``version`` (default: the
    installed pyspark) is outside them."""
    found = version or pyspark_version()
    if line(found) not in SUPPORTED:
        names = ", ".join(f"{a}.{b}" for a, b in SUPPORTED)
        raise QttError(
            f"pyspark {found} is not a Spark line qtt supports (it supports {names})",
            hint="install a supported line: pip install 'pyspark[connect]>=4.1,<4.4'",
        )


def admission_control() -> bool:
    """Whether Python streaming sources choose each micro-batch's size (pyspark 4.2 and later)."""
    return importlib.util.find_spec("pyspark.sql.streaming.datasource") is not None


def run_to_end(writer: DataStreamWriter) -> StreamingQuery:
    """Start ``writer``'s query and return once it processed every input it has.

    From pyspark 4.2: ``Trigger.AvailableNow``, the query stops by itself. On 4.1 the default
    trigger, until nothing new is available, then the query is stopped. A query that fails
    raises, or reports it in ``exception()``, as on every line.
    """
    if admission_control():
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination()
        return query
    query = writer.trigger(processingTime="0 seconds").start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    return query
