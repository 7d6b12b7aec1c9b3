"""Quarantine: a known-broken item keeps running, marked, instead of replay being switched off.

ksqlDB turned historical replay off for its whole suite to unblock one release, and it stayed
off. Here one historical folder, or one case, under one scenario or all, is marked in
``quarantine.toml`` at the project's root (outside the folders: goldens stay untouched), with a
reason, an issue reference and the release by which it must be fixed:

.. code-block:: toml

    [[quarantine]]
    item = "historical_plans/<slug>/<version>_<epoch-ms>"   # or "cases/<file>.json::<case name>"
    scenario = "restored"        # optional: one scenario (fresh, restored, ...); all by default
    reason = "Spark 4.3.1 reads the join's state in another order"
    issue = "#123"
    fix_by = "0.15.0"

A marked item still runs. When it still fails (or errors) its status is ``quarantined``, which
does not fail the run; when it passes, its result says "passes now: remove the mark". ``qtt
check`` lists every mark and fails once a mark's ``fix_by`` release is this qtt's or older.
There is no way to skip historical replay as a whole.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from qtt.errors import QttError
from qtt.harness.entries_file import read_entries
from qtt.harness.results import CaseResult
from qtt.harness.status import Status

FILE_NAME = "quarantine.toml"
_REQUIRED = ("item", "reason", "issue", "fix_by")
_RELEASE = re.compile(r"^\d+(\.\d+)*$")
#: result kinds that are the fresh scenario's
_FRESH_KINDS = ("case", "historical", "sql", "load")
ANY_SCENARIO = "*"
#: how a passing quarantined item's reason begins
PASSES_NOW = "passes now"


def passes_now(result: CaseResult) -> bool:
    """Whether ``result`` is of a quarantined item that passes: its mark can go."""
    return result.status == Status.PASSED and result.reason.startswith(PASSES_NOW)


@dataclass(frozen=True)
class Mark:
    """One quarantined item: ``item`` under ``scenario`` (``*``: every scenario)."""

    item: str
    reason: str
    issue: str
    fix_by: str
    scenario: str = ANY_SCENARIO

    @property
    def case(self) -> str | None:
        """The case name of a case's mark (``file::case``), None for a folder's."""
        return self.item.split("::", 1)[1] if "::" in self.item else None

    @property
    def path(self) -> str:
        return self.item.split("::", 1)[0]

    def expired(self, version: str) -> bool:
        """Whether release ``version`` is ``fix_by`` or later: the mark must be gone by then."""
        return _release(version) >= _release(self.fix_by)


@dataclass(frozen=True)
class Quarantine:
    """The marks of one project, and the directory their item paths are relative to."""

    root: Path
    marks: tuple[Mark, ...] = ()

    @property
    def file(self) -> Path:
        return self.root / FILE_NAME

    def mark_for(self, result: CaseResult) -> Mark | None:
        """The mark covering ``result``, if any."""
        here = _resolved(result.file)
        for mark, where in zip(self.marks, self._paths(), strict=True):
            if where != here:
                continue
            if mark.case is not None and mark.case != result.case:
                continue
            if mark.scenario == ANY_SCENARIO or mark.scenario == _scenario(result):
                return mark
        return None

    @functools.cache  # noqa: B019 (a frozen value, as many as a run loads: one)
    def _paths(self) -> tuple[Path, ...]:
        """Each mark's item path, resolved."""
        return tuple(_resolved(str(self.root / mark.path)) for mark in self.marks)

    def apply(self, results: Iterable[CaseResult]) -> None:
        """Mark the results of quarantined items: a failed, errored or timed-out one is ``quarantined`` (an
        infrastructure error stays one, nothing was proven; a corrupt golden stays corrupt, a
        mark is for a known failure, not for damaged files), a passing one says the mark can go."""
        for result in results:
            mark = self.mark_for(result)
            if mark is None:
                continue
            where = f"{self.file.name}: {mark.item}"
            if result.status in (Status.FAILED, Status.ERROR, Status.TIMED_OUT):
                result.reason = (
                    f"quarantined ({mark.issue}, to be fixed by {mark.fix_by}: {mark.reason}); "
                    f"still {result.status}: {result.reason}"
                )
                result.status = Status.QUARANTINED
            elif result.status == Status.PASSED:
                result.reason = f"{PASSES_NOW}: remove the mark ({where}, {mark.issue})"


def load(root: Path) -> Quarantine:
    """The marks of the project at ``root`` (none without a ``quarantine.toml``), checked:
    a malformed mark is an error naming the file, the mark and what was expected."""
    path = root / FILE_NAME
    hint = "see docs/guide.md, 'Quarantine'"
    marks = []
    for index, entry in enumerate(read_entries(path, "quarantine", _REQUIRED, ("scenario",), hint=hint), start=1):
        where = f"{path}: quarantine entry {index}"
        if not _RELEASE.match(entry["fix_by"]):
            raise QttError(f"{where}: fix_by {entry['fix_by']!r} is not a release such as 0.15.0", hint=hint)
        mark = Mark(**entry)
        if not (root / mark.path).exists():
            raise QttError(f"{where}: {mark.path} does not exist", hint="item is a historical folder or case file path")
        marks.append(mark)
    return Quarantine(root, tuple(marks))


def expired(quarantine: Quarantine, version: str) -> Sequence[Mark]:
    """The marks whose release has come: ``qtt check`` fails on them."""
    return [mark for mark in quarantine.marks if mark.expired(version)]


def _scenario(result: CaseResult) -> str:
    return "fresh" if result.kind in _FRESH_KINDS else result.kind


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def _resolved(path: str) -> Path:
    return Path(path).resolve()


def check_lines(quarantine: Quarantine, version: str) -> tuple[list[str], bool]:
    """``qtt check``'s lines for every mark, and whether one has expired at release ``version``."""
    lines = []
    for mark in quarantine.marks:
        state = "EXPIRED" if mark.expired(version) else "QUARANTINED"
        scenario = "" if mark.scenario == ANY_SCENARIO else f" [{mark.scenario}]"
        lines.append(f"{state} {mark.item}{scenario}: {mark.reason} ({mark.issue}, to be fixed by {mark.fix_by})")
    stale = expired(quarantine, version)
    if quarantine.marks:
        lines.append(f"{len(quarantine.marks)} quarantine mark(s) in {quarantine.file}, {len(stale)} expired")
    if stale:
        lines.append(f"hint: qtt {version} is the release an expired mark was due by: fix the item, remove its mark")
    return lines, bool(stale)
