"""Which failures are the machine's, not the plan's: one list, matched on Spark's messages.

A replay that fails for one of these reasons proved nothing about its plan: the executor
retries it, and if it still fails, reports it as :class:`~qtt.errors.InfrastructureError`
with Spark's reason, apart from the verdicts. Pure: no pyspark import.
"""

from __future__ import annotations

import re

from qtt.errors import LineGapError, QueryStoppedError, ReplayError
from qtt.runtime.spark import lines

#: Spark's and Py4J's words for "the machine could not run this", lower case
PATTERNS: tuple[str, ...] = (
    # PythonWorkerFactory.createSimpleWorker (the Python streaming source runner, the
    # transformWithStateInPandas pre-init runner): a hard-coded 10 s wait in Spark 4.3
    "python worker failed to connect back",
    "timed out while waiting for the python worker to connect back",
    # the daemon's fork answer (a hard-coded 60 s wait) and a daemon that died
    "python daemon failed to launch worker",
    "failed to open socket to python daemon",
    "lost connection to python daemon",
    "python worker exited unexpectedly",
    "worker exited unexpectedly (crashed)",
    "cannot_open_socket",
    "connection refused",
    "connection reset",
    "broken pipe",
    "sockettimeoutexception",
    "socket.timeout",
    "timed out",
    # the Python driver lost its JVM (Py4J network errors)
    "answer from java side is empty",
    "error while sending or receiving",
    "error while receiving",
    "py4jnetworkerror",
    "java gateway process exited",
    "sparkcontext was shut down",
    "cannot call methods on a stopped sparkcontext",
    "outofmemoryerror",
    "no space left on device",
)

_PATTERN = re.compile("|".join(re.escape(p) for p in PATTERNS))

#: the one hint of an infrastructure error
HINT = "rerun it when the machine is less busy; the Spark log (QTT_SPARK_LOG) has the JVM's side"

#: how many times a replay that failed for an infrastructure reason is tried again
RETRIES = 2


def matches(text: str) -> bool:
    """Whether ``text`` (an exception's message, or Spark's error) names an infrastructure failure."""
    return _PATTERN.search(text.lower()) is not None


def is_infrastructure(error: BaseException) -> bool:
    """Whether ``error``, or any exception it was raised from, is an infrastructure failure."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__name__ == "Py4JNetworkError" or matches(f"{type(current).__name__}: {current}"):
            return True
        current = current.__cause__ or current.__context__
    return False


def reason(error: BaseException, width: int = 400) -> str:
    """Spark's reason in one bounded line: the first line that names the infrastructure failure."""
    text = str(error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = next((line for line in lines if matches(line)), lines[0] if lines else type(error).__name__)
    return line if len(line) <= width else line[: width - 3] + "..."


def java_reason(error: BaseException) -> str:
    """The first line of what the JVM said: a Py4J error's Java exception (Spark's error class
    and message), else :func:`first_line`."""
    java = getattr(error, "java_exception", None)
    if java is not None:
        text = str(java).strip()
        if text:
            return text.splitlines()[0][:400]
    return first_line(error)


#: a Spark error class as its messages show it (``[CANNOT_LOAD_STATE_STORE.UNCATEGORIZED]``)
_ERROR_CLASS = r"\[([A-Z][A-Z0-9_]*(?:\.[A-Z][A-Z0-9_]*)*)\]"
#: a Spark error class and its message, as a cause inside a longer failure's text
_SPARK_CAUSE = re.compile(_ERROR_CLASS + r" [^\n]*")
#: the classes that only wrap the one that says what went wrong
_WRAPPERS = ("STREAM_FAILED", "FOREACH_BATCH_USER_FUNCTION_ERROR")


def error_classes(message: str) -> list[str]:
    """The Spark error classes a failure's message names, each once, in order."""
    return list(dict.fromkeys(re.findall(_ERROR_CLASS, message)))


def with_cause(error: BaseException) -> str:
    """:func:`first_line`, and the innermost Spark error class with its message when the first
    line only wraps it (a streaming query that failed in its foreachBatch names no cause)."""
    head = first_line(error)
    causes = [found for found in _SPARK_CAUSE.finditer(str(error)) if found[1] not in _WRAPPERS]
    if not causes or causes[-1][1] in head:
        return head
    return f"{head} (caused by {causes[-1][0][:300]})"


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message (its type's name when it has none)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def query_failure(error: BaseException, message: str) -> ReplayError:
    """What a failed streaming query means: the stop a :class:`~qtt.errors.QueryStops` signalled
    in one of its operators (a verdict), else ``message`` (Spark's failure, qtt's to explain)."""
    stopped = QueryStoppedError.found_in(str(error))
    if stopped is not None:
        return stopped
    gap = lines.lacking(str(error))
    return LineGapError(gap) if gap is not None else ReplayError(message)
