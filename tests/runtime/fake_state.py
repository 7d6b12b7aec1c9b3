"""A stand-in for Spark's stateful processor handle, to drive an operator without Spark:
value state variables kept in memory, by name."""

from __future__ import annotations

from typing import Any


class ValueState:
    def __init__(self) -> None:
        self.value: Any = None

    def exists(self) -> bool:
        return self.value is not None

    def get(self) -> Any:
        return self.value

    def update(self, value: Any) -> None:
        self.value = value

    def clear(self) -> None:
        self.value = None


class Handle:
    def __init__(self) -> None:
        self.states: dict[str, ValueState] = {}

    def getValueState(self, name: str, *_: Any) -> ValueState:
        return self.states.setdefault(name, ValueState())
