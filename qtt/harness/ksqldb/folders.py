"""ksqlDB's historical plan folders, as its repository lays them out.

``<case folder>/<version>_<epoch ms>/{plan.json, spec.json, topology}``: ``plan.json`` holds
``{"plan": [ksqlPlanV1 ...], "configs": {...}}`` and ``spec.json`` the release (``version``),
the case file (``path``), the step schemas (``schemas``) and the case (``testCase``). qtt's own
folders have the same names but a ``plan.json`` of ``statements``; a folder is told by its
``spec.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qtt.errors import PlanFileError
from qtt.harness.historical import plan_store
from qtt.serde import values

PLAN_FILE, SPEC_FILE = "plan.json", "spec.json"


@dataclass(frozen=True)
class KsqldbFolder:
    """One ksqlDB plan folder, read."""

    path: Path
    plan: dict[str, Any]
    spec: dict[str, Any]

    @property
    def release(self) -> str:
        return str(self.spec.get("version") or self.path.name.partition("_")[0])

    @property
    def case_file(self) -> str:
        return str(self.spec.get("path", ""))

    @property
    def test_case(self) -> dict[str, Any]:
        return dict(self.spec["testCase"])

    def recorded_schemas(self) -> dict[str, str]:
        """``<queryId>.<step context>`` -> the schema text ksqlDB recorded for that step."""
        return {name: entry["schema"] for name, entry in (self.spec.get("schemas") or {}).items() if "schema" in entry}


def is_ksqldb_folder(path: Path) -> bool:
    """A ``<version>_<ms>`` folder whose ``spec.json`` holds a ksqlDB ``testCase``."""
    if not plan_store.is_folder_name(path.name) or not (path / SPEC_FILE).is_file():
        return False
    head = (path / SPEC_FILE).read_text(encoding="utf-8", errors="replace")[:4096]
    return '"testCase"' in head or ('"path"' in head and '"schemas"' in head)


def holds_ksqldb_plans(path: Path) -> bool:
    """A ksqlDB plans tree (case folders of version folders), one case folder, or one folder."""
    if not path.is_dir():
        return False
    if is_ksqldb_folder(path):
        return True
    for child in sorted(path.iterdir()):
        if child.is_dir() and plan_store.is_folder_name(child.name):
            return is_ksqldb_folder(child)
        if child.is_dir() and any(is_ksqldb_folder(g) for g in sorted(child.iterdir())[:1] if g.is_dir()):
            return True
    return False


def ksqldb_folders(path: Path) -> list[Path]:
    """Every ksqlDB plan folder under ``path`` (itself, its version folders, or its cases'), sorted."""
    if is_ksqldb_folder(path):
        return [path]
    found = []
    for child in sorted(path.iterdir()):
        if not child.is_dir():
            continue
        if plan_store.is_folder_name(child.name):
            found += [child] if is_ksqldb_folder(child) else []
        else:
            found += [g for g in sorted(child.iterdir()) if g.is_dir() and is_ksqldb_folder(g)]
    return found


def read_folder(path: Path) -> KsqldbFolder:
    """Read one folder; a file that is missing or not JSON is a PlanFileError naming it."""
    documents = []
    # the spec's records hold numbers as a case file does: exact, whatever their digits
    for name, reader in ((PLAN_FILE, json.loads), (SPEC_FILE, values.loads)):
        file = path / name
        try:
            documents.append(reader(file.read_text(encoding="utf-8")))
        except (OSError, ValueError) as error:
            raise PlanFileError(f"{file}: cannot be read as JSON: {error}", file=str(file)) from None
    plan, spec = documents
    if not isinstance(plan, dict) or not isinstance(plan.get("plan"), list):
        raise PlanFileError(f'{path / PLAN_FILE}: not a ksqlDB plan (no "plan" list)', file=str(path / PLAN_FILE))
    if not isinstance(spec, dict) or not isinstance(spec.get("testCase"), dict):
        raise PlanFileError(f'{path / SPEC_FILE}: no "testCase" object', file=str(path / SPEC_FILE))
    return KsqldbFolder(path, plan, spec)
