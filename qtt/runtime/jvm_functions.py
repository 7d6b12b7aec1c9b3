"""Spark's SQL functions, looked up in the JVM once per JVM, not once per call.

A classic PySpark session calls each function of ``org.apache.spark.sql.functions``
(``F.col``, ``F.lit``, ``F.when``, ...) through ``pyspark.sql.functions.builtin._get_jvm_function``,
which finds the class and then the method by reflection: two JVM round trips before the call
itself, on every call. Building a group's plans makes tens of thousands of such calls
(the 51 stateful case variants: 46,244 round trips, 15,532 of them these lookups).
:func:`install` memoizes the lookup per JVM view; what is called, and how, is unchanged.
Spark Connect builds its functions in Python and never takes this road.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyspark.sql.functions.builtin as builtin

_lookup: Callable[[str, Any], Callable[..., Any]] = builtin._get_jvm_function
#: each function, by name and JVM view (held, so that a new JVM never meets an old entry)
_found: dict[tuple[str, Any], Callable[..., Any]] = {}


def _memoized(name: str, sc: Any) -> Callable[..., Any]:
    key = (name, sc._jvm)
    function = _found.get(key)
    if function is None:
        function = _found[key] = _lookup(name, sc)
    return function


def install() -> None:
    """Memoize PySpark's lookups of Spark's SQL functions (idempotent)."""
    builtin._get_jvm_function = _memoized
