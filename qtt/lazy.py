"""Package entry points that import their module on first use.

A package's ``__init__`` names its entry points, so the pipeline reads from the top, but
importing the package must stay cheap and side-effect free: the plan codec must not pull in
the SQL grammar, and the pytest plugin must collect thousands of items without importing
pyspark. So each name is resolved, and its module imported, only when it is first used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each name in ``exports`` from its module."""

    def getattr_(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        return getattr(importlib.import_module(module), name)

    def dir_() -> list[str]:
        return sorted(exports)

    return getattr_, dir_
