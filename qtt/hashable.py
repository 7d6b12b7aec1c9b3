"""Plan objects, records and the like as keys of a memo.

A key is a flat tuple, built with a loop: plans nest as deep as their expressions (a
generated query nests hundreds of calls), and a nested tuple would be hashed and compared
recursively, past Python's recursion limit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping
from typing import Any


def hashable(value: Any) -> tuple[Hashable, ...]:
    """``value`` (dataclasses, mappings, sequences, sets, and hashable leaves) as a flat tuple:
    each node its kind and size, in pre-order. Two values get equal keys exactly when they are
    equal, type for type (``1`` is not ``True``, ``-0.0`` is not ``0.0``, a NaN equals itself)."""
    flat: list[Hashable] = []
    pending: list[Any] = [value]
    while pending:
        node = pending.pop()
        if dataclasses.is_dataclass(node) and not isinstance(node, type):
            fields = dataclasses.fields(node)
            flat.append(("dataclass", type(node).__qualname__, len(fields)))
            pending.extend(getattr(node, f.name) for f in reversed(fields))
        elif isinstance(node, Mapping):
            entries = sorted(node.items(), key=lambda entry: repr(entry[0]))
            flat.append(("mapping", len(entries)))
            for key, item in reversed(entries):
                pending.extend((item, key))
        elif isinstance(node, list | tuple):
            flat.append((type(node).__name__, len(node)))
            pending.extend(reversed(node))
        elif isinstance(node, set | frozenset):
            flat.append((type(node).__name__, tuple(sorted((hashable(item) for item in node), key=repr))))
        elif isinstance(node, float):
            flat.append(("float", repr(node)))
        else:
            flat.append((type(node).__qualname__, node))
    return tuple(flat)
