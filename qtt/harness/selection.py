"""Which case files and historical plan folders a command line names, and the variants in them.

The CLI and the benchmark take paths as given; a path is either cases (a ``*.json`` file, or
a directory searched for them) or historical plans: the root (``historical_plans/``, or any
directory whose folders hold ``plan.json``), one case's ``<slug>/`` folder, or one
``<slug>/<version>_<ms>/`` folder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from qtt.errors import CaseFileError
from qtt.harness.cases.loader import discover, load_file
from qtt.harness.cases.model import CaseVariant
from qtt.harness.historical import plan_store
from qtt.harness.shard import Shard, case_identity, folder_identity

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


def split_ksqldb(given: Sequence[str]) -> tuple[list[str], list[Path]]:
    """The paths that are not ksqlDB's historical plans, and the ksqlDB plan folders the
    others name (:mod:`qtt.harness.ksqldb.folders`: a tree, a case folder or a version folder)."""
    from qtt.harness.ksqldb.folders import holds_ksqldb_plans, ksqldb_folders

    rest: list[str] = []
    found: list[Path] = []
    for raw in given:
        path = Path(raw)
        if path.is_dir() and path.name != HISTORICAL_ROOT and holds_ksqldb_plans(path):
            found += ksqldb_folders(path)
        else:
            rest.append(raw)
    return rest, found


def select_ksqldb_folders(folders: Sequence[Path], keyword: str | None) -> list[Path]:
    """The ksqlDB plan folders whose case folder and version (``case/7.1.0_1633...``) match ``keyword``."""
    return [folder for folder in folders if matches(f"{folder.parent.name}/{folder.name}", keyword)]


def is_slug_folder(path: Path) -> bool:
    """One case's folder under ``historical_plans/``: it holds ``<version>_<ms>`` folders."""
    return any(p.is_dir() and plan_store.is_folder_name(p.name) for p in path.iterdir())


def holds_plans(path: Path) -> bool:
    """A historical plans root under another name: its ``<slug>/<version>_<ms>`` folders hold plans."""
    return any((folder / plan_store.PLAN_FILE).exists() for folder in plan_store.folders(path))


def load_variants(paths: Sequence[str], keyword: str | None = None) -> tuple[list[CaseVariant], list[CaseFileError]]:
    """The case variants under ``paths`` whose label contains ``keyword`` (ignoring case), and
    the errors of the cases (or whole files) that do not load, each with its file.

    Raises:
        CaseFileError: a path does not exist.
    """
    found: list[CaseVariant] = []
    errors: list[CaseFileError] = []
    for path in discover(paths):
        try:
            loaded = load_file(path, display=str(path))
        except CaseFileError as unreadable:  # the file is not a case file: one error, the others go on
            errors.append(unreadable)
            continue
        errors += [e for e in loaded.errors if matches(e.case or "", keyword)]
        found += [v for v in loaded.variants if matches(v.label, keyword)]
    return found, errors


def matches(label: str, keyword: str | None) -> bool:
    """The ``-k`` rule: ``keyword`` is in the label (``case`` or ``case [variant]``), ignoring case."""
    return not keyword or keyword.lower() in label.lower()


def select_folders(folders: Sequence[Path], keyword: str | None) -> list[Path]:
    """The historical plan folders whose recorded case matches ``keyword`` (:func:`matches`).

    The case is the name and variant in the folder's ``spec.json``. A folder whose spec cannot
    be read stays selected, so that its replay reports the error.
    """
    if not keyword:
        return list(folders)
    return [folder for folder in folders if matches(_recorded_label(folder) or keyword, keyword)]


def _recorded_label(folder: Path) -> str | None:
    """``case`` or ``case [variant]`` as ``spec.json`` records it, or None if it cannot be read."""
    try:
        case = json.loads((folder / plan_store.SPEC_FILE).read_text(encoding="utf-8"))["case"]
        name, variant = case["name"], case["variant"]
    except (OSError, ValueError, RecursionError, KeyError, TypeError):
        return None
    if not isinstance(name, str) or not isinstance(variant, str):
        return None
    return f"{name} [{variant}]" if variant else name


def shard_variants(variants: Sequence[CaseVariant], shard: Shard | None) -> list[CaseVariant]:
    """The variants that belong to ``shard`` (all of them without one)."""
    return [v for v in variants if shard is None or shard.holds(case_identity(v.file, v.label))]


def shard_folders(folders: Sequence[Path], shard: Shard | None) -> list[Path]:
    """The historical plan folders that belong to ``shard`` (all of them without one)."""
    return [folder for folder in folders if shard is None or shard.holds(folder_identity(folder))]
