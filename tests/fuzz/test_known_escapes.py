"""Reproducers of the escapes listed in :mod:`tests.fuzz.escapes` (``/work/briefs/escapes.md``).

Each is expected to fail until its fix lands in code this suite does not own; then drop the
``xfail`` mark and the ``KNOWN`` entry.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest

from qtt.errors import QttError
from qtt.harness import spec
from qtt.harness.loader import load_text
from qtt.plan import codec
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements
from tests.fuzz.profiles import production_stack

pytestmark = pytest.mark.fuzz

DEEP = "[" * 100_000 + "]" * 100_000
SOURCE = "CREATE STREAM s (id INT KEY, a VARCHAR) WITH (kafka_topic='t', value_format='JSON');\n"


def _only_qtt_errors(load: Callable[..., object], *args: object, **kwargs: object) -> None:
    with contextlib.suppress(QttError), production_stack():
        load(*args, **kwargs)


@pytest.mark.xfail(strict=False, reason="escapes.md S1: ValueError from json.loads in qtt/plan/codec.py loads")
def test_s1_a_plan_with_a_long_integer() -> None:
    _only_qtt_errors(codec.loads, '{"version": ' + "1" * 5000 + "}", file="plan.json")


@pytest.mark.xfail(strict=False, reason="escapes.md S2: RecursionError in qtt/serde/values.py loads")
def test_s2_a_deeply_nested_case_file() -> None:
    _only_qtt_errors(load_text, '{"tests": [' + DEEP + "]}", file="c.json")


@pytest.mark.xfail(strict=False, reason="escapes.md S2: RecursionError in qtt/serde/values.py loads")
def test_s2_a_deeply_nested_spec() -> None:
    _only_qtt_errors(spec.loads, DEEP, file="spec.json")


@pytest.mark.xfail(strict=False, reason="escapes.md S2: RecursionError in qtt/plan/codec.py loads")
def test_s2_a_deeply_nested_plan() -> None:
    _only_qtt_errors(codec.loads, DEEP, file="plan.json")


@pytest.mark.xfail(strict=False, reason="escapes.md S3: RecursionError in qtt/plan/analyzer.py")
@pytest.mark.parametrize(
    "expression",
    [" || ".join(["a"] * 300), "UCASE(" * 400 + "a" + ")" * 400, " OR ".join(["a = 'x'"] * 400)],
    ids=["concat", "calls", "or"],
)
def test_s3_long_expressions(expression: str) -> None:
    _only_qtt_errors(
        plan_statements, parse_statements(SOURCE + f"CREATE STREAM o AS SELECT id, {expression} AS x FROM s;")
    )
