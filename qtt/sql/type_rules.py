"""ksqlDB's checks of a written type, made as it builds a parsed statement: an unknown type name
(``SqlTypeParser``), a DECIMAL's precision and scale (``SqlDecimal``), a STRUCT's field names
(``SqlStruct.Builder``, ``Field``) and a column's name (``Name``).

ksqlDB raises them after its grammar accepted the statement, while it prepares it, as a
``KsqlStatementException`` whose message starts ``Failed to prepare statement:``. qtt builds
types while it parses, so its error is :class:`PrepareError`: a statement error that is also a
syntax error (it leaves the parser as one, with the position of the type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qtt import sqltypes as t
from qtt.errors import SqlSyntaxError, StatementError

#: ksqlDB's prefix for an error raised while it builds a parsed statement (``DefaultKsqlParser.prepare``)
PREPARE_PREFIX = "Failed to prepare statement: "


class PrepareError(SqlSyntaxError, StatementError):
    """An error ksqlDB raises while it prepares a parsed statement (``Failed to prepare
    statement: ...``): both a :class:`StatementError` (its ``KsqlStatementException``) and a
    :class:`SqlSyntaxError` (qtt finds it while it parses, and locates it there)."""


def unknown_type(name: str, known: Sequence[str], *, line: int, column: int) -> PrepareError:
    """``SqlTypeParser``'s error for a type name that is neither a type nor a custom type."""
    problem = f"Cannot resolve unknown type: {name}"
    hint = f"a type is one of {', '.join(known)}, DECIMAL, ARRAY, MAP, STRUCT or a type CREATE TYPE named"
    return PrepareError(PREPARE_PREFIX + problem, detail=problem, line=line, column=column, hint=hint)


def decimal(precision: int, scale: int, *, line: int, column: int) -> t.Decimal:
    """``DECIMAL(precision, scale)``, checked as ``SqlDecimal.validateParameters`` checks it."""
    shown = f"DECIMAL({precision},{scale})"
    problem = None
    if precision <= 0:
        problem = f"DECIMAL precision must be >= 1: {shown}"
    elif scale < 0:
        problem = f"DECIMAL scale must be >= 0: {shown}"
    elif precision < scale:
        problem = f"DECIMAL precision must be >= scale: {shown}"
    if problem is not None:
        raise PrepareError(PREPARE_PREFIX + problem, detail=problem, line=line, column=column)
    return t.Decimal(precision, scale)


#: what Java's ``String.trim()`` takes off either end of a name: every character up to U+0020
_JAVA_BLANKS = "".join(map(chr, range(0x21)))
_TRIM_HINT = "a quoted name may not start or end with white space"


def column_name(name: str, meta: Any) -> str:
    """A column's name (declared, aliased or referred to) at ``meta`` (its ``line`` and
    ``column``), refused as ksqlDB's ``Name`` constructor refuses one that ``String.trim()``
    would change (``ColumnName.of``, called while the statement is prepared); an empty name
    passes, as there."""
    if (problem := _untrimmed(name)) is not None:
        raise PrepareError(
            PREPARE_PREFIX + problem, detail=problem, line=meta.line, column=meta.column, hint=_TRIM_HINT
        )
    return name


def field_name_problem(name: str) -> str | None:
    """Why ksqlDB's ``Field`` constructor refuses a struct field's name (not trimmed, or
    empty), or None."""
    return _untrimmed(name) or ("name is empty" if not name else None)


def _untrimmed(name: str) -> str | None:
    """ksqlDB's refusal of a name that Java's ``String.trim()`` would change, or None."""
    return f"name is not trimmed: '{name}'" if name.strip(_JAVA_BLANKS) != name else None


def field(name: str, type_: t.SqlType, *, line: int, column: int) -> t.Field:
    """A struct type's field, refused as ``Field`` refuses it while the statement is prepared."""
    problem = field_name_problem(name)
    if problem is not None:
        raise PrepareError(
            PREPARE_PREFIX + problem, detail=problem, line=line, column=column, hint=_TRIM_HINT if name else None
        )
    return t.Field(name, type_)


def struct(fields: Sequence[t.Field], *, line: int, column: int) -> t.Struct:
    """``STRUCT<...>``, refused with ``SqlStruct.Builder``'s error when two fields share a name
    (names are case sensitive: ``a`` and ``A`` are two fields)."""
    seen: dict[str, t.Field] = {}
    for field in fields:
        first = seen.setdefault(field.name, field)
        if first is not field:
            problem = f"Duplicate field names found in STRUCT: '{first}' and '{field}'"
            raise PrepareError(PREPARE_PREFIX + problem, detail=problem, line=line, column=column)
    return t.Struct(tuple(fields))
