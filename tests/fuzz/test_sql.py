"""Fuzz the SQL front end: token soups and mutated statements from ``cases/``, parsed and planned.

The contract: :func:`~qtt.sql.parse_statements` and
:func:`~qtt.plan.statements.plan_statements` raise only qtt's own errors, each with the line
of the statement (and column where the parser knows it).
"""

from __future__ import annotations

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements
from tests.fuzz.escapes import attempt
from tests.fuzz.inputs import case_scripts, long_expression, mutated_script, mutated_text, one_of, token_soup
from tests.fuzz.profiles import fuzz_settings

pytestmark = pytest.mark.fuzz


def scripts() -> st.SearchStrategy[str]:
    return st.one_of(
        token_soup(),
        mutated_script(),
        long_expression(),
        one_of(case_scripts).flatmap(mutated_text),
        st.text(max_size=100),
    )


def check(text: str) -> str:
    """What became of ``text``: ``planned``, or the name of the qtt error it raised."""
    _, raised = attempt(lambda: plan_statements(parse_statements(text)), lambda error: error.line is not None)
    return raised or "planned"


@pytest.fixture(autouse=True, scope="module")
def _warm() -> None:
    """Build the grammar before the first example, whose time the deadline would count."""
    check(case_scripts()[0])


def test_the_statements_of_the_cases_plan_or_fail_cleanly() -> None:
    for script in case_scripts():
        check(script)


@fuzz_settings
@given(scripts())
def test_the_sql_front_end_raises_only_located_qtt_errors(text: str) -> None:
    event(check(text))
