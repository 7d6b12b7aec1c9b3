"""The metastore's suggestions for unknown source names."""

from __future__ import annotations

from qtt.plan.ddl.metastore import unknown_source_hint


def test_a_close_source_name_is_suggested() -> None:
    assert unknown_source_hint("PAGEVIEW", ["PAGEVIEWS", "USERS"]) == "Did you mean 'PAGEVIEWS'?"


def test_no_hint_when_nothing_is_close() -> None:
    assert unknown_source_hint("ORDERS", ["PAGEVIEWS", "USERS"]) is None
