"""Package entry points resolve to their modules' objects, and importing a package stays cheap."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pytest

PACKAGES = ["qtt.plan", "qtt.runtime", "qtt.harness"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_entry_point_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in dir(module):
        assert getattr(module, name) is not None, f"{package}.{name}"


def test_an_unknown_name_is_an_attribute_error() -> None:
    import qtt.plan

    with pytest.raises(AttributeError, match=r"module 'qtt\.plan' has no attribute 'plan_statement'"):
        _ = qtt.plan.plan_statement


@pytest.mark.parametrize("package", [*PACKAGES, "qtt.plan.ir.codec"])
def test_importing_a_package_imports_neither_pyspark_nor_the_grammar(
    package: str, modules_loaded_by: Callable[..., set[str]]
) -> None:
    loaded = modules_loaded_by(package)
    heavy = sorted(m for m in loaded if m.split(".")[0] == "pyspark" or m.split(".")[:2] == ["qtt", "sql"])
    assert not heavy, f"importing {package} loads {heavy[:5]}"
