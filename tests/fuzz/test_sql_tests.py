"""Fuzz SQL test files: random text, and qtt's own SQL tests mutated.

The contract: loading a SQL test file and interpreting its tests (everything before Spark)
returns or raises only qtt's own errors, each naming the file or the line.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from qtt.harness.sqltests.files import parse_sql_tests
from qtt.harness.sqltests.script import interpret
from tests.fuzz.escapes import attempt
from tests.fuzz.inputs import mutated_text, one_of
from tests.fuzz.profiles import fuzz_settings

pytestmark = pytest.mark.fuzz

FILE = "fuzz.sql"
CASES = Path(__file__).resolve().parents[2] / "cases"


@cache
def sql_files() -> tuple[str, ...]:
    return tuple(p.read_text(encoding="utf-8") for p in sorted(CASES.glob("*.sql")))


@cache
def single_tests() -> tuple[str, ...]:
    """Each test of ``cases/*.sql`` alone in a file."""
    return tuple(
        test.script.lstrip("\n") and f"--@test: {test.name}\n{test.script.strip()}\n"
        for text in sql_files()
        for test in parse_sql_tests(text, file=FILE)
    )


def texts() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=200),
        st.text(max_size=200).map(lambda body: f"--@test: t\n{body}"),
        one_of(single_tests).flatmap(mutated_text),
    )


def check(text: str) -> str:
    """What became of ``text``: how many tests interpreted, or the qtt error it raised."""

    def run() -> int:
        tests = parse_sql_tests(text, file=FILE)
        for test in tests:
            interpret(test)
        return len(tests)

    count, raised = attempt(run, lambda error: error.file == FILE or error.line is not None)
    return raised or f"{min(count, 3)} test(s)"


def test_the_own_sql_tests_load_and_interpret() -> None:
    for text in sql_files():
        for test in parse_sql_tests(text, file=FILE):
            script = interpret(test)
            assert script.error is None or test.expected_error, (test.name, script.error)


@fuzz_settings
@given(texts())
def test_sql_test_files_raise_only_located_qtt_errors(text: str) -> None:
    event(check(text))
