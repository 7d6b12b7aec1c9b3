"""Building a group's many DataFrames: on threads, and their union as a balanced tree.

Building a plan is mostly waiting for the JVM to analyse each DataFrame (PySpark calls it for
every step), and the JVM answers each thread on a thread of its own, so a group's plans, and
each of its slots' rows laid out for a stage, are built on :data:`BUILD_THREADS` threads
(:func:`in_threads`).

Every ``union`` PySpark builds is analysed at once, over both its sides, and the analyser's
checks walk the whole plan: a chain of *n* unions walks the first frame *n* times, so
building a group's union grew with the square of its replays (the three stage inputs of 51
stateful case variants: 5.7 s). A balanced tree walks each frame about log2 *n* times. Spark's
optimizer combines nested unions into one, and a depth-first walk of either shape meets the
frames in the same order, so stateful operators are numbered as in a chain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from pyspark.sql import DataFrame

from qtt.runtime.spark.session import activate

#: threads that build a group's DataFrames (:func:`in_threads`)
BUILD_THREADS = 2
_R = TypeVar("_R")


def in_threads(action: Callable[..., _R], arguments: Sequence[tuple[Any, ...]]) -> list[_R]:
    """``action(*a)`` for each of ``arguments``, on :data:`BUILD_THREADS` threads, in order."""
    if len(arguments) <= 1:
        return [action(*a) for a in arguments]
    with ThreadPoolExecutor(BUILD_THREADS, thread_name_prefix="qtt-build-plan", initializer=activate) as pool:
        return list(pool.map(lambda a: action(*a), arguments))


def union_all(frames: Sequence[DataFrame], *, by_name: bool = False) -> DataFrame:
    """``frames``' rows as one DataFrame, in their order; ``by_name`` matches columns by name, a
    column some frames lack being null in their rows."""
    if not frames:
        raise ValueError("a union needs at least one DataFrame")
    level = list(frames)
    while len(level) > 1:
        paired = [_union(level[i], level[i + 1], by_name) for i in range(0, len(level) - 1, 2)]
        level = paired + ([level[-1]] if len(level) % 2 else [])
    return level[0]


def _union(first: DataFrame, second: DataFrame, by_name: bool) -> DataFrame:
    return first.unionByName(second, allowMissingColumns=True) if by_name else first.union(second)
