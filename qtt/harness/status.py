"""The status of a case variant or historical plan: one table for the runner, the reports,
the CLI, the pytest plugin and the benchmark.

``passed``; ``failed`` (qtt ran it and it does not hold); ``skipped`` (it uses a feature
qtt does not support yet, named in the reason, or is disabled); ``error`` (the case file is
malformed, or qtt itself broke); ``corrupt`` (a stored golden is damaged: a historical
folder's files differ from the ledger, or its stored checkpoint cannot be read or does not
fit its manifest; the runtime was not judged); ``infrastructure error`` (Spark or the machine
could not run it, even after retries: nothing was proven either way); ``timed out`` (a
streaming query of its replay did not end within the time limit and was stopped: what had
arrived by then is shown, the rest of the run goes on); ``quarantined`` (it
fails, and a mark of :mod:`qtt.harness.upkeep.quarantine` says it is known to, until a release). The
values are the JSON report's strings.

Exit status of a run (:func:`exit_status`): 0 when every result passed or was skipped; 1
when one failed, errored, is corrupt or timed out (a verdict, whatever else happened); 3 when the only
bad results are infrastructure errors (rerun it: nothing was proven). 2 stays the usage
error.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Status(StrEnum):
    """A result's status; its value is what the JSON report writes."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"
    CORRUPT = "corrupt"
    INFRA = "infrastructure error"
    TIMED_OUT = "timed out"
    QUARANTINED = "quarantined"

    @property
    def mark(self) -> str:
        """The one-character progress mark: ``.``, ``F``, ``s``, ``E``, ``C``, ``I``, ``T`` or ``Q``."""
        return _MARKS[self]

    @property
    def bad(self) -> bool:
        """Whether this status fails a run (a non-zero exit status, a failed pytest item)."""
        return self in (Status.FAILED, Status.ERROR, Status.CORRUPT, Status.INFRA, Status.TIMED_OUT)


_MARKS = {
    Status.PASSED: ".",
    Status.FAILED: "F",
    Status.SKIPPED: "s",
    Status.ERROR: "E",
    Status.CORRUPT: "C",
    Status.INFRA: "I",
    Status.TIMED_OUT: "T",
    Status.QUARANTINED: "Q",
}

#: exit statuses of a run: nothing bad, a failure or error, only infrastructure errors
EXIT_OK, EXIT_FAILED, EXIT_INFRASTRUCTURE = 0, 1, 3


def exit_status(statuses: Iterable[Status]) -> int:
    """The exit status of a run whose results have ``statuses``; see the module's docstring."""
    seen = set(statuses)
    if seen & {Status.FAILED, Status.ERROR, Status.CORRUPT, Status.TIMED_OUT}:
        return EXIT_FAILED
    return EXIT_INFRASTRUCTURE if Status.INFRA in seen else EXIT_OK
