"""The completeness gate: every step today's runtime can build has a stored plan, and every
stateful one a stored checkpoint.

A new step version whose only proof is today's cases can break a running query's restore
unnoticed (Flink added this gate, ``RestoreTestCompleteness``, for the same reason). ``qtt
check`` lists, for every step tag and version with a registered builder, the historical
folders whose ``plan.json`` uses it, and for a stateful one the folders whose stored checkpoint
exercises it. A step without them fails the check, unless ``completeness.toml`` at the
project's root says why it cannot have one. The gate is about the engine's steps, so it holds
for a project that keeps that file (qtt's own repository does, even with no entry); a project
of a few cases of its own, which cannot cover every step, has none and is not gated:

.. code-block:: toml

    [[uncovered]]
    step = "streamSinkV1"
    reason = "superseded by streamSinkV2 before any plan was persisted with it"
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qtt.harness.entries_file import read_entries

EXCEPTIONS_FILE = "completeness.toml"
PLAN_FILE, MANIFEST_FILE = "plan.json", "checkpoint.json"


@dataclass
class StepCoverage:
    """One buildable step type, and what stores it."""

    tag: str
    stateful: bool
    plans: int = 0
    checkpoints: int = 0
    #: why it cannot have a stored plan or checkpoint (an entry of completeness.toml)
    exempt: str = ""
    missing: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.missing or bool(self.exempt)

    def line(self) -> str:
        kind = " (stateful)" if self.stateful else ""
        stored = f"{self.plans} stored plan(s)"
        stored += f", {self.checkpoints} stored checkpoint(s)" if self.stateful else ""
        if not self.missing:
            return f"STEP {self.tag}{kind}: {stored}"
        if self.exempt:
            return f"STEP {self.tag}{kind}: {stored}; exempt: {self.exempt}"
        return f"UNCOVERED {self.tag}{kind}: {stored}; no {' and no '.join(self.missing)}"


def buildable_steps() -> dict[str, bool]:
    """Every step tag with a registered builder, and whether it is stateful."""
    # the builders register themselves as their modules are imported
    import qtt.runtime.build.builder
    import qtt.runtime.operators.registered  # noqa: F401
    from qtt.runtime.build.context import BUILDERS

    return {step.type_tag: step.stateful for step in BUILDERS}


def coverage(historical: Path, steps: dict[str, bool] | None = None) -> list[StepCoverage]:
    """Each buildable step's stored plans and checkpoints under ``historical``, by tag."""
    steps = buildable_steps() if steps is None else steps
    table = {tag: StepCoverage(tag, stateful) for tag, stateful in sorted(steps.items())}
    for folder in sorted(historical.glob(f"*/*/{PLAN_FILE}")):
        try:
            used = set(_tags(json.loads(folder.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            continue  # a damaged golden is the ledger's verdict, not this one's
        stored = (folder.parent / MANIFEST_FILE).is_file()
        for tag in used & set(table):
            table[tag].plans += 1
            table[tag].checkpoints += stored
    exempt = load_exceptions(historical.parent)
    for entry in table.values():
        entry.missing = ["stored plan"] if not entry.plans else []
        if entry.stateful and not entry.checkpoints:
            entry.missing.append("stored checkpoint")
        entry.exempt = exempt.get(entry.tag, "")
    return list(table.values())


def check_lines(historical: Path) -> tuple[list[str], bool]:
    """``qtt check``'s completeness table, and whether it passes."""
    table = coverage(historical)
    failing = [entry for entry in table if not entry.ok]
    lines = [entry.line() for entry in table]
    lines.append(f"{len(table)} buildable step type(s), {len(failing)} without a stored plan or checkpoint")
    if failing:
        lines.append(
            "hint: persist a case that uses it (qtt snapshot), or say why it cannot have one in "
            f"{EXCEPTIONS_FILE} (docs/historical-plans.md, 'Completeness')"
        )
    return lines, not failing


def load_exceptions(root: Path) -> dict[str, str]:
    """The steps ``completeness.toml`` exempts, with their reasons."""
    return {
        entry["step"]: entry["reason"]
        for entry in read_entries(root / EXCEPTIONS_FILE, "uncovered", ("step", "reason"))
    }


def _tags(node: Any) -> Iterator[str]:
    """Every ``@type`` in a plan's JSON."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("@type"), str):
                yield item["@type"]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
