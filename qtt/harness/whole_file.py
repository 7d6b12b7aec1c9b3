"""Write a file whole or not at all: the report, the last-failed cache, updated case files."""

from __future__ import annotations

import os
from pathlib import Path


def write_whole(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) into a temporary file beside ``path``, then rename it into place: a
    full disk or a kill never leaves a truncated file, and an existing file keeps its mode.

    Raises:
        OSError: it could not be written; ``path`` was left as it was.
    """
    target = Path(path)
    staged = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with staged.open("wb") as out:
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        if target.exists():
            os.chmod(staged, target.stat().st_mode & 0o7777)
        os.replace(staged, target)
    finally:
        staged.unlink(missing_ok=True)
