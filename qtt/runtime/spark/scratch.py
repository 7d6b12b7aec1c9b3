"""Scratch folders in the temp dir: private per user, owned by one process, cleaned when stale.

A replay or a run that is killed cannot clean up after itself; the next one does. A folder
records its owner's pid (``owner``), and is stale once that process is gone, or, for folders
of older qtt versions without an owner file, once it is older than :data:`STALE_SECONDS`.
Pure: no pyspark import.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

OWNER_FILE = "owner"
#: a folder without an owner file (or a finished run's folder) is kept this long
STALE_SECONDS = 3600.0


def user_root(temp: str | Path | None = None) -> Path:
    """``$TMP/qtt-<user>``: created private (0700), refused when another user owns it."""
    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry (a container): the uid still tells users apart
        user = str(os.getuid())
    root = Path(temp or tempfile.gettempdir()) / f"qtt-{''.join(c if c.isalnum() else '_' for c in user)}"
    root.mkdir(mode=0o700, exist_ok=True)
    if hasattr(os, "getuid") and root.stat().st_uid != os.getuid():
        from qtt.errors import InfrastructureError

        msg = f"{root} belongs to another user, so qtt cannot keep its logs and scratch files there"
        raise InfrastructureError(msg, file=str(root), hint="remove it, or point TMPDIR at a folder of your own")
    return root


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (on this machine)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, and belongs to someone else
        return True
    return True


def owner_of(folder: Path) -> int | None:
    """The pid recorded in ``folder`` (or in the name :func:`owned` gave it), or None."""
    try:
        return int((folder / OWNER_FILE).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        # killed between making the folder and claiming it: its name still says whose it is
        named = _OWNED_NAME.search(folder.name)
        return int(named.group(1)) if named else None


#: the end of a name :func:`owned` gives: ``<pid>-<8 hex digits>``
_OWNED_NAME = re.compile(r"(?<![0-9])([0-9]+)-[0-9a-f]{8}$")


def claim(folder: Path) -> Path:
    """Record this process as ``folder``'s owner; returns ``folder``."""
    (folder / OWNER_FILE).write_text(f"{os.getpid()}\n", encoding="ascii")
    return folder


def make_owned(prefix: str, parent: str | Path | None = None) -> Path:
    """A new folder ``<parent>/<prefix>XXXX`` owned by this process."""
    return claim(Path(tempfile.mkdtemp(prefix=prefix, dir=parent)))


@contextlib.contextmanager
def owned(prefix: str, parent: str | Path | None = None) -> Iterator[Path]:
    """A new owned folder for the ``with`` block, removed when the block ends however it ends.

    Its name is chosen before it is made, so that an interrupt arriving at any point after
    the ``with`` began still removes whatever was made (a SIGKILL leaves it to the next run).
    """
    folder = Path(parent or tempfile.gettempdir()) / f"{prefix}{os.getpid()}-{secrets.token_hex(4)}"
    try:
        folder.mkdir(mode=0o700)
        yield claim(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def is_stale(folder: Path, *, now: float | None = None, max_age: float = STALE_SECONDS) -> bool:
    """A folder whose owner is gone; without an owner file, one older than ``max_age``."""
    owner = owner_of(folder)
    if owner == os.getpid():
        return False
    if owner is not None:
        return not pid_alive(owner)
    try:
        age = (now if now is not None else time.time()) - folder.stat().st_mtime
    except OSError:
        return False
    return age > max_age


def clean_stale(parent: str | Path | None, pattern: str, *, keep_finished: float = 0.0) -> list[Path]:
    """Remove stale folders matching ``pattern`` under ``parent``; returns what was removed.

    ``keep_finished`` keeps a folder whose owner is gone for that many seconds after its last
    change (a finished run's log stays readable for a while).
    """
    removed: list[Path] = []
    now = time.time()
    root = Path(parent or tempfile.gettempdir())
    try:
        candidates = sorted(root.glob(pattern))
    except OSError:
        return removed
    for folder in candidates:
        try:
            if not folder.is_dir() or folder.is_symlink() or not is_stale(folder, now=now):
                continue
            if keep_finished and now - _last_change(folder) < keep_finished:
                continue
            if hasattr(os, "getuid") and folder.stat().st_uid != os.getuid():
                continue  # another user's replay in a shared temp dir: not ours to judge
        except OSError:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _last_change(folder: Path) -> float:
    """The newest mtime of ``folder`` and its direct entries (a log file is written to, not its folder)."""
    times = [folder.stat().st_mtime]
    for entry in folder.iterdir():
        try:
            times.append(entry.stat().st_mtime)
        except OSError:
            continue
    return max(times)
