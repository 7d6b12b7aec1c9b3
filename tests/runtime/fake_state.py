"""A stand-in for Spark's stateful processor handle, to drive an operator without Spark:
value state variables kept in memory, by name. Each call is one trip to Spark's state server;
``trips`` lists them, in order, as ``(call, state variable)``."""

from __future__ import annotations

from typing import Any


class ValueState:
    def __init__(self, name: str = "", trips: list[tuple[str, str]] | None = None) -> None:
        self.value: Any = None
        self.name = name
        self.trips = [] if trips is None else trips

    def exists(self) -> bool:
        self.trips.append(("exists", self.name))
        return self.value is not None

    def get(self) -> Any:
        self.trips.append(("get", self.name))
        return self.value

    def update(self, value: Any) -> None:
        self.trips.append(("update", self.name))
        self.value = value

    def clear(self) -> None:
        self.trips.append(("clear", self.name))
        self.value = None


class Handle:
    def __init__(self) -> None:
        self.states: dict[str, ValueState] = {}
        self.trips: list[tuple[str, str]] = []

    def getValueState(self, name: str, *_: Any) -> ValueState:
        return self.states.setdefault(name, ValueState(name, self.trips))
