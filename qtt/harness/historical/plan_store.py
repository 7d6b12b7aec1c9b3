"""The historical-plan store: ``historical_plans/<case-slug>/<version>_<epoch-ms>/``.

Each folder holds ``plan.json`` (the canonical plan), ``spec.json`` (what the plan was
replayed with and what it produced) and ``topology`` (the normalized Spark query). Folders
are append-only: qtt writes a new one into a staging folder and renames it into place, and
never modifies or deletes one. The slug rule is in :mod:`qtt.harness.cases.slugs`.

Staging folders live in ``historical_plans/.qtt-staging/<pid>-<random>/``: on the same file
system as their target (so the rename is atomic), and under a ``.gitignore`` of ``*`` (so a
snapshot killed mid-write leaves nothing ``git add`` would commit). The next snapshot removes
the staging folders of processes that are gone (:func:`clean_staging`).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from qtt.errors import PlanFileError, SnapshotError

PLAN_FILE, SPEC_FILE, TOPOLOGY_FILE = "plan.json", "spec.json", "topology"
_FOLDER = re.compile(r"^(?P<version>[0-9A-Za-z.+-]+)_(?P<epoch>[0-9]{13})$")
#: where folders are written before they are renamed into place (a dot name: never a slug)
STAGING = ".qtt-staging"
_STAGED = re.compile(r"^(?P<pid>[0-9]+)-[0-9a-f]+$")


@dataclass(frozen=True)
class HistoricalFolder:
    """One persisted plan folder (its files are read on demand)."""

    path: Path
    slug: str
    version: str
    epoch_ms: int

    @property
    def name(self) -> str:
        return f"{self.slug}/{self.path.name}"

    def read(self, filename: str) -> str:
        target = self.path / filename
        try:
            return target.read_text(encoding="utf-8")
        except FileNotFoundError:
            msg = f"{filename} is missing; a historical plan folder holds {PLAN_FILE}, {SPEC_FILE} and {TOPOLOGY_FILE}"
            raise PlanFileError(msg, file=str(target)) from None
        except (OSError, UnicodeDecodeError) as e:
            raise PlanFileError(f"cannot read {filename}: {e}", file=str(target)) from None


def is_folder_name(name: str) -> bool:
    """Whether ``name`` looks like ``<version>_<epoch-ms>``."""
    return _FOLDER.match(name) is not None


def parse_folder(path: Path) -> HistoricalFolder:
    """A folder ``<slug>/<version>_<epoch-ms>``; raises PlanFileError for any other name."""
    match = _FOLDER.match(path.name)
    if match is None:
        msg = f"folder name {path.name!r} is not <version>_<epoch-ms> (13 digits), e.g. 0.1.0_1763700000000"
        raise PlanFileError(msg, file=str(path))
    return HistoricalFolder(path, path.parent.name, match["version"], int(match["epoch"]))


def folders(root: Path) -> list[Path]:
    """Every ``<slug>/<version>_<ms>`` directory under ``root``, sorted."""
    if not root.is_dir():
        return []
    return sorted(
        p
        for slug in root.iterdir()
        if slug.is_dir() and not slug.name.startswith(".")
        for p in slug.iterdir()
        if p.is_dir() and not p.name.startswith(".")
    )


def newest(root: Path, slug: str) -> HistoricalFolder | None:
    """The most recently persisted folder of a case, by epoch-ms (unparseable names ignored)."""
    base = root / slug
    if not base.is_dir():
        return None
    found = []
    for path in base.iterdir():
        if path.is_dir() and _FOLDER.match(path.name):
            found.append(parse_folder(path))
    return max(found, key=lambda f: (f.epoch_ms, f.version), default=None)


def newest_of(root: Path, slugs: Sequence[str]) -> HistoricalFolder | None:
    """The most recently persisted folder under any of ``slugs`` (a case's, and its former names')."""
    found = [folder for slug in slugs if (folder := newest(root, slug)) is not None]
    return max(found, key=lambda f: (f.epoch_ms, f.version), default=None)


def write_folder(root: Path, slug: str, version: str, epoch_ms: int, files: Mapping[str, str | bytes]) -> Path:
    """Write a new folder atomically: into a staging folder, then rename into place.

    Files and directories get the user's umask; the files, the folder and its parent are
    synced to disk, so a crash leaves either the whole folder or none of it.

    Raises:
        SnapshotError: if the folder already exists (folders are never overwritten).
    """
    if not re.fullmatch(r"[0-9A-Za-z.+-]+", version):
        raise SnapshotError(f"version {version!r} cannot be used in a folder name")
    target = root / slug / f"{version}_{epoch_ms:013d}"
    if target.exists():
        raise SnapshotError(f"{target} already exists; historical plan folders are never overwritten")
    for name, text in files.items():
        if isinstance(text, bytes):
            continue
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:  # a lone surrogate, e.g. from a "\ud800" escape in a case file
            msg = f"{name} cannot be written as UTF-8: {e.reason} at character {e.start} ({text[e.start : e.end]!a})"
            raise SnapshotError(msg, file=str(target / name), hint="remove the lone surrogate from the case") from None
    new_slug = not target.parent.is_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = _staging_folder(root)
    try:
        for name, content in files.items():
            data = content if isinstance(content, bytes) else content.encode("utf-8")
            with (staging / name).open("wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
        _fsync_directory(staging)
        os.rename(staging, target)  # atomic on one file system; fails if target appeared meanwhile
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if new_slug:  # a full disk or an interrupt leaves no empty slug folder behind
            with contextlib.suppress(OSError):
                target.parent.rmdir()
        raise
    _fsync_directory(target.parent)
    if new_slug:
        _fsync_directory(root)
    return target


def clean_staging(root: Path) -> list[Path]:
    """Remove the staging folders that processes which are gone left under ``root``.

    Also removes the ``<slug>/.staging-*`` folders that qtt 0.3 staged in. Returns what was
    removed.
    """
    stale: list[Path] = []
    staging = root / STAGING
    if staging.is_dir():
        for path in staging.iterdir():
            match = _STAGED.match(path.name)
            if path.is_dir() and (match is None or not _alive(int(match["pid"]))):
                stale.append(path)
    if root.is_dir():
        stale += [p for slug in root.iterdir() if slug.is_dir() for p in slug.glob(".staging-*") if p.is_dir()]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    return stale


def _staging_folder(root: Path) -> Path:
    """A new, empty staging folder under ``root``, hidden from git."""
    parent = root / STAGING
    parent.mkdir(parents=True, exist_ok=True)
    ignore = parent / ".gitignore"
    if not ignore.is_file() or ignore.read_text(encoding="utf-8", errors="replace") != _IGNORE_ALL:
        # written whole or not at all: a truncated .gitignore would let git see staged files
        staged = parent / f".gitignore.{os.getpid()}.tmp"
        try:
            staged.write_text(_IGNORE_ALL, encoding="utf-8")
            os.replace(staged, ignore)
        finally:
            staged.unlink(missing_ok=True)
    folder = parent / f"{os.getpid()}-{secrets.token_hex(6)}"
    folder.mkdir()  # the user's umask, unlike tempfile.mkdtemp's 0700
    return folder


_IGNORE_ALL = "# qtt snapshot's staging folders: never committed\n*\n"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except OSError:
        return False
    return True


def _fsync_directory(path: Path) -> None:
    """Make a directory's entries durable (a rename is only durable once its parent is synced)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # e.g. Windows, where directories cannot be opened
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse to sync a directory; the data is synced already
        pass
    finally:
        os.close(fd)
