"""The up-to-date check: today's plan of every case must equal its newest persisted plan.

It fails when a planner change has not been snapshotted, names the steps that changed, and
points at the command that fixes it. No Spark is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from qtt.errors import SqlError, UnsupportedFeatureError
from qtt.harness.model import CaseVariant
from qtt.harness.slugs import slug_of
from qtt.harness.snapshot import current_plan, load_quietly, persisted_plan_text
from qtt.plan import codec
from qtt.plan.diff import diff_lines

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
    """The up-to-date check of one case variant."""

    variant: CaseVariant
    slug: str
    status: PlanStatus
    reason: str = ""
    diff: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status in (PlanStatus.UP_TO_DATE, PlanStatus.SKIPPED)


def check_variant(variant: CaseVariant, root: Path) -> CheckEntry:
    """Compare today's plan of ``variant`` with its newest plan persisted under ``root``."""
    slug = slug_of(variant)
    try:
        plan = current_plan(variant)
    except UnsupportedFeatureError as e:
        return CheckEntry(variant, slug, PlanStatus.SKIPPED, f"unsupported: {e.feature}")
    except SqlError as e:
        return CheckEntry(variant, slug, PlanStatus.SKIPPED, f"does not plan: {e.message.splitlines()[0]}")
    if plan is None:
        return CheckEntry(variant, slug, PlanStatus.SKIPPED, "no plan: the case expects an error or is disabled")
    folder, persisted = persisted_plan_text(root, slug)
    if folder is None:
        return CheckEntry(
            variant,
            slug,
            PlanStatus.MISSING,
            f"no plan is persisted under {root / slug}; run `{FIX}`",
            diff_lines(None, plan),
        )
    if persisted == codec.dumps(plan):
        return CheckEntry(variant, slug, PlanStatus.UP_TO_DATE)
    return CheckEntry(
        variant,
        slug,
        PlanStatus.CHANGED,
        f"today's plan differs from {folder.name}; run `{FIX}` to persist it",
        diff_lines(load_quietly(persisted), plan),
    )


def check(variants: Sequence[CaseVariant], root: Path) -> list[CheckEntry]:
    """:func:`check_variant` for each variant."""
    return [check_variant(v, root) for v in variants]
