"""Interrupted commands end cleanly: a one-line message, the signal's exit status, no litter.

Each command runs in a process of its own, on a copy of a project, with its own temp folder;
the signal is sent once it prints that it is replaying. SIGKILL runs no cleanup at all: the
next command removes what the killed one left.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

CASES = Path(__file__).parents[1] / "cases"
WAIT_SECONDS = 240


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "project"
    (project / "cases").mkdir(parents=True)
    shutil.copy(CASES / "aggregation.json", project / "cases" / "aggregation.json")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(Path(__file__).parents[1])}
    return project, env


def _until(process: subprocess.Popen[str], marker: str) -> str:
    """Read the process's stderr until a line holds ``marker``; returns what was read."""
    assert process.stderr is not None
    seen: list[str] = []
    with selectors.DefaultSelector() as selector:
        selector.register(process.stderr, selectors.EVENT_READ)
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            if not selector.select(timeout=deadline - time.monotonic()):
                break
            line = process.stderr.readline()
            if not line:
                break
            seen.append(line)
            if marker in line:
                return "".join(seen)
    process.kill()
    raise AssertionError(f"never printed {marker!r}: {''.join(seen)}")


def _snapshot(project: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "qtt.cli", "snapshot", "-k", "counts sums"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(
    ("sent", "status", "line"), [(signal.SIGINT, 130, "qtt: interrupted"), (signal.SIGTERM, 143, "qtt: terminated")]
)
def test_an_interrupted_snapshot_ends_in_one_line_and_leaves_nothing(
    tmp_path: Path, sent: int, status: int, line: str
) -> None:
    project, env = _project(tmp_path)
    process = _snapshot(project, env)
    _until(process, "replaying")
    process.send_signal(sent)
    out, rest = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == status, f"stderr:\n{rest}\nstdout:\n{out}"
    assert "Traceback" not in rest and rest.rstrip().splitlines()[-1] == line, rest
    historical = project / "historical_plans"
    assert not historical.exists() or not [p for p in historical.rglob("plan.json")], "no partial folder"
    assert not list((tmp_path / "tmp").rglob("qtt-capture-*")), "its capture folder is removed"


def test_a_killed_snapshot_leaves_what_the_next_one_removes(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    process = _snapshot(project, env)
    _until(process, "replaying")
    process.kill()
    process.communicate(timeout=WAIT_SECONDS)
    temp = tmp_path / "tmp"
    left = list(temp.rglob("qtt-capture-*"))
    assert left, "SIGKILL runs no cleanup: the capture folder is still there"
    again = subprocess.run(
        [sys.executable, "-m", "qtt.cli", "snapshot", "--dry-run", "-k", "counts sums"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
    )
    assert again.returncode == 0, again.stderr
    assert not any(path.exists() for path in left), "the next snapshot removed the killed one's folder"
    assert not list(temp.rglob("qtt-capture-*"))
    assert not list(project.rglob("plan.json")), "a killed snapshot wrote no folder, and a dry run writes none"
