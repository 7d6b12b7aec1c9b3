"""The interface every aggregate implementation has (see :mod:`qtt.runtime.aggregates.aggregators`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from qtt.plan.functions.aggregate_signatures import Aggregate


class Udaf(ABC):
    """One aggregate's implementation. Subclasses are stateless; the accumulator is the state."""

    def __init__(self, aggregate: Aggregate) -> None:
        self.aggregate_info = aggregate

    @abstractmethod
    def initial(self) -> Any:
        """The accumulator of an empty group."""

    @abstractmethod
    def aggregate(self, acc: Any, *values: Any) -> Any:
        """The accumulator after adding one record's column values."""

    def undo(self, acc: Any, *values: Any) -> Any:
        """The accumulator after retracting values added before (table aggregations only)."""
        msg = f"{self.aggregate_info.name} cannot undo a value; ksqlDB only applies it to streams"
        raise NotImplementedError(msg)

    @abstractmethod
    def merge(self, first: Any, second: Any) -> Any:
        """The accumulator of two merged session windows (``first`` is the earlier one)."""

    @abstractmethod
    def result(self, acc: Any) -> Any:
        """The output value for an accumulator."""
