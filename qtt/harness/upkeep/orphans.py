"""Orphans: historical folders whose case is gone, and the deliberate way to retire them.

A case's folders live under its slug (:func:`~qtt.harness.cases.slugs.case_slug`), which its
file and name decide. A renamed case keeps them by naming its former names
(``qttFormerNames``); a slug that no case of the project claims, under its name or a former
one, is an orphan: ``qtt check`` reports each with its folder count. Orphans still replay, as
every folder does. To retire one deliberately, ``retired.toml`` at the project's root records it
with a reason and a date; no folder is edited or deleted:

.. code-block:: toml

    [[retired]]
    slug = "tables__the_old_case__7a2d000b"
    reason = "the case tested a bug ksqlDB fixed in 0.29; covered by tables__..."
    since = "2026-12-02"
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qtt.harness.cases.slugs import former_slugs
from qtt.harness.entries_file import read_entries

if TYPE_CHECKING:
    from qtt.harness.historical.uptodate import CheckEntry

RETIRED_FILE = "retired.toml"
_FIELDS = ("slug", "reason", "since")


@dataclass(frozen=True)
class Retired:
    slug: str
    reason: str
    since: str


def load_retired(root: Path) -> dict[str, Retired]:
    """The retired slugs of the project at ``root``, by slug; a malformed entry is an error."""
    entries = read_entries(root / RETIRED_FILE, "retired", _FIELDS)
    return {entry["slug"]: Retired(**entry) for entry in entries}


def orphans(historical: Path, claimed: Iterable[str]) -> list[Path]:
    """The case folders (slugs) under ``historical`` that no case claims, in name order."""
    if not historical.is_dir():
        return []
    mine = set(claimed)
    return sorted(p for p in historical.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name not in mine)


def check_lines(historical: Path, claimed: Iterable[str]) -> list[str]:
    """``qtt check``'s lines: each orphan with its folder count, each retired slug, a summary."""
    retired = load_retired(historical.parent)
    found = orphans(historical, claimed)
    lines: list[str] = []
    orphaned = [slug for slug in found if slug.name not in retired]
    for slug in orphaned:
        lines.append(
            f"ORPHAN {slug}: {_count(slug)} folder(s) whose case is gone (no case has this name or names it "
            "in qttFormerNames); they still replay"
        )
    for slug in found:
        if slug.name in retired:
            entry = retired[slug.name]
            lines.append(f"RETIRED {slug}: {_count(slug)} folder(s), since {entry.since}: {entry.reason}")
    if orphaned:
        lines.append(f"{len(orphaned)} orphaned case(s), {sum(_count(s) for s in orphaned)} folder(s)")
        lines.append(
            "hint: a renamed case names its former name in qttFormerNames; a case removed on purpose is "
            f"retired in {RETIRED_FILE} with a reason (docs/historical-plans.md, 'Renames and orphans')"
        )
    return lines


def _count(slug: Path) -> int:
    return sum(1 for p in slug.iterdir() if p.is_dir())


def claimed_slugs(historical: Path, entries: Sequence[CheckEntry]) -> set[str]:
    """Every slug the checked cases claim: their own, and their former names'."""
    return {entry.slug for entry in entries} | {
        slug for entry in entries for slug in former_slugs(entry.variant, historical)
    }
