"""The result of one item of a run: a case variant, a SQL test, a historical or restored folder.

Every runner returns :class:`CaseResult` values; the reports (:mod:`qtt.harness.report`), the
``--json`` lines and the pytest items read them. Its status is a :class:`~qtt.harness.status.Status`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qtt.harness.status import Status

if TYPE_CHECKING:
    from qtt.harness.replay.compare import Comparison
    from qtt.harness.replay.driver import OutputRecord, ReplayResult
    from qtt.harness.replay.topic_serdes import TopicSerde
    from qtt.plan.statements import PlannedCase


@dataclass
class CaseResult:
    """The outcome of one case variant (or one historical plan)."""

    file: str
    case: str
    variant: str
    status: Status
    reason: str = ""
    seconds: float = 0.0
    comparison: Comparison | None = None
    problems: list[str] = field(default_factory=list)
    log_problems: list[str] = field(default_factory=list)
    planned: PlannedCase | None = None
    replay: ReplayResult | None = None
    #: what the expected outputs were compared with, per topic: the records the case wrote there,
    #: then the queries' (``runner.written_topics``), and the topics' serdes; None: not compared
    compared_with: tuple[dict[str, list[OutputRecord]], dict[str, TopicSerde]] | None = None
    kind: str = "case"
    #: the one command that shows or fixes this result, for failure reports
    hint: str = ""

    @property
    def label(self) -> str:
        """``case`` or ``case [variant]``, for people."""
        return f"{self.case} [{self.variant}]" if self.variant else self.case

    def as_json(self) -> dict[str, Any]:
        """One line of the ``--json`` report."""
        return {
            "file": self.file,
            "case": self.case,
            "variant": self.variant,
            "status": self.status,
            "reason": self.reason,
            "seconds": round(self.seconds, 3),
            "kind": self.kind,
        }
