"""Python workers keep their long-lived objects out of the garbage collector.

PySpark's daemon runs a full ``gc.collect()`` in a worker after every task it runs, and a
worker that has imported pyspark and qtt holds a few hundred thousand objects that live as long
as the process: each collection walks them all. Measured on the 18 restored checkpoints of
``historical_plans/aggregation__*``, those collections were a fifth of the Python CPU time of
the run. :func:`freeze_once` moves every object the worker holds when a kind of task first
starts in it (its imports, mostly) into the collector's permanent generation
(:func:`gc.freeze`), once per kind and process, so that each later collection walks only what
tasks made since.

Only the workers PySpark's daemon forks freeze: they live for many tasks. Elsewhere the call
does nothing: objects frozen in the driver's process would never be freed, and the process
Spark starts on the driver to learn an operator's state variables ends after one call.
"""

from __future__ import annotations

import gc
import sys

_done: set[str] = set()


def freeze_once(kind: str) -> None:
    """In a Spark Python worker, the first call for ``kind`` (the work a task starts: a source
    read, a serializer, a stateful operator) collects and freezes what the worker holds."""
    if kind in _done:
        return
    _done.add(kind)
    if _forked_by_the_daemon():
        gc.collect()
        gc.freeze()


def _forked_by_the_daemon() -> bool:
    main = sys.modules.get("__main__")
    return getattr(getattr(main, "__spec__", None), "name", None) == "pyspark.daemon"
