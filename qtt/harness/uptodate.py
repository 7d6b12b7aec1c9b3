"""The up-to-date check: today's plan of every case must equal its newest persisted plan.

It fails when a planner change has not been snapshotted, names the steps that changed, and
points at the command that fixes it. No Spark is needed. ``qtt snapshot`` starts from the
same comparison (:func:`check_variant`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from qtt.errors import PlanFileError, QttError, SqlError, UnsupportedFeatureError
from qtt.harness import plan_store
from qtt.harness.model import CaseVariant
from qtt.harness.runner import plan_variant
from qtt.harness.slugs import slug_of
from qtt.plan import codec
from qtt.plan.diff import diff_lines
from qtt.plan.steps import Plan

FIX = "qtt snapshot"
#: the one hint of every out-of-date plan
HINT = f"run `{FIX}` to persist today's plan (after checking the diff)"


class PlanStatus(StrEnum):
    """Whether today's plan of a case variant is the newest persisted one."""

    UP_TO_DATE = "up to date"
    CHANGED = "changed"
    MISSING = "missing"
    SKIPPED = "skipped"


@dataclass
class CheckEntry:
    """The up-to-date check of one case variant.

    ``plan`` is today's plan (None when skipped); ``folder`` the newest persisted folder and
    ``previous`` its plan (None when it cannot be read); ``error`` why planning failed, when
    it did (the case is then skipped here, and ``qtt snapshot`` reports it).
    """

    variant: CaseVariant
    slug: str
    status: PlanStatus
    reason: str = ""
    diff: list[str] = field(default_factory=list)
    plan: Plan | None = None
    folder: plan_store.HistoricalFolder | None = None
    previous: Plan | None = None
    error: SqlError | None = None

    @property
    def ok(self) -> bool:
        """Whether the check passes: the plan is up to date, or there is none to check."""
        return self.status in (PlanStatus.UP_TO_DATE, PlanStatus.SKIPPED)


def current_plan(variant: CaseVariant) -> Plan | None:
    """Today's plan of a variant, or None when it has none (expected error, disabled).

    Raises:
        UnsupportedFeatureError: the case uses a feature qtt does not support.
        SqlError: the statements do not plan.
    """
    if not variant.enabled or variant.expected_exception is not None:
        return None
    return plan_variant(variant).plan


def check_variant(variant: CaseVariant, root: Path) -> CheckEntry:
    """Compare today's plan of ``variant`` with its newest plan persisted under ``root``."""
    slug = slug_of(variant)
    try:
        plan = current_plan(variant)
    except UnsupportedFeatureError as e:
        return CheckEntry(variant, slug, PlanStatus.SKIPPED, f"unsupported: {e.feature}", error=e)
    except SqlError as e:
        return CheckEntry(variant, slug, PlanStatus.SKIPPED, f"does not plan: {e.message.splitlines()[0]}", error=e)
    if plan is None:
        return CheckEntry(variant, slug, PlanStatus.SKIPPED, "no plan: the case expects an error or is disabled")
    folder = plan_store.newest(root, slug)
    if folder is None:
        reason = f"no plan is persisted under {root / slug}; run `{FIX}`"
        return CheckEntry(variant, slug, PlanStatus.MISSING, reason, diff_lines(None, plan), plan)
    persisted = _read_quietly(folder)
    if persisted == codec.dumps(plan):
        return CheckEntry(variant, slug, PlanStatus.UP_TO_DATE, plan=plan, folder=folder)
    previous = _load_quietly(persisted)
    reason = f"today's plan differs from {folder.name}; run `{FIX}` to persist it"
    return CheckEntry(variant, slug, PlanStatus.CHANGED, reason, diff_lines(previous, plan), plan, folder, previous)


def check(variants: Sequence[CaseVariant], root: Path) -> list[CheckEntry]:
    """:func:`check_variant` for each variant."""
    return [check_variant(v, root) for v in variants]


def _read_quietly(folder: plan_store.HistoricalFolder) -> str | None:
    try:
        return folder.read(plan_store.PLAN_FILE)
    except PlanFileError:
        return None


def _load_quietly(text: str | None) -> Plan | None:
    if text is None:
        return None
    try:
        return codec.loads(text)
    except QttError:
        return None
