"""The historical-plan store: folder names, atomic and append-only writes."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from qtt.errors import PlanFileError, SnapshotError
from qtt.harness.historical import plan_store


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


_KILLED_WRITE = """
import os, signal, sys
from pathlib import Path
from qtt.harness.historical import plan_store

def killed(*args):  # the process dies after staging every file, before the rename
    os.kill(os.getpid(), signal.SIGKILL)

os.rename = killed
plan_store.write_folder(Path(sys.argv[1]), "s", "0.1.0", 1_700_000_000_000, {"plan.json": "{}\\n"})
"""


def _untracked(repo: Path) -> list[str]:
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, capture_output=True, text=True, check=True
    )
    return status.stdout.splitlines()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_snapshot_killed_mid_write_leaves_nothing_for_git_and_the_next_run_cleans_up(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    root = tmp_path / "historical_plans"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    killed = subprocess.run([sys.executable, "-c", _KILLED_WRITE, str(root)], env=env, check=False)
    assert killed.returncode == -signal.SIGKILL
    left = list(root.rglob("plan.json"))
    assert len(left) == 1, "the staged file is on disk"
    assert _untracked(tmp_path) == [], "but git does not see it"
    assert plan_store.folders(root) == []

    assert plan_store.clean_staging(root) == [left[0].parent]
    assert list(root.rglob("plan.json")) == []
    folder = plan_store.write_folder(root, "s", "0.1.0", 1_700_000_000_000, {"plan.json": "{}\n"})
    assert plan_store.folders(root) == [folder]
    assert _untracked(tmp_path) == ["?? historical_plans/s/0.1.0_1700000000000/plan.json"]


def test_folders_get_the_users_umask_not_0700(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        folder = plan_store.write_folder(tmp_path, "s", "0.1.0", 1_700_000_000_000, {"plan.json": "{}\n"})
    finally:
        os.umask(previous)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert stat.S_IMODE((folder / "plan.json").stat().st_mode) == 0o644


def test_stale_staging_of_older_releases_is_cleaned_and_never_listed(tmp_path: Path) -> None:
    (tmp_path / "s" / ".staging-abc123").mkdir(parents=True)
    (tmp_path / "s" / ".staging-abc123" / "plan.json").write_text("{}")
    assert plan_store.folders(tmp_path) == []
    assert plan_store.clean_staging(tmp_path) == [tmp_path / "s" / ".staging-abc123"]
    assert not (tmp_path / "s" / ".staging-abc123").exists()


def test_a_text_that_is_not_utf8_is_a_snapshot_error_and_nothing_is_written(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match=r"spec\.json cannot be written as UTF-8") as info:
        plan_store.write_folder(tmp_path, "s", "0.1.0", 1_700_000_000_000, {"spec.json": '{"name": "x\udcff"}'})
    assert info.value.file is not None and info.value.file.endswith("spec.json")
    assert not list(tmp_path.rglob("*.json"))
