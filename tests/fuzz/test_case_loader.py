"""Fuzz the case loader: random JSON and text, and real cases mutated.

The contract: :func:`~qtt.harness.cases.loader.load_text` returns or raises only qtt's own
errors, and every error names the file and where in it (JSON path or line).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from qtt.errors import QttError
from qtt.harness.cases.loader import load_text
from tests.fuzz.escapes import attempt
from tests.fuzz.inputs import case_files, dump, json_values, mutated_json, mutated_text, one_of
from tests.fuzz.profiles import fuzz_settings

pytestmark = pytest.mark.fuzz

FILE = "fuzz.json"


@cache
def single_cases() -> tuple[Any, ...]:
    """Each case of ``cases/`` alone in a file (small, so that each example is quick)."""
    return tuple({"tests": [case]} for text in case_files() for case in json.loads(text)["tests"])


def case_file_texts() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=200),
        json_values.map(dump),
        st.builds(lambda tests: dump({"tests": tests}), st.lists(json_values, max_size=3)),
        mutated_json(single_cases).map(dump),
        one_of(single_cases).map(dump).flatmap(mutated_text),
    )


def check(text: str) -> str:
    """What became of ``text``: ``loaded``, or the name of the qtt error it raised."""
    loaded, raised = attempt(lambda: load_text(text, file=FILE), lambda error: error.file == FILE)
    if raised:
        return raised
    for error in loaded.errors:
        assert isinstance(error, QttError)
        assert error.file == FILE, f"no file in: {error}"
        assert error.path or error.line, f"no JSON path or line in: {error}"
    return "loaded with errors" if loaded.errors else "loaded"


@pytest.fixture(autouse=True, scope="module")
def _warm() -> None:
    """Build the converter before the first example, whose time the deadline would count."""
    check(dump(single_cases()[0]))


def test_the_cases_load() -> None:
    for text in case_files():
        assert not load_text(text, file=FILE).errors


@fuzz_settings
@given(case_file_texts())
def test_the_case_loader_raises_only_located_qtt_errors(text: str) -> None:
    event(check(text))
