"""Fuzz the loaders of persisted plans: ``plan.json`` and ``spec.json`` of ``historical_plans/``, mutated.

The contract: :func:`qtt.plan.ir.codec.loads` and :func:`qtt.harness.historical.spec.loads` raise only
:class:`~qtt.errors.PlanFileError` (a qtt error) naming the file.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from qtt.harness.historical import spec
from qtt.plan.ir import codec
from tests.fuzz.escapes import attempt
from tests.fuzz.inputs import (
    dump,
    historical_documents,
    historical_files,
    json_values,
    mutated_json,
    mutated_text,
    one_of,
)
from tests.fuzz.profiles import fuzz_settings

pytestmark = pytest.mark.fuzz


def texts(name: str) -> st.SearchStrategy[str]:
    return st.one_of(
        mutated_json(partial(historical_documents, name)).map(dump),
        one_of(partial(historical_files, name)).flatmap(mutated_text),
        json_values.map(dump),
    )


def check(load: Callable[..., Any], text: str, file: str) -> str:
    """What became of ``text``: ``loaded``, or the name of the qtt error it raised."""
    _, raised = attempt(lambda: load(text, file=file), lambda error: error.file == file)
    return raised or "loaded"


@pytest.fixture(autouse=True, scope="module")
def _warm() -> None:
    """Build the converters before the first example, whose time the deadline would count."""
    codec.loads(historical_files("plan.json")[0], file="plan.json")
    spec.loads(historical_files("spec.json")[0], file="spec.json")


def test_the_originals_load() -> None:
    for text in historical_files("plan.json"):
        codec.loads(text, file="plan.json")
    for text in historical_files("spec.json"):
        spec.loads(text, file="spec.json")


@fuzz_settings
@given(texts("plan.json"))
def test_the_plan_loader_raises_only_located_qtt_errors(text: str) -> None:
    event(check(codec.loads, text, "plan.json"))


@fuzz_settings
@given(texts("spec.json"))
def test_the_spec_loader_raises_only_located_qtt_errors(text: str) -> None:
    event(check(spec.loads, text, "spec.json"))
