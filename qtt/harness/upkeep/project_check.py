"""What ``qtt check`` adds when it checks the whole project: the orphaned folders
(:mod:`~qtt.harness.upkeep.orphans`) and the completeness gate
(:mod:`~qtt.harness.upkeep.completeness`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from qtt.harness.upkeep import completeness, orphans

if TYPE_CHECKING:
    from qtt.harness.historical.uptodate import CheckEntry


def lines(historical: Path, entries: Sequence[CheckEntry]) -> tuple[list[str], bool]:
    """The lines to print, and whether the gate passes (orphans are reported, never failing)."""
    orphaned = orphans.check_lines(historical, orphans.claimed_slugs(historical, entries))
    if not (historical.parent / completeness.EXCEPTIONS_FILE).is_file():
        return orphaned, True  # the gate is the engine's: a project that keeps the file opts in
    table, complete = completeness.check_lines(historical)
    return orphaned + table, complete
