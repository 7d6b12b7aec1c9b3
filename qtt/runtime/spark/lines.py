"""The Spark lines qtt runs on, and what differs between them.

qtt supports pyspark 4.1, 4.2 and 4.3. One difference matters to a replay: from 4.2 a Python
streaming source controls how much each micro-batch reads (admission control, the
``pyspark.sql.streaming.datasource`` module) and runs under ``Trigger.AvailableNow``; on 4.1 it
cannot, so the replay source steps through its micro-batches one ``latestOffset`` call at a
time under the default trigger, and a query runs until everything available is processed
(:func:`run_to_end`). Outputs, state and checkpoints are the same on every line.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import re
import threading
from typing import TYPE_CHECKING

from qtt.errors import QttError, TimeLimitReached
from qtt.runtime.spark import time_limit

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.streaming import DataStreamWriter, StreamingQuery
    from pyspark.sql.types import StructType

#: the pyspark lines qtt supports, oldest first (``project.dependencies`` pins the same range)
SUPPORTED = ((4, 1), (4, 2), (4, 3))
#: names the pyspark version a ``--spark`` command runs under: a candidate line is tried, not
#: refused (see :mod:`qtt.harness.spark_envs`)
CANDIDATE_ENV = "QTT_SPARK_CANDIDATE"


def line(version: str) -> tuple[int, int]:
    """``"4.2.1"`` -> ``(4, 2)``."""
    major, minor, *_ = (int(part) if part.isdigit() else 0 for part in [*version.split("."), "0"])
    return major, minor


def pyspark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def check_supported(version: str | None = None) -> None:
    """Raise a :class:`QttError` naming the supported lines when ``version`` (default: the
    installed pyspark) is outside them, unless it is the candidate a ``--spark`` command tries."""
    found = version or pyspark_version()
    if line(found) not in SUPPORTED and os.environ.get(CANDIDATE_ENV) != found:
        names = ", ".join(f"{a}.{b}" for a, b in SUPPORTED)
        raise QttError(
            f"pyspark {found} is not a Spark line qtt supports (it supports {names})",
            hint="install a supported line: pip install 'pyspark[connect]>=4.1,<4.4'",
        )


@functools.cache
def admission_control() -> bool:
    """Whether Python streaming sources choose each micro-batch's size (pyspark 4.2 and later)."""
    return importlib.util.find_spec("pyspark.sql.streaming.datasource") is not None


def run_to_end(writer: DataStreamWriter, limit: float | None = None) -> StreamingQuery:
    """Start ``writer``'s query and return once it processed every input it has.

    From pyspark 4.2: ``Trigger.AvailableNow``, the query stops by itself. On 4.1 the default
    trigger, until nothing new is available, then the query is stopped. A query that fails
    raises, or reports it in ``exception()``, as on every line.

    Raises:
        TimeLimitReached: the query had not ended after ``limit`` seconds (default: the time
            limit in force, :mod:`qtt.runtime.spark.time_limit`); it was stopped.
    """
    limit = time_limit.seconds() if limit is None else limit
    if admission_control():
        query = writer.trigger(availableNow=True).start()
        if not query.awaitTermination(limit):  # type: ignore[arg-type]  # seconds; a float works
            query.stop()
            raise TimeLimitReached(limit)
        return query
    query = writer.trigger(processingTime="0 seconds").start()
    reached = threading.Event()

    def stop_at_limit() -> None:
        reached.set()
        query.stop()

    stopper = threading.Timer(limit, stop_at_limit)
    stopper.start()
    try:
        query.processAllAvailable()
    except Exception:
        if reached.is_set():  # stopped at the limit: that is why it ended
            raise TimeLimitReached(limit) from None
        raise
    finally:
        stopper.cancel()
        query.stop()
    if reached.is_set():
        raise TimeLimitReached(limit)
    return query


def arrow_schema(schema: StructType) -> pa.Schema:
    """Spark ``schema`` as an Arrow schema, timestamps in UTC (from 4.2 pyspark names the zone,
    4.1 takes ``timestamp_utc``)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema, timestamp_utc=True)  # type: ignore[call-arg]  # pyspark 4.1


#: what an older line lacks that qtt uses: the first line that has it, the feature, and how
#: Spark's analyzer says so when a plan needs it
GAPS = (
    (  # first: 4.2 casts TIME to and from text, not yet to and from TIMESTAMP
        (4, 3),
        "TIME values cast to and from TIMESTAMP (CAST, FORMAT_TIME)",
        re.compile(r'cast "TIME\(\d\)" to "TIMESTAMP"|cast "TIMESTAMP" to "TIME\(\d\)"'),
    ),
    (
        (4, 2),
        "TIME values cast to and from text (CAST, FORMAT_TIME)",
        re.compile(r'cast "TIME\(\d\)" to|to "TIME\(\d\)"|AS TIME\(\d\)\)" due to data type mismatch'),
    ),
    ((4, 2), "TIME values made from milliseconds (PARSE_TIME, TIMEADD, TIMESUB)", re.compile(r"`time_from_millis`")),
    (  # 4.2.1 fails the sink's Python encoder of such a row: INTERNAL_ERROR "Cannot evaluate expression: run(...)"
        (4, 3),
        "a row encoded for its sink whose expression calls INSTR inside a lambda (FILTER, TRANSFORM, REDUCE)",
        re.compile(r"Cannot evaluate expression: run\("),
    ),
)


def lacking(error: str, version: str | None = None) -> str | None:
    """The feature a plan needs that this pyspark line lacks, when Spark's ``error`` is one of
    the :data:`GAPS` of the installed line (or ``version``): ``"...: needs pyspark 4.2 or later
    (this is 4.1.4)"``; None for any other error."""
    found = version or pyspark_version()
    for first, feature, signature in GAPS:
        if line(found) < first and signature.search(error):
            return f"{feature}: needs pyspark {first[0]}.{first[1]} or later (this is {found})"
    return None


def quiet_query_context_logs() -> None:
    """Spark 4.1 logs each analysis error with a DataFrame context as a JSON line on stderr,
    even one qtt expects and reports itself; the run's output is qtt's."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # pragma: no cover - every supported line has it
        return
    for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True
