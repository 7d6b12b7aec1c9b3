"""Bounded excerpts of rejected input."""

from __future__ import annotations

import pytest

from qtt.serde.excerpt import LIMIT, excerpt, excerpt_runs, json_value


@pytest.mark.parametrize("text", ["", "short", "x" * LIMIT])
def test_short_texts_are_quoted_whole(text: str) -> None:
    assert excerpt(text) == text


def test_long_texts_keep_their_ends() -> None:
    text = "a" * 50 + "b" * 1000 + "c" * 50
    assert excerpt(text) == "a" * 50 + "...[1000 characters left out]..." + "c" * 50


def test_runs_spell_text_too_long_to_build() -> None:
    shown = excerpt_runs([("-0.", 1), ("0", 10**12), ("1", 1)], limit=10)
    assert shown == "-0.00...[999999999994 characters left out]...00001"


def test_runs_that_fit_are_joined() -> None:
    assert excerpt_runs([("ab", 2), ("", 5), ("c", 0), ("d", 1)]) == "ababd"


def test_a_json_value_is_quoted_in_bounded_text_and_a_container_by_its_kind() -> None:
    assert json_value("x" * 1000).startswith("'xxx") and len(json_value("x" * 1000)) < 200
    assert json_value(7) == "7"
    assert json_value([[[]]]) == "an array of 1 element(s)"
    assert json_value({"a": 1, "b": 2}) == "an object of 2 member(s)"
