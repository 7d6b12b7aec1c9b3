"""PySpark's warnings stay out of the user's output.

``pyspark.sql.functions.udf`` called without ``useArrow`` guesses the UDF's eval type from
its type hints and, for a plain Python function with hints, writes ``UserWarning: Cannot
infer the eval type from type hints`` on the user's stderr. Every UDF qtt makes says
``useArrow=True``: the Arrow-optimized road it takes anyway when left to guess, since Spark 4
enables ``spark.sql.execution.pythonUDF.arrow.enabled`` by default (the two roads differ: a
pickled UDF hands a map back through a Java HashMap, in hash order).
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as st

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

QTT = Path(__file__).parents[2] / "qtt"


def _udf_calls() -> list[tuple[Path, ast.Call]]:
    calls = []
    for path in sorted(QTT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "udf":
                calls.append((path, node))
    return calls


def test_every_udf_qtt_makes_says_use_arrow_true() -> None:
    calls = _udf_calls()
    assert len(calls) >= 10
    loud = [
        f"{path.relative_to(QTT.parent)}:{call.lineno}"
        for path, call in calls
        if not any(
            k.arg == "useArrow" and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords
        )
    ]
    assert not loud, f"F.udf without useArrow=True (PySpark warns on stderr): {loud}"


def test_a_hinted_function_made_a_udf_with_use_arrow_true_warns_nothing() -> None:
    def hinted(text: str | None) -> bool:
        return text is not None

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.udf(hinted, st.BooleanType(), useArrow=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.udf(hinted, st.BooleanType())
    assert any("Cannot infer the eval type" in str(w.message) for w in caught), "PySpark no longer warns: drop this"


@pytest.mark.spark
def test_the_road_qtt_names_is_the_one_spark_takes_by_default(spark: SparkSession) -> None:
    from qtt.runtime.spark import lines

    if lines.line(lines.pyspark_version()) < (4, 2):
        pytest.skip("Spark 4.1's default is the pickled road; qtt takes the Arrow road on every line")
    assert spark.conf.get("spark.sql.execution.pythonUDF.arrow.enabled") == "true"
