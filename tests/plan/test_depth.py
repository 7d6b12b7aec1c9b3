"""Deep inputs: generated SQL and nested JSON at the sizes real files reach, and past the limits."""

from __future__ import annotations

import json
import sys

import pytest

from qtt.errors import CaseFileError, PlanFileError, SqlSyntaxError
from qtt.harness.cases.loader import load_text
from qtt.harness.cases.model import CaseVariant
from qtt.harness.replay.runner import plan_variant
from qtt.plan.ir import codec
from qtt.plan.ir.depth import MAX_JSON_DEPTH, deep_call, json_too_deep, tree_depth
from qtt.sql import parse_statements
from qtt.sql.parser import MAX_EXPRESSION_DEPTH

DDL = "CREATE STREAM S (ID INT KEY, A STRING, B INT) WITH (kafka_topic='s', value_format='JSON');"

# The sizes of issue 9 (each failed with RecursionError), and the documented limit itself.
EXPRESSIONS = {
    "concat": lambda n: " || ".join(["A"] * n),
    "nested calls": lambda n: "ABS(" * n + "B" + ")" * n,
    "or": lambda n: " OR ".join(["B = 1"] * n),
    "and": lambda n: " AND ".join(["B = 1"] * n),
}
SIZES = {"concat": 200, "nested calls": 250, "or": 330, "and": 330}


def _variant(expression: str) -> CaseVariant:
    select = f"CREATE STREAM O AS SELECT ID, {expression} AS X FROM S;"
    case = {"tests": [{"name": "deep", "statements": [DDL, select], "inputs": [{"topic": "s", "value": {}}]}]}
    [variant] = load_text(json.dumps(case), file="deep.json").variants
    return variant


@pytest.mark.parametrize("kind", sorted(EXPRESSIONS))
def test_long_generated_sql_plans_and_round_trips(kind: str) -> None:
    plan = plan_variant(_variant(EXPRESSIONS[kind](SIZES[kind]))).plan
    text = codec.dumps(plan)
    assert codec.dumps(codec.loads(text)) == text


@pytest.mark.parametrize("kind", ["or", "nested calls"])
def test_expressions_at_the_limit_plan(kind: str) -> None:
    plan = plan_variant(_variant(EXPRESSIONS[kind](MAX_EXPRESSION_DEPTH - 10))).plan
    text = codec.dumps(plan)
    assert codec.dumps(codec.loads(text)) == text


@pytest.mark.parametrize("kind", sorted(EXPRESSIONS))
def test_expressions_past_the_limit_are_a_located_syntax_error(kind: str) -> None:
    script = f"{DDL}\nCREATE STREAM O AS SELECT ID, {EXPRESSIONS[kind](MAX_EXPRESSION_DEPTH + 50)} AS X FROM S;"
    with pytest.raises(SqlSyntaxError, match="nests deeper than 1,000 levels") as caught:
        parse_statements(script)
    assert caught.value.line == 2 and caught.value.column is not None


def test_a_case_file_nesting_a_thousand_brackets_loads() -> None:
    value = "[" * 1000 + "1" + "]" * 1000
    text = f'{{"tests": [{{"name": "n", "statements": ["{DDL}"], "inputs": [{{"topic": "s", "value": {value}}}]}}]}}'
    loaded = load_text(text, file="deep.json")
    assert not loaded.errors and len(loaded.variants) == 1


def test_a_case_file_past_the_json_limit_is_a_located_error() -> None:
    value = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    text = f'{{"tests": [{{"name": "n",\n "inputs": [{{"topic": "s", "value": {value}}}]}}]}}'
    with pytest.raises(CaseFileError, match="nests deeper than 5,000 levels") as caught:
        load_text(text, file="deep.json")
    error = caught.value
    assert (error.file, error.line) == ("deep.json", 2)
    assert error.path is not None and error.path.startswith("$.tests[0].inputs[0].value[0]")


def test_a_plan_past_the_json_limit_is_a_located_plan_file_error() -> None:
    with pytest.raises(PlanFileError, match="nests deeper") as caught:
        codec.loads('{"plan": ' + "[" * (MAX_JSON_DEPTH + 1), file="h/plan.json")
    assert (caught.value.file, caught.value.path, caught.value.line) == ("h/plan.json", "$.plan" + "[0]" * 6, 1)


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ('{"a": "x", "b": [1, {"c": [[[[]]]]}]}', 3, ("$.b[1].c", 1, 27)),
        ('{"a": "[", "b": {"c": {"d": {}}}}', 3, ("$.b.c.d", 1, 29)),
        ('{"a": "x",\n "b": [1, {"c": [[]]}]}', 10, None),
    ],
)
def test_json_too_deep_names_the_path_and_position(text: str, limit: int, expected: object) -> None:
    assert json_too_deep(text, limit) == expected


def test_deep_call_raises_the_recursion_limit_only_while_it_runs() -> None:
    before = sys.getrecursionlimit()

    def depth(n: int) -> int:
        return 0 if n == 0 else 1 + depth(n - 1)

    assert deep_call(depth, 20_000) == 20_000
    assert sys.getrecursionlimit() == before


def test_deep_call_hands_exceptions_to_the_caller() -> None:
    with pytest.raises(KeyError, match="x"):
        deep_call({}.__getitem__, "x")


def test_tree_depth_is_iterative_and_stops_early() -> None:
    chain: list = []
    for _ in range(10_000):
        chain = [chain]
    assert tree_depth(chain, lambda node: node) == 10_001
    assert tree_depth(chain, lambda node: node, stop=5) == 6


def test_escape_s2_a_spec_nesting_100000_levels_is_a_located_error() -> None:
    from qtt.harness.historical import spec

    with pytest.raises(PlanFileError, match="nests deeper") as caught:
        spec.loads("[" * 100_000 + "]" * 100_000, file="spec.json")
    assert (caught.value.file, caught.value.line, caught.value.column) == ("spec.json", 1, MAX_JSON_DEPTH + 1)


def test_escape_s3_plan_statements_handles_400_or_terms_without_a_deep_caller() -> None:
    from qtt.plan.statements import plan_statements

    where = " OR ".join(["B = 1"] * 400)
    planned = plan_statements(parse_statements(f"{DDL}\nCREATE STREAM O AS SELECT ID, A FROM S WHERE {where};"))
    assert len(planned.plan.statements) == 2
