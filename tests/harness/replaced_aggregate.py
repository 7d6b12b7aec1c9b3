"""Swap the runtime's aggregate processor for a test's subclass, shipped to Spark's workers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from pyspark import cloudpickle

from qtt.runtime.operators import stateful


@contextmanager
def replaced_aggregate(monkeypatch: pytest.MonkeyPatch, processor: type[stateful.AggregateProcessor]) -> Iterator[None]:
    """The builder starts ``processor`` instead; the workers get its class by value, as they
    cannot import a test module."""
    module = sys.modules[processor.__module__]
    cloudpickle.register_pickle_by_value(module)
    monkeypatch.setattr(stateful, "AggregateProcessor", processor)
    try:
        yield
    finally:
        cloudpickle.unregister_pickle_by_value(module)
