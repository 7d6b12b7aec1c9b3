"""The up-to-date check: today's plan of every case must equal its newest persisted plan.

It fails when a planner change has not been snapshotted, names the steps that changed, and
points at the command that fixes it. No Spark is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qtt.errors import SqlError, UnsupportedFeatureError
from qtt.harness.model import CaseVariant
from qtt.harness.snapshot import _load_quietly, current_plan, persisted_plan_text, slug_of
from qtt.plan import codec
from qtt.plan.diff import diff_lines

UP_TO_DATE, CHANGED, MISSING, SKIPPED = "up to date", "changed", "missing", "skipped"
FIX = "qtt snapshot"


@dataclass
class CheckEntry:
    variant: CaseVariant
    slug: str
    status: str
    reason: str = ""
    diff: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status in (UP_TO_DATE, SKIPPED)


def check_variant(variant: CaseVariant, root: Path) -> CheckEntry:
    slug = slug_of(variant)
    try:
        plan = current_plan(variant)
    except UnsupportedFeatureError as e:
        return CheckEntry(variant, slug, SKIPPED, f"unsupported: {e.feature}")
    except SqlError as e:
        return CheckEntry(variant, slug, SKIPPED, f"does not plan: {e.message.splitlines()[0]}")
    if plan is None:
        return CheckEntry(variant, slug, SKIPPED, "no plan: the case expects an error or is disabled")
    folder, persisted = persisted_plan_text(root, slug)
    if folder is None:
        return CheckEntry(
            variant, slug, MISSING, f"no plan is persisted under {root / slug}; run `{FIX}`", diff_lines(None, plan)
        )
    if persisted == codec.dumps(plan):
        return CheckEntry(variant, slug, UP_TO_DATE)
    return CheckEntry(
        variant,
        slug,
        CHANGED,
        f"today's plan differs from {folder.name}; run `{FIX}` to persist it",
        diff_lines(_load_quietly(persisted), plan),
    )


def check(variants: Sequence[CaseVariant], root: Path) -> list[CheckEntry]:
    return [check_variant(v, root) for v in variants]
