"""The status of a case variant or historical plan: one table for the runner, the reports,
the CLI, the pytest plugin and the benchmark.

``passed``; ``failed`` (qtt ran it and it does not hold); ``skipped`` (it uses a feature
qtt does not support yet, named in the reason, or is disabled); ``error`` (the case file is
malformed, or qtt itself broke). The values are the JSON report's strings.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """A result's status; its value is what the JSON report writes."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"

    @property
    def mark(self) -> str:
        """The one-character progress mark: ``.``, ``F``, ``s`` or ``E``."""
        return _MARKS[self]

    @property
    def bad(self) -> bool:
        """Whether this status fails a run (exit status 1, a failed pytest item)."""
        return self in (Status.FAILED, Status.ERROR)


_MARKS = {Status.PASSED: ".", Status.FAILED: "F", Status.SKIPPED: "s", Status.ERROR: "E"}
