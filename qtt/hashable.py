"""Plan objects, records and the like as keys of a memo."""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping
from typing import Any


def hashable(value: Any) -> Hashable:
    """``value`` (dataclasses, mappings, sequences, and hashable leaves) as nested tuples: a
    memo key for values that hold a mapping."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (type(value).__qualname__, *(hashable(getattr(value, f.name)) for f in fields))
    if isinstance(value, Mapping):
        return ("mapping", *sorted((k, hashable(v)) for k, v in value.items()))
    if isinstance(value, list | tuple | frozenset | set):
        items = [hashable(v) for v in value]
        return (type(value).__name__, *(sorted(items, key=repr) if isinstance(value, set | frozenset) else items))
    return value
