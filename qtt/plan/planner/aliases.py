"""ksqlDB's generated column names (``KSQL_COL_n``), which never clash with existing ones."""

from __future__ import annotations

import re
from collections.abc import Iterable

from qtt.sql import ast


class ColumnAliasGenerator:
    """ksqlDB's generated column names: ``KSQL_COL_n``, or a struct field's name.

    Names never clash with the columns of the given schemas: a name ``X_n`` (or ``X``, read as
    ``X_0``) in a schema uses up number ``n`` of prefix ``X``.
    """

    PREFIX = "KSQL_COL"

    def __init__(self, schemas: Iterable[Iterable[str]]) -> None:
        self._used: dict[str, set[int]] = {}
        for names in schemas:
            for name in names:
                prefix, number = _split_numbered(name)
                self._used.setdefault(prefix, set()).add(number)
        self._next: dict[str, int] = {}

    def _take(self, prefix: str) -> int:
        used = self._used.get(prefix, set())
        n = self._next.get(prefix, 0)
        while n in used:
            n += 1
        self._next[prefix] = n + 1
        return n

    def next_ksql_col(self) -> str:
        """The next free ``KSQL_COL_n``."""
        return f"{self.PREFIX}_{self._take(self.PREFIX)}"

    def next_named(self, prefix: str) -> str:
        """The next free name of ``prefix``: ``prefix`` itself (its number 0), else ``prefix_n``."""
        n = self._take(prefix)
        return prefix if n == 0 else f"{prefix}_{n}"

    def unique_alias_for(self, node: ast.Expr) -> str:
        """A name for an unaliased expression: a struct field's name, else ``KSQL_COL_n``."""
        if isinstance(node, ast.Dereference):
            return self.next_named(_split_numbered(node.field)[0])
        return self.next_ksql_col()


def _split_numbered(name: str) -> tuple[str, int]:
    match = re.fullmatch(r"(.*?)(?:_(\d+))?", name)
    assert match is not None
    return match.group(1), int(match.group(2)) if match.group(2) is not None else 0
