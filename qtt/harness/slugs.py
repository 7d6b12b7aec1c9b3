"""Slug rules: how case names become folder names and pytest node ids. One place for both.

Both rules keep ASCII letters, digits, ``_``, ``.`` and ``-`` and turn every other run of
characters into one ``_``. They differ where history fixed them, and neither may change:

- **Historical plan folders** (:func:`case_slug`): ``<file stem>__<case>[__<variant>]__<hash>``.
  Non-ASCII characters are dropped (``é`` -> nothing) and ``_`` and ``.`` are trimmed from
  the ends; ``<hash>`` is the first 8 hex digits of the SHA-256 of the case file's path
  relative to the cases root, the exact case name and the variant, separated by NUL bytes.
  The readable part keeps folders easy to find; the hash keeps two cases whose names slug
  alike apart. Changing this rule would orphan every persisted folder.
- **pytest node ids** (:func:`node_slug`, :func:`node_names`): accented letters keep their base
  letter (``Café`` -> ``Cafe``), so ``-k`` and ``--lf`` work on any case name; a name that
  repeats in one file gets ``-2``, ``-3`` ...
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path

from qtt.harness.model import CaseVariant

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _slug(text: str, *, fold_accents: bool, trim: str, empty: str) -> str:
    if fold_accents:
        text = unicodedata.normalize("NFKD", text)
    return _UNSAFE.sub("_", text.encode("ascii", "ignore").decode("ascii")).strip(trim) or empty


def case_slug(relative_file: str, case: str, variant: str) -> str:
    """The folder name of a case variant under ``historical_plans/`` (see the module docstring)."""
    digest = hashlib.sha256("\0".join([relative_file, case, variant]).encode("utf-8")).hexdigest()[:8]
    parts = [Path(relative_file).stem, case, *([variant] if variant else [])]
    slugs = [_slug(part, fold_accents=False, trim="_.", empty="x") for part in parts]
    slugs[1] = slugs[1][:80]
    return "__".join([*slugs, digest])


def slug_of(variant: CaseVariant) -> str:
    """The folder name of ``variant`` under ``historical_plans/``."""
    return case_slug(Path(variant.file).as_posix(), variant.case, variant.variant)


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
