"""The columns an expression may reference (:class:`Scope`), and where a node stands.

Split from :mod:`qtt.plan.analysis.analyzer`, which re-exports :class:`Scope` and
:class:`ScopeColumn`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qtt import sqltypes as t
from qtt.errors import StatementError, UnknownColumnError, did_you_mean
from qtt.sql import ast


@dataclass(frozen=True)
class ScopeColumn:
    """A column visible to expressions: its name, type and the names that qualify it."""

    name: str
    type: t.SqlType
    qualifiers: frozenset[str] = frozenset()
    #: the column's name in the step's input, when it differs from ``name``.
    input_name: str | None = None


@dataclass
class Scope:
    """The columns an expression may reference, and the source names that qualify them."""

    columns: list[ScopeColumn]
    sources: frozenset[str] = field(default_factory=frozenset)
    #: names no column has that ksqlDB's sanitizer qualifies all the same, with the qualifier it
    #: gives them (the pseudo columns its analyzer has switched off): its error shows them so
    qualified_unknown: dict[str, str] = field(default_factory=dict)

    def matches(self, ref: ast.ColumnRef) -> list[ScopeColumn]:
        """The scope's columns ``ref`` names: none, one, or several (then it is ambiguous)."""
        return [c for c in self.columns if c.name == ref.name and (ref.source is None or ref.source in c.qualifiers)]

    def resolve(self, ref: ast.ColumnRef, clause: str) -> ScopeColumn:
        if ref.source is not None and ref.source not in self.sources:
            shown = f"{ref.source}.{ref.name}"
            msg = f"{clause} column '{shown}' cannot be resolved."
            raise UnknownColumnError(msg, shown=shown, line=line_of(ref), column=column_of(ref))
        matches = self.matches(ref)
        if not matches:
            source = ref.source or self.qualified_unknown.get(ref.name)
            shown = f"{source}.{ref.name}" if source else ref.name
            msg = f"{clause} column '{shown}' cannot be resolved."
            hint = did_you_mean(ref.name, sorted({c.name for c in self.columns})).strip() or None
            raise UnknownColumnError(msg, shown=shown, line=line_of(ref), column=column_of(ref), hint=hint)
        if len(matches) > 1:
            candidates = sorted(f"{sorted(c.qualifiers)[0]}.{c.name}" for c in matches if c.qualifiers)
            listed = " or ".join(filter(None, [", ".join(candidates[:-1]), candidates[-1] if candidates else ""]))
            msg = f"Column '{ref.name}' is ambiguous. Could be {listed}."
            if ref.pos is not None:
                # ksqlDB finds it while preparing the statement and says where, in the script
                msg = f"Exception while preparing statement: Line: {ref.pos.line}, Col: {ref.pos.column}: {msg}"
            raise StatementError(msg, line=line_of(ref), column=column_of(ref))
        return matches[0]


def line_of(node: ast.Node) -> int | None:
    """The line ``node`` starts on, when it came from parsed text."""
    return node.pos.line if node.pos else None


def column_of(node: ast.Node) -> int | None:
    """The column ``node`` starts at, when it came from parsed text."""
    return node.pos.column if node.pos else None
