"""A full disk or a failing device loses no result and leaves nothing half written.

``/dev/full`` fails every write with ENOSPC; where this process may mount one, a tmpfs of a
few kilobytes is a real full file system for the historical root and the report.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from qtt.errors import QttError
from qtt.harness import report
from qtt.harness.historical import ledger, plan_store
from qtt.harness.results import CaseResult
from qtt.harness.status import Status

RESULTS = [CaseResult("cases/a.json", f"case {i}", "", Status.PASSED, reason="x" * 200) for i in range(40)]


@contextlib.contextmanager
def small_file_system(where: Path, size: str = "16k") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where``; skips where mounting is not allowed."""
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_report_to_a_failing_device_is_a_clear_error() -> None:
    with pytest.raises(QttError, match=r"--jsonl /dev/full: the report could not be written \(No space left"):
        report.write_json(RESULTS, "/dev/full")


def test_a_report_is_written_whole_and_leaves_no_staged_file(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    report.write_json(RESULTS, target)
    assert len(target.read_text().splitlines()) == len(RESULTS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_report_on_a_full_file_system_keeps_the_old_report_whole(tmp_path: Path) -> None:
    with small_file_system(tmp_path / "fs", "8k") as fs:
        target = fs / "r.json"
        report.write_json(RESULTS[:2], target)
        before = target.read_bytes()
        with pytest.raises(QttError, match="could not be written"):
            report.write_json(RESULTS * 10, target)
        assert target.read_bytes() == before, "the earlier report is left as it was"
        assert sorted(p.name for p in fs.iterdir()) == ["r.json"]


def test_a_snapshot_write_on_a_full_disk_leaves_no_empty_slug_and_a_whole_gitignore(tmp_path: Path) -> None:
    with small_file_system(tmp_path / "fs", "16k") as root:
        with pytest.raises(OSError):
            plan_store.write_folder(root, "slug", "0.1.0", 1_700_000_000_000, {"plan.json": "x" * 64_000})
        assert not (root / "slug").exists(), "no empty slug folder is left"
        assert plan_store.folders(root) == []
        ignore = root / plan_store.STAGING / ".gitignore"
        assert ignore.read_text().splitlines()[-1] == "*"


def test_a_truncated_staging_gitignore_is_written_again(tmp_path: Path) -> None:
    ignore = tmp_path / plan_store.STAGING / ".gitignore"
    ignore.parent.mkdir(parents=True)
    ignore.write_text("")  # what a full disk left before
    plan_store.write_folder(tmp_path, "s", "0.1.0", 1_700_000_000_000, {"plan.json": "{}\n"})
    assert ignore.read_text().splitlines()[-1] == "*"


def test_a_ledger_on_a_full_disk_is_left_whole(tmp_path: Path) -> None:
    with small_file_system(tmp_path / "fs", "64k") as root:
        first = plan_store.write_folder(root, "a", "0.1.0", 1_700_000_000_000, {"plan.json": "{}\n"})
        second = plan_store.write_folder(root, "b", "0.1.0", 1_700_000_000_000, {"plan.json": "[]\n"})
        ledger.append(root, [first])
        before = (root / ledger.LEDGER_FILE).read_bytes()
        with contextlib.suppress(OSError), (root / "filler").open("wb") as out:
            out.write(b"x" * 200_000)  # the file system is full now
        with pytest.raises(OSError):
            ledger.append(root, [first, second])
        assert (root / ledger.LEDGER_FILE).read_bytes() == before, "the ledger is left whole"
        assert not [p for p in root.iterdir() if p.name.startswith(f".{ledger.LEDGER_FILE}")]
