"""How a qtt error renders its location, and how an interrupt survives the errors raised behind it."""

from __future__ import annotations

import operator
from functools import partial

import pytest

from qtt.errors import SqlSyntaxError, raise_interrupt_behind
from qtt.harness.replay.runner import guarded
from qtt.harness.results import CaseResult, Status


def test_a_message_that_starts_with_its_position_says_it_once() -> None:
    error = SqlSyntaxError("line 1:40: Syntax Error\nExpecting {',', ')'}", line=1, column=40)
    assert str(error).startswith("line 1:40: Syntax Error")
    error.file, error.line, error.column = "cases/x.json", 535, None
    error.statement_line, error.statement_column = 1, 40
    assert str(error).startswith("cases/x.json: line 535: statement line 1:40: Syntax Error\nExpecting")


def test_a_located_syntax_error_says_one_position_even_when_ksqldbs_message_counts_another() -> None:
    # ksqlDB's message counts lines in the case's statements joined by newlines (line 3 here);
    # qtt prints the statement's line in the file and the place inside the statement, once
    error = SqlSyntaxError(
        "line 3:20: Syntax Error\nExpecting {...}\nStatement: ...\nline 3:20: mismatched input 'AND'",
        line=3,
        column=20,
        detail="Syntax Error: unexpected 'AND'; expecting {'(', IDENTIFIER}",
        snippet=" WHERE V = 'x' AND AND V = 'y';\n                   ^^^",
    )
    error.file, error.case, error.path = "cases/t.json", "bad syntax", "$.tests[0].statements[1]"
    error.line, error.column, error.statement_line, error.statement_column = 7, None, 2, 20
    assert str(error).splitlines() == [
        "cases/t.json: case 'bad syntax': $.tests[0].statements[1]: line 7: statement line 2:20: "
        "Syntax Error: unexpected 'AND'; expecting {'(', IDENTIFIER}",
        " WHERE V = 'x' AND AND V = 'y';",
        "                   ^^^",
    ]
    assert error.describe(file_and_case=False).startswith("$.tests[0].statements[1]: line 7: statement line 2:20: ")


def test_a_located_syntax_error_without_a_detail_drops_the_position_its_message_starts_with() -> None:
    error = SqlSyntaxError("line 3:6: Syntax Error\nA lambda parameter must be a name, not 1", line=3, column=6)
    error.path, error.line, error.column, error.statement_line, error.statement_column = "$.p", 8, None, 2, 6
    assert str(error) == "$.p: line 8: statement line 2:6: Syntax Error\nA lambda parameter must be a name, not 1"


def test_any_other_message_keeps_the_full_location() -> None:
    error = SqlSyntaxError("Syntax Error", line=2, column=3)
    assert str(error) == "line 2:3: Syntax Error"


class _Interrupt(BaseException):
    """Like qtt's SIGTERM exception: no :class:`Exception`."""


def _cleanup_fails_while_interrupted() -> None:
    try:
        raise _Interrupt
    finally:
        raise RuntimeError("the connection answered out of turn")


def test_an_error_raised_while_an_interrupt_unwinds_is_that_interrupt() -> None:
    with pytest.raises(RuntimeError) as replaced:
        _cleanup_fails_while_interrupted()
    with pytest.raises(_Interrupt):
        raise_interrupt_behind(replaced.value)
    wrapped = ValueError("wrapped")
    wrapped.__cause__ = replaced.value
    with pytest.raises(_Interrupt):
        raise_interrupt_behind(wrapped)
    raise_interrupt_behind(ValueError("no interrupt behind it"))  # returns


def test_a_replay_whose_cleanup_fails_after_an_interrupt_ends_the_run_instead_of_a_verdict() -> None:
    result = CaseResult("cases/x.json", "x", "", Status.PASSED)
    with pytest.raises(_Interrupt):
        guarded(result, _cleanup_fails_while_interrupted)
    assert result.status == Status.PASSED
    assert not guarded(result, partial(operator.truediv, 1, 0))  # a plain fault is still a verdict
    assert result.status == Status.ERROR and "ZeroDivisionError" in result.reason
