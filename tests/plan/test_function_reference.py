"""Every function of ksqlDB's reference has a signature, a runtime implementation and a case.

Run this module as a script to print how many cases of ``cases/`` call each function:
``python tests/plan/test_function_reference.py``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from qtt.plan.functions import aggregate_signatures, scalar_signatures
from qtt.plan.functions.reference import REFERENCE, ReferenceFunction
from qtt.plan.planner.table_functions import TABLE_FUNCTIONS
from qtt.runtime.aggregates import aggregators
from qtt.runtime.build import flat_map
from qtt.runtime.build.builtins import IMPLEMENTATIONS, RENAMES

CASES = Path(__file__).resolve().parents[2] / "cases"

#: How a ``syntax`` entry shows in SQL.
_SYNTAX = {"CAST": r"\bCAST\s*\(", "ARRAY": r"\bARRAY\s*\[", "MAP": r"\bMAP\s*\("}


def _runtime_names() -> frozenset[str]:
    return (
        frozenset(IMPLEMENTATIONS)
        | frozenset(RENAMES)
        | aggregators.implemented()
        | frozenset(flat_map.IMPLEMENTATIONS)
    )


def _pattern(function: ReferenceFunction) -> re.Pattern[str]:
    return re.compile(_SYNTAX.get(function.name, rf"\b{function.name}\s*\("), re.IGNORECASE)


@cache
def case_counts() -> Counter[str]:
    """How many cases of ``cases/`` call each reference function."""
    statements: list[str] = []
    for path in sorted(CASES.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8")).get("tests", []):
            statements.append("\n".join(case.get("statements", [])))
    counts: Counter[str] = Counter()
    for function in REFERENCE:
        pattern = _pattern(function)
        counts[function.name] = sum(1 for text in statements if pattern.search(text))
    return counts


def _has_signature(function: ReferenceFunction) -> bool:
    if function.kind == "scalar":
        return function.name in scalar_signatures.FUNCTIONS
    if function.kind == "aggregate":
        spec = aggregate_signatures._SPECS.get(function.name)
        return spec is not None and spec.unsupported is None
    if function.kind == "table":
        return function.name in TABLE_FUNCTIONS
    return True  # syntax: its own expression node


_CALLABLE = [f for f in REFERENCE if f.kind != "syntax"]


@pytest.mark.parametrize("function", _CALLABLE, ids=lambda f: f.name)
def test_every_reference_function_has_a_signature(function: ReferenceFunction) -> None:
    assert _has_signature(function), f"{function.name} ({function.kind}, {function.section}) has no signature"


@pytest.mark.parametrize("function", _CALLABLE, ids=lambda f: f.name)
def test_every_reference_function_has_a_runtime_implementation(function: ReferenceFunction) -> None:
    assert function.name in _runtime_names(), f"{function.name} ({function.kind}) has no runtime implementation"


@pytest.mark.parametrize("function", REFERENCE, ids=lambda f: f.name)
def test_every_reference_function_has_a_case(function: ReferenceFunction) -> None:
    assert case_counts()[function.name] > 0, f"no case in cases/ calls {function.name}"


def test_the_reference_lists_each_function_once_with_a_known_kind() -> None:
    names = [f.name for f in REFERENCE]
    assert len(names) == len(set(names))
    assert {f.kind for f in REFERENCE} <= {"scalar", "aggregate", "table", "syntax"}


def main() -> None:
    """Print the per-function count of cases, by section."""
    counts = case_counts()
    for function in REFERENCE:
        print(f"{function.section:22} {function.name:24} {counts[function.name]:4}")
    covered = sum(1 for f in REFERENCE if counts[f.name])
    print(f"{covered}/{len(REFERENCE)} reference functions have at least one case")


if __name__ == "__main__":
    main()
