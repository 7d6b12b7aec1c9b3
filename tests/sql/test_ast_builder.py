"""Building AST nodes from lark's tree: every statement keeps its text and position."""

from __future__ import annotations

import pytest

from qtt.sql import ast, parse_statements

STATEMENTS = [
    "CREATE STREAM S (K INT KEY, V STRING) WITH (kafka_topic='s', value_format='JSON');",
    "CREATE STREAM T AS SELECT * FROM S;",
    "INSERT INTO T SELECT * FROM S;",
    "INSERT INTO S (K, V) VALUES (1, 'a');",
    "ALTER STREAM S ADD COLUMN W INT;",
    "SET 'auto.offset.reset'='earliest';",
    "UNSET 'auto.offset.reset';",
    "DROP STREAM T;",
]


@pytest.mark.parametrize("text", STATEMENTS)
def test_every_statement_carries_its_text_and_position(text: str) -> None:
    (statement,) = parse_statements("\n" + text)
    assert isinstance(statement, ast.Statement)
    assert statement.text == text.removesuffix(";")
    assert statement.pos == ast.Pos(2, 1)
