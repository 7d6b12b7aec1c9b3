"""A group's DataFrames: built on threads in order, unioned as a balanced tree in order (no JVM)."""

from __future__ import annotations

import re

import pytest

from qtt.runtime.spark.frames import in_threads, union_all


class _Frame:
    """Records how it was unioned: ``(a+b)`` by position, ``(a|b)`` by name."""

    def __init__(self, text: str) -> None:
        self.text = text

    def union(self, other: _Frame) -> _Frame:
        return _Frame(f"({self.text}+{other.text})")

    def unionByName(self, other: _Frame, allowMissingColumns: bool = False) -> _Frame:
        assert allowMissingColumns
        return _Frame(f"({self.text}|{other.text})")


def _depth(text: str) -> int:
    deepest = level = 0
    for char in text:
        level += {"(": 1, ")": -1}.get(char, 0)
        deepest = max(deepest, level)
    return deepest


@pytest.mark.parametrize("count", [1, 2, 3, 7, 64])
def test_a_union_keeps_the_frames_order_and_is_balanced(count: int) -> None:
    union = union_all([_Frame(f"f{i}") for i in range(count)])  # type: ignore[list-item]

    assert re.findall(r"f\d+", union.text) == [f"f{i}" for i in range(count)]  # type: ignore[attr-defined]
    assert _depth(union.text) == (count - 1).bit_length()  # type: ignore[attr-defined]


def test_a_union_by_name_unions_by_name() -> None:
    union = union_all([_Frame("a"), _Frame("b"), _Frame("c")], by_name=True)  # type: ignore[list-item]
    assert union.text == "((a|b)|c)"  # type: ignore[attr-defined]


def test_a_union_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        union_all([])


def test_threads_return_results_in_the_arguments_order() -> None:
    assert in_threads(lambda a, b: a * b, [(i, 2) for i in range(10)]) == [i * 2 for i in range(10)]
