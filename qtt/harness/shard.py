"""``--shard K/N``: which 1/N of the items one of N machines runs.

An item belongs to shard ``K`` when the sha256 of its stable identity, as an integer, is
``K - 1`` modulo ``N``. Membership depends on nothing but the identity (never on Python's
salted ``hash``, the order of discovery or the other items), so N machines together run
every item exactly once, and adding a case or a historical folder never moves another item
to another shard. ``qtt run`` and the pytest plugin (``--qtt-shard``) share this rule.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from qtt.errors import QttError

FORM = "K/N with 1 <= K <= N (such as 2/3)"


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, identity: str) -> bool:
        """Whether the item named ``identity`` belongs to this shard."""
        digest = hashlib.sha256(identity.encode("utf-8", "surrogatepass")).digest()
        return int.from_bytes(digest, "big") % self.count == self.index - 1


def parse(text: str, *, option: str | None = None) -> Shard:
    """Read ``K/N``; ``option`` names the flag in the error (argparse names it itself).

    Raises:
        QttError: ``text`` is not ``K/N`` with whole numbers ``1 <= K <= N``.
    """
    where = f"{option} {text!r}" if option else repr(text)
    index_text, slash, count_text = text.strip().partition("/")
    if not (slash and index_text.isdigit() and count_text.isdigit()):
        msg = f"{where}: not a shard; expected {FORM}"
        raise QttError(msg)
    index, count = int(index_text), int(count_text)
    if not 1 <= index <= count:
        msg = f"{where}: K={index} is outside 1..N={count}; expected {FORM}"
        raise QttError(msg)
    return Shard(index, count)


def case_identity(file: str | Path, label: str) -> str:
    """A case variant's (or a case's that does not load) identity: ``<file>::<label>``, the file
    relative to the current directory, with ``/`` separators on every platform."""
    relative = os.path.relpath(os.path.abspath(file)).replace(os.sep, "/")
    return f"{relative}::{label}"


def folder_identity(folder: Path) -> str:
    """A historical plan's identity: ``<slug>/<version>_<ms>``, wherever its root is."""
    return f"{folder.parent.name}/{folder.name}"
