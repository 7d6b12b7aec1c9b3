"""Every planned function has a Spark implementation, and every implementation a signature."""

from __future__ import annotations

from collections.abc import Callable

from qtt.plan.functions.scalar_signatures import FUNCTIONS
from qtt.runtime.build import builtins


def test_signatures_and_implementations_list_the_same_functions() -> None:
    planned = set(FUNCTIONS)
    implemented = set(builtins.implemented())
    assert sorted(planned - implemented) == [], "planned but not implemented"
    assert sorted(implemented - planned) == [], "implemented but never planned"


def test_runtime_modules_import_without_a_spark_session(modules_loaded_by: Callable[..., set[str]]) -> None:
    # The pytest plugin collects without a JVM; module-level Columns would need one, so a
    # fresh interpreter (no session, nothing imported before) fails to import them.
    loaded = modules_loaded_by("qtt.runtime.build.compiler")
    assert {"qtt.runtime.build.builtins.casts", "qtt.runtime.build.builtins.strings"} <= loaded


def test_no_function_is_both_renamed_and_implemented() -> None:
    assert not set(builtins.RENAMES) & set(builtins.IMPLEMENTATIONS)
