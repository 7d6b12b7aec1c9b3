"""run_groups with nothing to run (no Spark: it must not start anything)."""

from __future__ import annotations

from typing import Any

from qtt.runtime.execute.executor import run_groups


def test_no_groups_yield_nothing_and_build_nothing() -> None:
    session: Any = None  # never touched without a group
    assert list(run_groups(session, [], [])) == []
