"""The last run's failures, for ``qtt run --lf``.

Every ``qtt run`` records the cases that ended badly (failed, error, corrupt, infrastructure
error, out-of-date plan) in ``.qtt_cache/lastfailed.json`` under the working directory (or
under ``$QTT_CACHE_DIR``), as pytest's cache does: a
case is named by its file and its name (a historical folder by its path and slug), so ``--lf``
reruns every variant of a case that failed. A run forgets the failures of the cases it ran and
passed, and keeps those of cases it did not run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from qtt.harness.results import CaseResult
from qtt.harness.whole_file import write_whole

if TYPE_CHECKING:
    from qtt.harness.session import Selection

CACHE_DIR = ".qtt_cache"
#: where the cache goes instead of ./.qtt_cache (the test suite points it at a temporary folder)
CACHE_ENV = "QTT_CACHE_DIR"
FILE_NAME = "lastfailed.json"
#: (file, case): a case variant's file and case name, a SQL test's file and name, a folder's path and slug
Key = tuple[str, str]


def key(result: CaseResult) -> Key:
    return (result.file, result.case)


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or CACHE_DIR)


def load(cache: Path | None = None) -> set[Key] | None:
    """The cases that failed when last run; None when no run was recorded here (or it cannot be read)."""
    cache = cache or cache_dir()
    try:
        raw = json.loads((cache / FILE_NAME).read_text(encoding="utf-8"))
        return {(str(file), str(case)) for file, case in raw["failed"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record(results: Iterable[CaseResult], cache: Path | None = None) -> None:
    """Remember this run's bad cases; forget the earlier failures of cases that ran now.

    The cache is a convenience: a cache that cannot be written is left as it was, silently.
    """
    cache = cache or cache_dir()
    ran: set[Key] = set()
    failed: set[Key] = set()
    for result in results:
        ran.add(key(result))
        if result.status.bad:
            failed.add(key(result))
    kept = (load(cache) or set()) - ran
    text = json.dumps({"failed": sorted(kept | failed)}, ensure_ascii=False, indent=1)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        ignore = cache / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# written by qtt run: its last failures, for --lf\n*\n", encoding="utf-8")
        write_whole(cache / FILE_NAME, text + "\n")
    except OSError:
        pass


def keep(chosen: Selection, failed: set[Key]) -> Selection:
    """Only the items of ``chosen`` whose case is in ``failed``."""
    folders = {file for file, _ in failed}
    return replace(
        chosen,
        variants=[v for v in chosen.variants if (v.file, v.case) in failed],
        sql_tests=[t for t in chosen.sql_tests if (t.file, t.name) in failed],
        folders=[f for f in chosen.folders if str(f) in folders],
        unloadable=[entry for entry in chosen.unloadable if key(entry[2]) in failed],
    )
