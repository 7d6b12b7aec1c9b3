"""Slug rules: how case names become folder names and pytest node ids. One place for both.

Both rules keep ASCII letters, digits, ``_``, ``.`` and ``-`` and turn every other run of
characters into one ``_``. They differ where history fixed them, and neither may change:

- **Historical plan folders** (:func:`case_slug`): ``<file stem>__<case>[__<variant>]__<hash>``.
  Non-ASCII characters are dropped (``é`` -> nothing) and ``_`` and ``.`` are trimmed from
  the ends; the stem and the variant keep at most 60 characters, the case name 80, so a slug
  stays far below the 255 bytes a file name may hold. ``<hash>`` is the first 8 hex digits
  of the SHA-256 of the case file's path relative to the project root (:func:`relative_file`),
  the exact case name and the variant, separated by NUL bytes and encoded as UTF-8 (a lone
  surrogate is encoded as itself, ``surrogatepass``). The readable part keeps folders easy to
  find; the hash keeps two cases whose names slug alike, or are cut alike, apart. Changing
  this rule would orphan every persisted folder.
- **pytest node ids** (:func:`node_slug`, :func:`node_names`): accented letters keep their base
  letter (``Café`` -> ``Cafe``), so ``-k`` and ``--lf`` work on any case name; a name that
  repeats in one file gets ``-2``, ``-3`` ...
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path

from qtt.harness.cases.model import CaseVariant

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
#: the longest readable stem, case name and variant of a folder slug (no persisted slug reaches them)
STEM_LIMIT, NAME_LIMIT, VARIANT_LIMIT = 60, 80, 60


def _slug(text: str, *, fold_accents: bool, trim: str, empty: str) -> str:
    if fold_accents:
        text = unicodedata.normalize("NFKD", text)
    return _UNSAFE.sub("_", text.encode("ascii", "ignore").decode("ascii")).strip(trim) or empty


def case_slug(relative_file: str, case: str, variant: str) -> str:
    """The folder name of a case variant under ``historical_plans/`` (see the module docstring)."""
    key = "\0".join([relative_file, case, variant]).encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(key).hexdigest()[:8]
    parts = [Path(relative_file).stem, case, *([variant] if variant else [])]
    limits = [STEM_LIMIT, NAME_LIMIT, VARIANT_LIMIT][: len(parts)]
    slugs = [_slug(part, fold_accents=False, trim="_.", empty="x")[:n] for part, n in zip(parts, limits, strict=True)]
    return "__".join([*slugs, digest])


def project_root(historical_root: Path) -> Path:
    """The directory case paths are hashed relative to: the one that holds the historical root."""
    return Path(os.path.abspath(historical_root)).parent


def relative_file(file: str | Path, root: Path) -> str:
    """``file`` relative to the project ``root``, in POSIX form, however either is spelled.

    ``cases/f.json``, ``./cases/f.json`` and ``/abs/project/cases/f.json`` all give
    ``cases/f.json`` for the root ``/abs/project``, from any working directory. A file outside
    the root keeps a ``../`` path, still independent of the working directory.
    """
    relative = os.path.relpath(os.path.abspath(file), os.path.abspath(root))
    if _outside(relative):
        # one of the two was spelled through a symbolic link (the working directory never is)
        resolved = os.path.relpath(os.path.realpath(file), os.path.realpath(root))
        relative = relative if _outside(resolved) else resolved
    return Path(relative).as_posix()


def is_outside(relative: str) -> bool:
    """Whether a :func:`relative_file` path leaves the project root (``../...``)."""
    return relative == ".." or relative.startswith("../")


def _outside(relative: str) -> bool:
    return relative == os.pardir or relative.startswith(os.pardir + os.sep)


def slug_of(variant: CaseVariant, root: Path, *, file: str | Path | None = None) -> str:
    """The folder name of ``variant`` under the historical ``root``.

    Args:
        variant: the case variant.
        root: the historical plans directory; the case file's path is hashed relative to
            its parent (:func:`relative_file`).
        file: where the case file is, when ``variant.file`` is only a display name (the pytest
            plugin's node id); default ``variant.file``, relative to the working directory.
    """
    where = relative_file(variant.file if file is None else file, project_root(root))
    return case_slug(where, variant.case, variant.variant)


def former_slugs(variant: CaseVariant, root: Path, *, file: str | Path | None = None) -> list[str]:
    """The folder names ``variant`` had under its former names (``qttFormerNames``): a name
    alone is in the same file, ``cases/old.json::name`` in the file it was moved from."""
    where = relative_file(variant.file if file is None else file, project_root(root))
    slugs = []
    for former in variant.qtt_former_names:
        old_file, _, name = former.rpartition("::")
        slugs.append(case_slug(old_file or where, name, variant.variant))
    return slugs


def node_slug(text: str) -> str:
    """An ASCII, space-free part of a pytest node id."""
    return _slug(text, fold_accents=True, trim="_", empty="case")


def node_names(variants: Iterable[CaseVariant]) -> Iterator[tuple[str, CaseVariant]]:
    """Each variant of one file with its node name, ``case[variant]``, unique within the file."""
    seen: dict[str, int] = {}
    for variant in variants:
        name = node_slug(variant.case) + (f"[{node_slug(variant.variant)}]" if variant.variant else "")
        count = seen.get(name, 0)
        seen[name] = count + 1
        yield (f"{name}-{count + 1}" if count else name), variant
