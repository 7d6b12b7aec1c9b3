"""Compiled plan expressions on a small static DataFrame: ksqlDB's semantics, case by case.

Each case in ``fixtures/expressions.json`` names an expression, its input columns (name ->
SQL type), input rows, the expected SQL type and the expected values. Values are JSON with
a few spellings for what JSON lacks: ``"NaN"``/``"Infinity"`` for DOUBLE, strings for
DECIMAL and DATE, objects for MAP and STRUCT.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from qtt import sqltypes as t
from qtt.plan.analysis.analyzer import Analyzer, Scope, ScopeColumn
from qtt.plan.ir import expressions as e
from qtt.sql import parse_expression, parse_type

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CASES = json.loads((Path(__file__).parent / "fixtures" / "expressions.json").read_text(encoding="utf-8"))


def to_python(value: Any, type_: t.SqlType) -> Any:
    """A fixture value as PySpark holds it."""
    if value is None:
        return None
    if type_ == t.DOUBLE:
        return float(value)
    if isinstance(type_, t.Decimal):
        return decimal.Decimal(value)
    if type_ == t.DATE:
        return datetime.date.fromisoformat(value)
    if isinstance(type_, t.Array):
        return [to_python(v, type_.element) for v in value]
    if isinstance(type_, t.Map):
        return {to_python(k, type_.key): to_python(v, type_.value) for k, v in value.items()}
    if isinstance(type_, t.Struct):
        return tuple(to_python(value.get(f.name), f.type) for f in type_.fields)
    return value


def from_spark(value: Any) -> Any:
    """A collected value in the fixture's spelling."""
    if hasattr(value, "asDict"):
        return {k: from_spark(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {str(from_spark(k)): from_spark(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_spark(v) for v in value]
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, decimal.Decimal | datetime.date):
        return str(value)
    return value


@pytest.fixture(scope="module")
def results(spark: SparkSession) -> list[tuple[t.SqlType, list[Any]]]:
    """Every case evaluated in one Spark job (one code generation, one collect).

    Case ``i`` reads its columns from ``c{i}_NAME``, and its expression only counts on its
    own rows (``__case = i``), so a case that fails when evaluated elsewhere stays honest.
    """
    from pyspark.sql import functions as F

    from qtt.runtime.build.compiler import Compiler
    from qtt.runtime.spark.spark_types import struct_of

    all_columns: list[tuple[str, t.SqlType]] = [("__case", t.INTEGER)]
    selected = []
    plans = []
    for index, case in enumerate(CASES):
        columns = [(name, parse_type(type_)) for name, type_ in case["columns"].items()]
        all_columns += [(f"c{index}_{name}", type_) for name, type_ in columns]
        scope = Scope([ScopeColumn(name, type_, input_name=f"c{index}_{name}") for name, type_ in columns])
        plan = Analyzer(scope, "SELECT").typed(parse_expression(case["expr"]))
        plans.append(plan)
        selected.append(F.when(F.col("__case") == index, Compiler()(plan)).alias(f"r{index}"))
    rows = []
    width = len(all_columns)
    offset = 1
    for index, case in enumerate(CASES):
        types = [parse_type(type_) for type_ in case["columns"].values()]
        for row in case["rows"]:
            values: list[Any] = [None] * width
            values[0] = index
            values[offset : offset + len(types)] = [to_python(v, ty) for v, ty in zip(row, types, strict=True)]
            rows.append(tuple(values))
        offset += len(types)
    df = spark.createDataFrame(rows, struct_of(all_columns))
    collected = df.select("__case", *selected).collect()
    out: list[tuple[t.SqlType, list[Any]]] = [(plan.result_type, []) for plan in plans]
    for row in collected:
        index = row["__case"]
        out[index][1].append(from_spark(row[f"r{index}"]))
    return out


@pytest.mark.spark
@pytest.mark.parametrize("index", range(len(CASES)), ids=[c["expr"] for c in CASES])
def test_expression(results: list[tuple[t.SqlType, list[Any]]], index: int) -> None:
    case = CASES[index]
    result_type, values = results[index]
    assert str(result_type) == case["type"]
    assert values == case["expected"], case.get("why", "")


def untranslated(registry: dict[str, type[e.Expression]]) -> list[str]:
    """The tags in ``registry`` whose class the Compiler cannot dispatch."""
    from qtt.runtime.build.compiler import Compiler

    dispatcher = Compiler.__dict__["visit"].dispatcher
    fallback = dispatcher.dispatch(e.Expression)
    return sorted(tag for tag, cls in registry.items() if dispatcher.dispatch(cls) is fallback)


def test_every_expression_tag_has_a_runtime_translation() -> None:
    assert untranslated(e.Expression.registry) == []


def test_a_tag_without_a_translation_is_reported() -> None:
    # No type_tag, so the class stays out of the real registry: other tests never see it.
    class Untranslated(e.Expression):
        pass

    assert untranslated({**e.Expression.registry, "untranslated": Untranslated}) == ["untranslated"]


def lambda_of(params: tuple[str, ...], body: e.Expression) -> e.Lambda:
    return e.Lambda(params=params, body=body, sql_type=body.result_type)


def var(name: str) -> e.LambdaVariable:
    return e.LambdaVariable(name=name, sql_type=t.INTEGER)


@pytest.mark.spark
def test_lambdas_compile_for_spark_higher_order_functions(spark: SparkSession) -> None:
    from pyspark.sql import functions as F

    from qtt.runtime.build.compiler import Compiler

    compile_ = Compiler({"OFFSET": F.lit(100)})
    plus = lambda_of(("X",), e.Arithmetic(op="+", left=var("X"), right=var("OFFSET"), sql_type=t.INTEGER))
    positive = lambda_of(("X",), e.Comparison(op=">", left=var("X"), right=e.Literal(value=1, sql_type=t.INTEGER)))
    total = lambda_of(("A", "X"), e.Arithmetic(op="+", left=var("A"), right=var("X"), sql_type=t.INTEGER))
    row = (
        spark.createDataFrame([([1, 2, 3],)], "xs array<int>")
        .select(
            F.transform("xs", compile_(plus)).alias("plus"),
            F.filter("xs", compile_(positive)).alias("positive"),
            F.aggregate("xs", F.lit(0), compile_(total)).alias("total"),
            compile_(e.IntervalUnit(unit="SECOND")).alias("unit"),
        )
        .collect()[0]
    )
    assert row.asDict() == {"plus": [101, 102, 103], "positive": [2, 3], "total": 6, "unit": "SECOND"}


# Generated SQL reaches these sizes (issue 9): each compiles on a deep stack and replays.
LONG_FILTERS = {
    "330 OR terms": " OR ".join(f"V = {i}" for i in range(330)),
    "200 || terms": "LEN(" + " || ".join(["S"] * 200) + ") = 400",
    "250 nested calls": "ABS(" * 250 + "V" + ")" * 250 + " = 4",
}


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(LONG_FILTERS))
def test_long_generated_expressions_replay(spark: SparkSession, no_active_streams: None, name: str) -> None:
    from qtt.harness.cases.loader import load_text
    from qtt.harness.replay.runner import run_variants
    from qtt.harness.status import Status

    case = {
        "name": name,
        "statements": [
            "CREATE STREAM src (K INT KEY, V INT, S STRING) WITH (kafka_topic='t', value_format='JSON');",
            f"CREATE STREAM out AS SELECT K, V FROM src WHERE {LONG_FILTERS[name]};",
        ],
        "inputs": [
            {"topic": "t", "key": 1, "value": {"V": 4, "S": "ab"}},
            {"topic": "t", "key": 2, "value": {"V": -400, "S": "a"}},
        ],
        "outputs": [{"topic": "OUT", "key": 1, "value": {"V": 4}}],
    }
    variants = load_text(json.dumps({"tests": [case]}), file="long.json").variants
    [result] = run_variants(variants, lambda: spark)
    assert result.status == Status.PASSED, result.reason


@pytest.mark.spark
def test_a_failing_part_nulls_the_whole_expression_only_in_a_query_built_for_it(spark: SparkSession) -> None:
    from qtt.runtime.build.compiler import Compiler
    from qtt.runtime.build.lambda_failures import whole_expression_errors

    scope = Scope([ScopeColumn("A", t.INTEGER), ScopeColumn("B", t.INTEGER)])
    texts = ["COALESCE(A + 1, -1)", "(A / B) IS NULL", "ARRAY[A / B, 6]", "A + 1", "ABS(COALESCE(A + 1, -1))"]
    texts += ["CAST(A + 1 > 5 AS STRING)"]
    typed = [Analyzer(scope, "SELECT").typed(parse_expression(text)) for text in texts]
    df = spark.createDataFrame([(None, 2), (6, 0)], "A int, B int")

    def values(**whole: bool) -> list[tuple[Any, ...]]:
        if not whole:
            return [tuple(row) for row in df.select(*(Compiler()(x) for x in typed)).collect()]
        with whole_expression_errors(True, **whole):
            return [tuple(row) for row in df.select(*(Compiler()(x) for x in typed)).collect()]

    assert values() == [(-1, True, [None, 6], None, 1, "false"), (7, True, [None, 6], 7, 7, "true")]
    # a caught part (the call inside ABS, the CAST) is null as a whole where it throws inside
    assert values(caught=True) == [(None, None, [None, 6], None, None, None), (7, None, [None, 6], 7, 7, "true")]
    assert values(caught=False) == [(None, None, None, None, None, None), (7, None, None, 7, 7, "true")]


@pytest.mark.spark
def test_a_function_that_throws_on_its_input_nulls_the_whole_expression_only_in_a_query_built_for_it(
    spark: SparkSession,
) -> None:
    from qtt.runtime.build.compiler import Compiler
    from qtt.runtime.build.lambda_failures import whole_expression_errors

    scope = Scope([ScopeColumn("S", t.STRING)])
    texts = ["PARSE_DATE(S, 'yyyy-MM-dd') IS NULL", "COALESCE(FORMAT_DATE(PARSE_DATE(S, 'yyyy-MM-dd'), 'yyyy'), '-')"]
    texts += ["ARRAY_LENGTH(TRANSFORM(ARRAY[S, S], x => PARSE_DATE(x, 'yyyy-MM-dd')))"]
    typed = [Analyzer(scope, "SELECT").typed(parse_expression(text)) for text in texts]
    df = spark.createDataFrame([("2024-05-06",), ("May",), (None,)], "S string")

    def values(whole: bool, functions: bool) -> list[tuple[Any, ...]]:
        with whole_expression_errors(whole, functions=functions):
            return [tuple(row) for row in df.select(*(Compiler()(x) for x in typed)).collect()]

    part = [(False, "2024", 2), (True, "-", 2), (True, "-", 2)]
    assert values(False, False) == part
    assert values(True, False) == part  # plans persisted before the rule counted functions
    # a null of arguments that are not null is where ksqlDB threw; a null argument throws nothing
    assert values(True, True) == [(False, "2024", 2), (None, "-", None), (True, "-", 2)]
