"""Memoized makers of PySpark objects: once per argument and Spark, the most recently used kept."""

from __future__ import annotations

from qtt.runtime.spark import jvm_functions


def _counting(made: list[int]):  # type: ignore[no-untyped-def]
    @jvm_functions.per_session(maxsize=2)
    def make(name: str) -> object:
        made.append(1)
        return object()

    return make


def test_a_memoized_maker_makes_once_per_argument_and_spark(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    made: list[int] = []
    make = _counting(made)
    monkeypatch.setattr(jvm_functions, "_spark_now", lambda: (False, "jvm one"))
    first = make("a")
    assert make("a") is first and len(made) == 1
    monkeypatch.setattr(jvm_functions, "_spark_now", lambda: (False, "jvm two"))  # a new JVM
    assert make("a") is not first and len(made) == 2
    monkeypatch.setattr(jvm_functions, "_spark_now", lambda: (True, None))  # Spark Connect
    assert make("a") is not first and len(made) == 3


def test_a_memoized_maker_keeps_the_most_recently_used(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    made: list[int] = []
    make = _counting(made)
    monkeypatch.setattr(jvm_functions, "_spark_now", lambda: (False, "jvm"))
    a = make("a")
    make("b")
    assert make("a") is a  # used again: b is now the oldest
    make("c")  # evicts b
    assert make("a") is a and len(made) == 3
    make("b")
    assert len(made) == 4
