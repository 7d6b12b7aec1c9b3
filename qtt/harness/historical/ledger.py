"""The ledger: a content hash of every file of every historical folder, kept beside the folders.

``historical_plans/ledger.sha256`` holds one line per file, ``<sha-256>  <slug>/<folder>/<file>``
(the format of ``sha256sum``, so ``cd historical_plans && sha256sum -c --strict ledger.sha256``
checks it too). Like the folders, it is append-only: ``qtt snapshot`` appends the lines of each folder it
writes, and the lines of folders stored before the ledger existed, once. No line is ever
rewritten.

With it, a damaged golden is told apart from a runtime regression: before a folder is replayed,
and by ``qtt check``, its files are hashed and compared. A folder whose files differ from their
lines, or lack one, is ``corrupt`` (restore it from version control); a folder with no line at
all is not yet recorded, and replays as before.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from qtt.errors import CorruptGoldenError

LEDGER_FILE = "ledger.sha256"


@dataclass(frozen=True)
class Ledger:
    """The recorded hash of each file, by its path relative to the historical root."""

    root: Path
    hashes: dict[str, str]
    #: ``<slug>/<folder>`` -> its files' hashes by name within it (the lines, indexed once)
    by_folder: dict[str, dict[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for path, digest in self.hashes.items():
            folder, _, name = path.partition("/")[2].partition("/")
            self.by_folder.setdefault(f"{path.partition('/')[0]}/{folder}", {})[name] = digest

    def recorded(self, folder: Path) -> bool:
        """Whether the ledger holds any line of ``folder``."""
        return _relative(folder, self.root) in self.by_folder

    def problems(self, folder: Path) -> list[str]:
        """What in ``folder`` differs from its lines: each names the file and what is wrong.

        Empty when every recorded file is there with its hash and no other file is, and for a
        folder the ledger does not record at all.
        """
        mine = self.by_folder.get(_relative(folder, self.root), {})
        if not mine:
            return []
        present = {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}
        found = []
        for name, digest in sorted(mine.items()):
            path = present.get(name)
            if path is None:
                found.append(f"{folder / name}: missing (the ledger records it)")
            elif file_hash(path) != digest:
                found.append(f"{folder / name}: its content differs from the ledger's hash (the file was changed)")
        found += [
            f"{folder / name}: not in the ledger (a file was added to a stored folder)"
            for name in sorted(present)
            if name not in mine
        ]
        return found


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load(root: Path) -> Ledger:
    """The ledger of the historical root ``root`` (empty when there is none yet).

    Raises:
        CorruptGoldenError: a line is not ``<64 hex digits>  <path>``, or a path is recorded twice
            with different hashes; names the line.
    """
    path = root / LEDGER_FILE
    hashes: dict[str, str] = {}
    if not path.is_file():
        return Ledger(root, hashes)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CorruptGoldenError(f"the ledger cannot be read: {e}", file=str(path)) from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not name:
            msg = f"expected '<sha-256 in 64 hex digits>  <slug>/<folder>/<file>', got {line[:120]!r}"
            raise CorruptGoldenError(msg, file=str(path), line=number)
        if hashes.get(name, digest) != digest:
            msg = f"{name} is recorded twice with different hashes; restore the ledger from version control"
            raise CorruptGoldenError(msg, file=str(path), line=number)
        hashes[name] = digest
    return Ledger(root, hashes)


def lines_of(folder: Path, root: Path) -> list[str]:
    """The ledger lines of every file in ``folder``, in path order."""
    prefix = _relative(folder, root)
    return [
        f"{file_hash(path)}  {prefix}/{path.relative_to(folder).as_posix()}\n"
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    ]


def append(root: Path, folders: list[Path]) -> list[Path]:
    """Append the lines of ``folders`` that it does not record yet to the ledger; returns them.

    The earlier lines stay as they are, byte for byte: the new ledger (old lines, then new ones)
    is written beside it and renamed into place, so a write that fails (a full disk) leaves the
    old ledger whole and no half line behind.
    """
    ledger = load(root)
    new = [folder for folder in folders if not ledger.recorded(folder)]
    lines = [line for folder in new for line in lines_of(folder, root)]
    if not lines:
        return []
    path = root / LEDGER_FILE
    old = path.read_bytes() if path.is_file() else b""
    staged = path.with_name(f".{LEDGER_FILE}.{os.getpid()}.tmp")
    try:
        with staged.open("wb") as out:
            out.write(old + "".join(lines).encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(staged, path)
    finally:
        staged.unlink(missing_ok=True)
    return new


def ledger_of(folder: Path) -> Ledger:
    """The ledger of the historical root that holds ``folder`` (``<root>/<slug>/<folder>``)."""
    return load(folder.parents[1])


def corrupt_hint(folder: Path) -> str:
    return f"restore it from version control (git checkout -- {folder}); stored folders are never rewritten"


class Checker:
    """Checks folders against the ledgers of their roots, each ledger read once."""

    def __init__(self) -> None:
        self._ledgers: dict[Path, Ledger] = {}

    def check(self, folder: Path) -> None:
        """Refuse a folder whose files differ from its ledger lines.

        Raises:
            CorruptGoldenError: naming each file that differs, is missing or was added.
            (also when the ledger itself cannot be read: it is a golden too)
        """
        root = folder.parents[1]
        if root not in self._ledgers:
            self._ledgers[root] = load(root)
        problems = self._ledgers[root].problems(folder)
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            msg = "the folder differs from the ledger: " + "; ".join(problems[:3]) + more
            raise CorruptGoldenError(msg, file=str(root / LEDGER_FILE))


def _relative(folder: Path, _root: Path) -> str:
    """A folder's place in the ledger: ``<slug>/<folder>``, wherever the root lies."""
    return f"{folder.parent.name}/{folder.name}"
