"""Tagged value classes: each concrete class declares ``type_tag`` and is registered once.

A root class (``class Step(Tagged, root=True)``) owns one registry; every subclass that
declares its own ``type_tag`` is added to it. A duplicate tag fails at import, so two
classes can never claim the same JSON shape.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar

T = TypeVar("T")


class Tagged:
    """Mixin for classes serialized as ``{"@type": tag, ...}``."""

    type_tag: ClassVar[str]
    registry: ClassVar[dict[str, type[Any]]]
    registry_name: ClassVar[str]

    def __init_subclass__(cls, root: bool = False, kind: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if root:
            cls.registry = {}
            cls.registry_name = kind or cls.__name__.lower()
            return
        tag = cls.__dict__.get("type_tag")
        if tag is None:
            return  # an abstract intermediate class
        existing = cls.registry.get(tag)
        if existing is not None:
            msg = f"duplicate {cls.registry_name} tag {tag!r}: {existing.__qualname__} and {cls.__qualname__}"
            raise TypeError(msg)
        cls.registry[tag] = cls


def children_of(value: Any, kind: type[T]) -> tuple[T, ...]:
    """The ``kind`` instances that ``value``'s fields hold directly, in field order.

    Looks through tuples and plain (untagged) dataclasses such as ``SelectExpression``, but
    not into the ``kind`` instances it finds: those are children, not descendants. Deriving
    children from the fields means a new step or expression cannot forget to list one.
    """
    found: list[T] = []
    for f in dataclasses.fields(value):
        _collect(getattr(value, f.name), kind, found)
    return tuple(found)


def _collect(value: Any, kind: type[T], found: list[T]) -> None:
    if isinstance(value, kind):
        found.append(value)
    elif isinstance(value, tuple):
        for item in value:
            _collect(item, kind, found)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type | Tagged):
        for f in dataclasses.fields(value):
            _collect(getattr(value, f.name), kind, found)
