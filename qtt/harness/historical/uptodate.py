"""The up-to-date check: today's plan of every case must equal its newest persisted plan.

It fails when a planner change has not been snapshotted, names the steps that changed, and
points at the command that fixes it. No Spark is needed. ``qtt snapshot`` starts from the
same comparison (:func:`check_variant`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from qtt.errors import PlanFileError, QttError, SqlError, UnsupportedFeatureError
from qtt.harness.cases.model import CaseVariant
from qtt.harness.cases.slugs import former_slugs, slug_of
from qtt.harness.historical import ledger, plan_store
from qtt.harness.replay.runner import plan_variant, unevaluated
from qtt.plan.ir import codec
from qtt.plan.ir.diff import diff_lines
from qtt.plan.ir.steps import Plan

FIX = "qtt snapshot"
#: the one hint of every out-of-date plan
HINT = f"run `{FIX}` to persist today's plan (after checking the diff)"
#: the hint of a case whose statements do not plan
ERROR_HINT = "fix the statements, or declare the error the case expects (expectedException)"
#: the most lines of a step diff ``qtt check`` prints per case
DIFF_LINES = 40

#: A case without a plan: it uses a feature qtt does not support yet (``qtt run`` skips it).
UNSUPPORTED = "unsupported"
#: A case without a plan: it expects an error (``expectedException``).
EXPECTED_ERROR = "expected error"
#: A case without a plan: it is disabled (``enabled: false``).
DISABLED = "disabled"


class PlanStatus(StrEnum):
    """Whether today's plan of a case variant is the newest persisted one."""

    UP_TO_DATE = "up to date"
    CHANGED = "changed"
    #: no plan was ever persisted for the case (a new case)
    MISSING = "new"
    #: the case has no plan to check: it uses an unsupported feature, expects an error or is
    #: disabled (:attr:`CheckEntry.label` says which)
    SKIPPED = "skipped"
    #: the statements do not parse or plan, and the case does not expect an error
    ERROR = "error"
    #: the newest persisted plan cannot be read: named with its path, never taken for "none yet"
    CORRUPT = "corrupt"


#: The cases without a plan by design: ``qtt check`` prints them only with ``-v``.
BY_DESIGN = (EXPECTED_ERROR, DISABLED)

#: ``qtt check``'s words, in its summary's order: each case variant is counted under one.
LABELS = (
    PlanStatus.UP_TO_DATE.value,
    PlanStatus.CHANGED.value,
    PlanStatus.MISSING.value,
    UNSUPPORTED,
    EXPECTED_ERROR,
    DISABLED,
    PlanStatus.ERROR.value,
    PlanStatus.CORRUPT.value,
)
#: the words the summary shows even at 0 (disabled and corrupt only when there are some)
_ALWAYS = frozenset(LABELS) - {DISABLED, PlanStatus.CORRUPT.value}


def summary(entries: Sequence[CheckEntry], *, unloadable: int = 0) -> str:
    """``256 up to date, 0 changed, 0 new, ...``: the entries counted by :attr:`CheckEntry.label`.

    ``unloadable`` cases (or files) that do not load count as errors.
    """
    counts = Counter(entry.label for entry in entries)
    counts[PlanStatus.ERROR.value] += unloadable
    return ", ".join(f"{counts[word]} {word}" for word in LABELS if word in _ALWAYS or counts[word])


@dataclass
class CheckEntry:
    """The up-to-date check of one case variant.

    ``plan`` is today's plan (None when skipped or in error); ``folder`` the newest persisted
    folder and ``previous`` its plan (None when it is corrupt); ``error`` why planning failed,
    when it did (skipped for an unsupported feature, an error otherwise), or why the newest
    persisted plan is corrupt.
    """

    variant: CaseVariant
    slug: str
    status: PlanStatus
    reason: str = ""
    diff: list[str] = field(default_factory=list)
    plan: Plan | None = None
    folder: plan_store.HistoricalFolder | None = None
    previous: Plan | None = None
    error: QttError | None = None

    @property
    def label(self) -> str:
        """The entry's word in ``qtt check``'s lines and summary: one of :data:`LABELS`."""
        if self.status != PlanStatus.SKIPPED:
            return self.status.value
        if isinstance(self.error, UnsupportedFeatureError):
            return UNSUPPORTED
        return DISABLED if not self.variant.enabled else EXPECTED_ERROR

    def lines(self) -> list[str]:
        """What ``qtt check`` prints for this entry: ``LABEL file: case: reason``, then its diff, indented."""
        reason = self.reason
        if isinstance(self.error, UnsupportedFeatureError):
            reason = self.error.feature  # the label says "unsupported" already
        first, *rest = reason.splitlines() or [""]
        lines = [f"{self.label.upper()} {self.variant.file}: {self.variant.label}: {first}"]
        return lines + [f"    {line}" for line in [*rest, *self.diff[:DIFF_LINES]]]

    @property
    def ok(self) -> bool:
        """Whether the check passes: the plan is up to date, or there is none to check."""
        return self.status in (PlanStatus.UP_TO_DATE, PlanStatus.SKIPPED)

    @property
    def hint(self) -> str:
        """The one command or step that fixes this entry ("" when it passes)."""
        if self.status == PlanStatus.ERROR:
            return ERROR_HINT
        if self.status == PlanStatus.CORRUPT and self.folder is not None:
            # a new snapshot would bury the damage under a newer folder
            path = self.folder.path / plan_store.PLAN_FILE
            return f"restore it from version control (git checkout -- {path}); persisted folders are never rewritten"
        return "" if self.ok else HINT


def current_plan(variant: CaseVariant) -> Plan | None:
    """Today's plan of a variant, or None when it has none (expected error, disabled).

    Raises:
        UnsupportedFeatureError: the case uses a feature qtt does not support.
        SqlError: the statements do not plan.
    """
    if not variant.enabled or variant.expected_exception is not None:
        return None
    return plan_variant(variant, unevaluated).plan


def check_variant(variant: CaseVariant, root: Path, *, file: str | Path | None = None) -> CheckEntry:
    """Compare today's plan of ``variant`` with its newest plan persisted under ``root``.

    Args:
        variant: the case variant.
        root: the historical plans directory.
        file: where the case file is, when ``variant.file`` is only a display name
            (see :func:`qtt.harness.cases.slugs.slug_of`).
    """
    slug = slug_of(variant, root, file=file)
    try:
        plan = current_plan(variant)
    except UnsupportedFeatureError as e:
        return CheckEntry(variant, slug, PlanStatus.SKIPPED, f"unsupported: {e.feature}", error=e)
    except SqlError as e:
        # the error's one position (the statement's line in the case file, and the place inside it)
        reason = "does not plan: " + e.describe(file_and_case=False, hint=False)
        return CheckEntry(variant, slug, PlanStatus.ERROR, reason, error=e)
    if plan is None:
        if not variant.enabled:
            reason = "no plan: the case is disabled (enabled: false)"
        else:
            expected = variant.expected_exception.type if variant.expected_exception else None
            reason = f"no plan: the case expects an error ({expected or 'any'})"
        return CheckEntry(variant, slug, PlanStatus.SKIPPED, reason)
    # a renamed case keeps its history: the folders under its former names are its own
    folder = plan_store.newest_of(root, [slug, *former_slugs(variant, root, file=file)])
    if folder is None:
        reason = f"never persisted: no plan under {root / slug}; run `{FIX}`"
        return CheckEntry(variant, slug, PlanStatus.MISSING, reason, diff_lines(None, plan), plan)
    try:
        persisted = folder.read(plan_store.PLAN_FILE)
        if persisted == codec.dumps(plan):
            return CheckEntry(variant, slug, PlanStatus.UP_TO_DATE, plan=plan, folder=folder)
        previous = load_persisted(persisted, file=str(folder.path / plan_store.PLAN_FILE))
    except QttError as e:
        reason = f"the newest persisted plan is corrupt: {e}"
        return CheckEntry(variant, slug, PlanStatus.CORRUPT, reason, plan=plan, folder=folder, error=e)
    reason = f"today's plan differs from {folder.name}; run `{FIX}` to persist it"
    return CheckEntry(variant, slug, PlanStatus.CHANGED, reason, diff_lines(previous, plan), plan, folder, previous)


def check(variants: Sequence[CaseVariant], root: Path) -> list[CheckEntry]:
    """:func:`check_variant` for each variant."""
    return [check_variant(v, root) for v in variants]


def load_persisted(text: str, *, file: str) -> Plan:
    """A persisted ``plan.json``, read strictly: JSON as RFC 8259 has it (no ``NaN``).

    Raises:
        PlanFileError: the text is not JSON, or not a plan; ``file`` names it.
    """
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise PlanFileError(f"not valid JSON: {e.msg}", file=file, line=e.lineno, column=e.colno) from None
    except (ValueError, RecursionError) as e:
        raise PlanFileError(f"not valid JSON: {e}", file=file) from None
    return codec.from_json(data, Plan, file=file)


def _no_constant(name: str) -> object:
    msg = f"{name} is not a JSON value (a persisted plan is strict JSON)"
    raise ValueError(msg)


@dataclass
class LedgerCheck:
    """The historical folders against the ledger: the corrupt ones, and those not recorded yet."""

    #: (folder, what differs) for each folder whose files differ from the ledger
    corrupt: list[tuple[Path, str]] = field(default_factory=list)
    unrecorded: list[Path] = field(default_factory=list)


def check_ledger(root: Path) -> LedgerCheck:
    """Hash every folder under ``root`` and compare with the ledger (:mod:`.ledger`).

    An unreadable ledger makes every folder's check a corrupt entry naming the ledger's line.
    """
    found = LedgerCheck()
    if not root.is_dir():
        return found
    try:
        book = ledger.load(root)
    except PlanFileError as e:
        found.corrupt.append((root / ledger.LEDGER_FILE, str(e)))
        return found
    for folder in plan_store.folders(root):
        if not book.recorded(folder):
            found.unrecorded.append(folder)
        elif problems := book.problems(folder):
            found.corrupt.append((folder, "; ".join(problems)))
    return found
