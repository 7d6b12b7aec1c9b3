"""How a qtt error renders its location."""

from __future__ import annotations

from qtt.errors import SqlSyntaxError


def test_a_message_that_starts_with_its_position_says_it_once() -> None:
    error = SqlSyntaxError("line 1:40: Syntax Error\nExpecting {',', ')'}", line=1, column=40)
    assert str(error).startswith("line 1:40: Syntax Error")
    error.file, error.line, error.column = "cases/x.json", 535, None
    error.statement_line, error.statement_column = 1, 40
    assert str(error).startswith("cases/x.json: line 535: line 1:40: Syntax Error")


def test_any_other_message_keeps_the_full_location() -> None:
    error = SqlSyntaxError("Syntax Error", line=2, column=3)
    assert str(error) == "line 2:3: Syntax Error"
