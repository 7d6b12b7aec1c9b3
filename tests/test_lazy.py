"""Package entry points resolve to their modules' objects, and importing a package stays cheap."""

from __future__ import annotations

import importlib
import subprocess
import sys

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


def test_importing_the_packages_imports_neither_pyspark_nor_the_grammar() -> None:
    code = (
        "import sys, qtt.plan, qtt.runtime, qtt.harness, qtt.plan.codec\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] == 'pyspark' or m.split('.')[:2] == ['qtt', 'sql'])\n"
        "sys.exit(', '.join(heavy) or None)\n"
    )
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
