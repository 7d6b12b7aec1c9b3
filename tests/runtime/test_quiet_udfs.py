"""PySpark's warnings stay out of the user's output.

``pyspark.sql.functions.udf`` called without ``useArrow`` guesses the UDF's eval type from
its type hints and, for a plain Python function with hints, writes ``UserWarning: Cannot
infer the eval type from type hints`` on the user's stderr. Every UDF qtt makes says
``useArrow=False``, which is also the road it takes when left to guess.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

from pyspark.sql import functions as F
from pyspark.sql import types as st

QTT = Path(__file__).parents[2] / "qtt"


def _udf_calls() -> list[tuple[Path, ast.Call]]:
    calls = []
    for path in sorted(QTT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "udf":
                calls.append((path, node))
    return calls


def test_every_udf_qtt_makes_says_use_arrow_false() -> None:
    calls = _udf_calls()
    assert len(calls) >= 10
    loud = [
        f"{path.relative_to(QTT.parent)}:{call.lineno}"
        for path, call in calls
        if not any(
            k.arg == "useArrow" and isinstance(k.value, ast.Constant) and k.value.value is False for k in call.keywords
        )
    ]
    assert not loud, f"F.udf without useArrow=False (PySpark warns on stderr): {loud}"


def test_a_hinted_function_made_a_udf_with_use_arrow_false_warns_nothing() -> None:
    def hinted(text: str | None) -> bool:
        return text is not None

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.udf(hinted, st.BooleanType(), useArrow=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.udf(hinted, st.BooleanType())
    assert any("Cannot infer the eval type" in str(w.message) for w in caught), "PySpark no longer warns: drop this"
