"""Memo keys: equal exactly when the values are, however deep they nest."""

from __future__ import annotations

import dataclasses
import math
from types import MappingProxyType

from qtt.hashable import hashable
from qtt.plan.ir.steps import FormatInfo


def test_equal_values_give_equal_keys_and_unequal_ones_do_not() -> None:
    json = FormatInfo(format="JSON", properties=MappingProxyType({"a": "1"}))
    assert hashable(json) == hashable(FormatInfo(format="JSON", properties=MappingProxyType({"a": "1"})))
    assert hashable(json) != hashable(FormatInfo(format="JSON", properties=MappingProxyType({"a": "2"})))
    assert hashable(json) != hashable(FormatInfo(format="AVRO"))
    assert hash(hashable({"k": [1, {2, 3}]})) == hash(hashable({"k": [1, {3, 2}]}))


def test_keys_tell_apart_what_python_equality_mixes_up() -> None:
    assert hashable(1) != hashable(True)
    assert hashable(1) != hashable(1.0)
    assert hashable(-0.0) != hashable(0.0)  # a literal -0.0 divides to -Infinity
    assert hashable(math.nan) == hashable(math.nan)
    assert hashable([1, 2]) != hashable((1, 2))
    assert hashable([[1], 2]) != hashable([[1, 2]])  # each node says how many children it has
    assert hashable({"a": 1, "b": 2}) == hashable({"b": 2, "a": 1})


@dataclasses.dataclass(frozen=True)
class _Call:
    name: str
    argument: object


def test_a_deeply_nested_value_makes_a_key_without_recursion() -> None:
    def nested(depth: int, leaf: object) -> object:
        value: object = leaf
        for _ in range(depth):
            value = _Call("ABS", [value])
        return value

    deep = hashable(nested(20_000, 1))
    assert deep == hashable(nested(20_000, 1))
    assert deep != hashable(nested(20_000, 2))
    assert len({deep: "memo"}) == 1
