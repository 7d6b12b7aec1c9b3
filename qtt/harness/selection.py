"""Which case files and historical plan folders a command line names, and the variants in them.

The CLI and the benchmark take paths as given; a path is either cases (a ``*.json`` file, or
a directory searched for them) or historical plans: the root (``historical_plans/``, or any
directory whose folders hold ``plan.json``), one case's ``<slug>/`` folder, or one
``<slug>/<version>_<ms>/`` folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from qtt.errors import CaseFileError
from qtt.harness import plan_store
from qtt.harness.loader import discover, load_file
from qtt.harness.model import CaseVariant

DEFAULT_CASES = "cases"
HISTORICAL_ROOT = "historical_plans"


def default_paths(*, historical: bool) -> list[str]:
    """``./cases`` (and ``./historical_plans`` when ``historical``), those that exist."""
    candidates = (DEFAULT_CASES, HISTORICAL_ROOT) if historical else (DEFAULT_CASES,)
    return [p for p in candidates if Path(p).exists()]


def split_paths(given: Sequence[str]) -> tuple[list[str], list[Path]]:
    """Case paths, and the historical plan folders the other paths name."""
    cases: list[str] = []
    folders: list[Path] = []
    for raw in given:
        path = Path(raw)
        if path.is_dir() and plan_store.is_folder_name(path.name):
            folders.append(path)
        elif path.is_dir() and is_slug_folder(path):
            folders.extend(sorted(p for p in path.iterdir() if p.is_dir() and plan_store.is_folder_name(p.name)))
        elif path.is_dir() and (path.name == HISTORICAL_ROOT or holds_plans(path)):
            folders.extend(plan_store.folders(path))
        else:
            cases.append(raw)
    return cases, folders


def is_slug_folder(path: Path) -> bool:
    """One case's folder under ``historical_plans/``: it holds ``<version>_<ms>`` folders."""
    return any(p.is_dir() and plan_store.is_folder_name(p.name) for p in path.iterdir())


def holds_plans(path: Path) -> bool:
    """A historical plans root under another name: its ``<slug>/<version>_<ms>`` folders hold plans."""
    return any((folder / plan_store.PLAN_FILE).exists() for folder in plan_store.folders(path))


def load_variants(paths: Sequence[str], keyword: str | None = None) -> tuple[list[CaseVariant], list[CaseFileError]]:
    """The case variants under ``paths`` whose label contains ``keyword`` (ignoring case), and
    the errors of the cases that do not load.

    Raises:
        CaseFileError: a path does not exist, or a file is not a case file at all.
    """
    wanted = (keyword or "").lower()
    found: list[CaseVariant] = []
    errors: list[CaseFileError] = []
    for path in discover(paths):
        loaded = load_file(path, display=str(path))
        errors += loaded.errors
        found += [v for v in loaded.variants if wanted in v.label.lower()]
    return found, errors
