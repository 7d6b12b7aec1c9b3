"""The historical-plan store: folder names, atomic and append-only writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from qtt.errors import PlanFileError, SnapshotError
from qtt.harness import plan_store


def test_write_is_atomic_and_never_overwrites(tmp_path: Path) -> None:
    folder = plan_store.write_folder(tmp_path, "s", "0.1.0", 1_700_000_000_000, {"plan.json": "{}\n"})
    assert folder.name == "0.1.0_1700000000000"
    assert (folder / "plan.json").read_text() == "{}\n"
    assert not list((tmp_path / "s").glob(".staging-*"))
    with pytest.raises(SnapshotError, match="never overwritten"):
        plan_store.write_folder(tmp_path, "s", "0.1.0", 1_700_000_000_000, {"plan.json": "changed"})
    assert (folder / "plan.json").read_text() == "{}\n"


def test_newest_is_the_latest_epoch(tmp_path: Path) -> None:
    plan_store.write_folder(tmp_path, "s", "0.2.0", 1_700_000_000_002, {"plan.json": "b"})
    plan_store.write_folder(tmp_path, "s", "0.1.0", 1_700_000_000_001, {"plan.json": "a"})
    newest = plan_store.newest(tmp_path, "s")
    assert newest is not None and newest.version == "0.2.0"
    assert plan_store.newest(tmp_path, "missing") is None


def test_bad_folder_names_and_missing_files_are_plan_file_errors(tmp_path: Path) -> None:
    with pytest.raises(PlanFileError, match="<version>_<epoch-ms>"):
        plan_store.parse_folder(tmp_path / "s" / "latest")
    folder = plan_store.parse_folder(plan_store.write_folder(tmp_path, "s", "0.1.0", 1_700_000_000_000, {}))
    with pytest.raises(PlanFileError, match=r"spec\.json is missing"):
        folder.read("spec.json")
