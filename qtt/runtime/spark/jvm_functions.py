"""Fewer JVM round trips for what PySpark's classic session calls most while a plan is built.

Each Python-to-JVM call is a round trip over py4j's socket, and on a loaded 2-core machine a
round trip costs from 0.15 to 1 ms. Building a group's plans makes tens of thousands of them,
and PySpark spends many on bookkeeping rather than on the call itself. :func:`install` removes
that bookkeeping; what is called in Spark, and with what, is unchanged.

- **Function lookups.** Each function of ``org.apache.spark.sql.functions`` (``F.col``,
  ``F.lit``, ``F.when``, ...) is found through ``_get_jvm_function``, by reflection: two round
  trips before the call itself, on every call. Memoized per JVM view.
- **Lists of columns.** ``_to_seq`` and ``_to_list`` (every ``select``, ``struct``, UDF call, ...)
  look up ``PythonUtils`` and its method (two round trips), then py4j converts the Python list
  into a ``java.util.ArrayList`` with one round trip per element. Here the list is made by
  ``java.util.List.of`` with up to ten elements a call, and the lookups are memoized: a list
  of up to ten columns costs two round trips instead of its length plus four. A list holding
  ``None`` (``List.of`` refuses nulls) takes PySpark's own road.
- **Objects a plan makes again and again**, through :func:`per_session`: a column by name
  (``F.col``, the most frequent call of all) and the serde UDFs (each new one pickles its
  function and registers it in the JVM: about fifteen round trips). Both are immutable, so
  one object serves every plan built while the same Spark runs.

Spark Connect builds its plans in Python and never takes these roads.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, ParamSpec, TypeVar

import pyspark.sql.classic.column as classic_column
import pyspark.sql.classic.dataframe as classic_dataframe
import pyspark.sql.functions.builtin as builtin

_lookup: Callable[[str, Any], Callable[..., Any]] = builtin._get_jvm_function
_pyspark_to_seq = classic_column._to_seq
_pyspark_to_list = classic_column._to_list
#: each JVM member, by name and JVM view (the view is held, so a new JVM never meets an old entry)
_found: dict[tuple[str, Any], Callable[..., Any]] = {}
_P = ParamSpec("_P")
_R = TypeVar("_R")
#: the most elements of one ``java.util.List.of`` call (its largest fixed-arity overload)
LIST_OF_MOST = 10


def _memoized(name: str, sc: Any) -> Callable[..., Any]:
    key = (name, sc._jvm)
    function = _found.get(key)
    if function is None:
        function = _found[key] = _lookup(name, sc)
    return function


def _member(jvm: Any, name: str, find: Callable[[Any], Callable[..., Any]]) -> Callable[..., Any]:
    key = (name, jvm)
    member = _found.get(key)
    if member is None:
        member = _found[key] = find(jvm)
    return member


def java_list(jvm: Any, items: Sequence[Any]) -> Any:
    """A ``java.util.List`` of ``items`` (none of them ``None``), in as few round trips as
    ``java.util.List.of`` allows."""
    list_of = _member(jvm, "java.util.List.of", lambda j: j.java.util.List.of)
    if len(items) <= LIST_OF_MOST:
        return list_of(*items)
    array_list = _member(jvm, "java.util.ArrayList", lambda j: j.java.util.ArrayList)
    whole = array_list(list_of(*items[:LIST_OF_MOST]))
    for start in range(LIST_OF_MOST, len(items), LIST_OF_MOST):
        whole.addAll(list_of(*items[start : start + LIST_OF_MOST]))
    return whole


def _scala_collection(method: str, pyspark_road: Callable[..., Any]) -> Callable[..., Any]:
    """PySpark's ``_to_seq`` or ``_to_list``: ``PythonUtils.<method>`` of a ``java.util.List``."""

    def convert(sc: Any, cols: Iterable[Any], converter: Callable[[Any], Any] | None = None) -> Any:
        items = [converter(c) for c in cols] if converter else list(cols)
        if any(item is None for item in items):
            return pyspark_road(sc, items)
        jvm = sc._jvm
        return _member(jvm, f"PythonUtils.{method}", lambda j: getattr(j.PythonUtils, method))(java_list(jvm, items))

    return convert


_to_seq = _scala_collection("toSeq", _pyspark_to_seq)
_to_list = _scala_collection("toList", _pyspark_to_list)


def install() -> None:
    """Take the shorter roads above in PySpark's classic session (idempotent)."""
    builtin._get_jvm_function = _memoized
    # most of PySpark imports these inside its functions, from the column module; the
    # DataFrame module imported them when it was loaded
    for module in (classic_column, classic_dataframe):
        setattr(module, "_to_seq", _to_seq)  # noqa: B010  # mypy sees no such name in the stubs
        setattr(module, "_to_list", _to_list)  # noqa: B010


def _spark_now() -> tuple[bool, Any]:
    """What a PySpark object is made for: Spark Connect or not, and the classic session's JVM."""
    from pyspark import SparkContext
    from pyspark.sql.utils import is_remote

    context = SparkContext._active_spark_context
    return is_remote(), context._jvm if context is not None else None


def per_session(
    maxsize: int, *, key: Callable[..., Hashable] | None = None
) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Memoize a maker of immutable PySpark objects by its arguments (or by ``key(*args)``, for
    arguments that are not hashable) and the Spark it makes them for: a new JVM, or a switch to
    Spark Connect, never meets an old object. The ``maxsize`` most recently used are kept."""

    def decorate(make: Callable[_P, _R]) -> Callable[_P, _R]:
        kept: OrderedDict[Hashable, _R] = OrderedDict()
        lock = threading.Lock()

        @functools.wraps(make)
        def memoized(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            found = (_spark_now(), key(*args, **kwargs) if key else (args, tuple(sorted(kwargs.items()))))
            with lock:
                if found in kept:
                    kept.move_to_end(found)
                    return kept[found]
            made = make(*args, **kwargs)  # outside the lock: making one may call the JVM
            with lock:
                kept[found] = made
                if len(kept) > maxsize:
                    kept.popitem(last=False)
            return made

        return memoized

    return decorate
