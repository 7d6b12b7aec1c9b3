"""Scratch folders: private per user, owned by a pid, and cleaned once stale."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

from qtt.runtime.spark import scratch


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_user_root_is_private(tmp_path: Path) -> None:
    root = scratch.user_root(tmp_path)
    assert root.parent == tmp_path and root.name.startswith("qtt-")
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert scratch.user_root(tmp_path) == root


def test_a_folder_is_stale_once_its_owner_is_gone(tmp_path: Path) -> None:
    mine = scratch.make_owned("qtt-replay-", tmp_path)
    assert scratch.owner_of(mine) == os.getpid()
    killed = tmp_path / "qtt-replay-killed"
    killed.mkdir()
    (killed / scratch.OWNER_FILE).write_text(f"{_dead_pid()}\n")
    alive = tmp_path / "qtt-replay-alive"
    alive.mkdir()
    (alive / scratch.OWNER_FILE).write_text("1\n")  # init never ends
    old = tmp_path / "qtt-replay-old"  # written by a qtt that recorded no owner
    old.mkdir()
    hour_ago = time.time() - scratch.STALE_SECONDS - 10
    os.utime(old, (hour_ago, hour_ago))
    young = tmp_path / "qtt-replay-young"
    young.mkdir()
    other = tmp_path / "unrelated"
    other.mkdir()

    removed = scratch.clean_stale(tmp_path, "qtt-replay-*")

    assert sorted(p.name for p in removed) == ["qtt-replay-killed", "qtt-replay-old"]
    assert {p.name for p in tmp_path.iterdir()} == {"qtt-replay-alive", "qtt-replay-young", mine.name, "unrelated"}


def test_a_finished_run_is_kept_for_a_while(tmp_path: Path) -> None:
    run = tmp_path / "run-1-x"
    run.mkdir()
    (run / scratch.OWNER_FILE).write_text(f"{_dead_pid()}\n")
    (run / "spark.log").write_text("log")
    assert scratch.clean_stale(tmp_path, "run-*", keep_finished=scratch.STALE_SECONDS) == []
    hour_ago = time.time() - scratch.STALE_SECONDS - 10
    for path in (run / "spark.log", run / scratch.OWNER_FILE, run):
        os.utime(path, (hour_ago, hour_ago))
    assert scratch.clean_stale(tmp_path, "run-*", keep_finished=scratch.STALE_SECONDS) == [run]


def test_an_owned_folder_is_removed_however_its_block_ends(tmp_path: Path) -> None:
    try:
        with scratch.owned("qtt-capture-", tmp_path) as folder:
            assert scratch.owner_of(folder) == os.getpid()
            (folder / "data").write_text("x")
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert list(tmp_path.iterdir()) == []


def test_a_folder_killed_before_it_was_claimed_is_known_by_its_name(tmp_path: Path) -> None:
    # SIGKILL between making the folder and writing its owner file: the name says whose it was
    dead = _dead_pid()
    unclaimed = tmp_path / f"qtt-capture-{dead}-0123abcd"
    unclaimed.mkdir()
    running = tmp_path / f"qtt-capture-{os.getpid()}-0123abcd"
    running.mkdir()
    assert scratch.owner_of(unclaimed) == dead
    assert scratch.clean_stale(tmp_path, "qtt-capture-*") == [unclaimed]
    assert running.is_dir()
