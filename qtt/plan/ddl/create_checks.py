"""The checks ksqlDB's parser makes of a CREATE statement's name and columns, before its WITH
clause (``AstBuilder``: a HEADER column's key, the source name, ``TableElements``' duplicate names).

A source's name must be one a Kafka Streams store can take (``ParserUtil.getSourceName``): its
error is a syntax error located at the name. The others are errors ksqlDB raises as it prepares
the statement (``Failed to prepare statement: ...``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from qtt.errors import SqlSyntaxError, StatementError
from qtt.plan.ir.schema import HEADER
from qtt.sql import ast
from qtt.sql.type_rules import PREPARE_PREFIX, PrepareError

#: ``ParserUtil.VALID_SOURCE_NAMES``
VALID_SOURCE_NAME = re.compile(r"[a-zA-Z0-9_-]*")
#: what comes before the name in a CREATE statement
_BEFORE_NAME = re.compile(
    r"\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:SOURCE\s+)?(?:STREAM|TABLE)\s+(?:IF\s+NOT\s+EXISTS\s+)?", re.IGNORECASE
)


def check_create_source(statement: ast.CreateSource) -> None:
    """A CREATE STREAM|TABLE's HEADER keys, name and column names, in ksqlDB's order."""
    for element in statement.elements:
        if element.constraint == HEADER and not (element.header_key or "").strip():
            raise StatementError(f"{PREPARE_PREFIX}Header column must have a non-empty header key name defined")
    check_source_name(statement)
    counts = Counter(element.name for element in statement.elements)
    duplicates = [name for name, count in counts.items() if count > 1]
    if duplicates:
        shown = ", ".join(f"`{name}`" for name in duplicates)
        raise StatementError(f"{PREPARE_PREFIX}Duplicate column names: {shown}")


def missing_primary_key(name: str, properties: Mapping[str, object]) -> str:
    """ksqlDB's message for a CREATE TABLE without key columns, with a hint when its value
    columns come from a ``VALUE_SCHEMA_ID`` (``CreateSourceFactory.createTableCommand``)."""
    msg = "Tables require a PRIMARY KEY. Please define the PRIMARY KEY."
    if properties.get("VALUE_SCHEMA_ID") is None:
        return msg
    return (
        f"{msg}\nUse a partial schema to define the primary key and still load the value columns from "
        f"the Schema Registry, for example:\n\tCREATE TABLE {name} (ID INT PRIMARY KEY) WITH (...);"
    )


def check_source_name(statement: ast.CreateSource | ast.CreateAsSelect) -> None:
    """Refuse a name with characters other than letters, digits, ``_`` and ``-`` (``ParserUtil.getSourceName``)."""
    if VALID_SOURCE_NAME.fullmatch(statement.name):
        return
    where = "?"
    before = _BEFORE_NAME.match(statement.text)
    if statement.pos is not None and before is not None:
        lines = statement.text[: before.end()].split("\n")
        line = statement.pos.line + len(lines) - 1
        column = (statement.pos.column if len(lines) == 1 else 1) + len(lines[-1])
        where = f"Line: {line}, Col: {column}"
    msg = f"Illegal argument at {where}. Source names may only contain alphanumeric values, '_' or '-'."
    raise SqlSyntaxError(msg, hint=f"the name is {statement.name!r}")


def wrong_key_error(element: ast.TableElement, problem: str) -> PrepareError:
    """ksqlDB's refusal of a key column's word (``KEY`` in a table, ``PRIMARY KEY`` in a stream):
    ``CreateTable``/``CreateStream`` throw it as the parser builds them, a ``ParseFailedException``
    whose message starts with the column's place in the script (``Line: 3, Col: 3: ...``)."""
    if element.pos is None:
        return PrepareError(problem)
    where = f"Line: {element.pos.line}, Col: {element.pos.column}: "
    return PrepareError(where + problem, detail=problem, line=element.pos.line, column=element.pos.column)
