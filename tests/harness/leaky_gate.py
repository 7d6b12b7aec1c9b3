"""A deliberately broken start gate, for the test that the swap scenario catches it.

A module of its own so that the test can have Spark's workers receive the class by value
(``cloudpickle.register_pickle_by_value``): they cannot import the tests package.
"""

from __future__ import annotations

from qtt.runtime.operators.gates import StartGate


class OpensAtTheFirstControlEvent(StartGate):
    """Takes the first control event it sees for the whole cut: a row of a partition whose own
    control event has not come yet passes (once every partition's has arrived) though the old
    query wrote its result."""

    def after_cut(self, partition: int, seen: set[int]) -> bool:
        return bool(seen)
