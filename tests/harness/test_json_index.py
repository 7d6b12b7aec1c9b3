"""The JSON path index: lines for errors, spans for ``qtt run --update``."""

from __future__ import annotations

import pytest

from qtt.harness.cases.json_comments import blank_comments
from qtt.harness.cases.json_index import json_index, json_lines

TEXT = '{\n  "a": [1,\n    {"b": "x\\"y"}],\n  "c": null, "d": -1.5e3\n}\n'


def test_every_value_has_its_line_and_span() -> None:
    index = json_index(TEXT)
    assert index.lines == json_lines(TEXT)
    assert index.lines["$.a[1].b"] == 3
    for path, text in {
        "$": TEXT.rstrip("\n"),
        "$.a": '[1,\n    {"b": "x\\"y"}]',
        "$.a[0]": "1",
        "$.a[1]": '{"b": "x\\"y"}',
        "$.a[1].b": '"x\\"y"',
        "$.c": "null",
        "$.d": "-1.5e3",
    }.items():
        start, end = index.spans[path]
        assert TEXT[start:end] == text, path


def test_spans_of_a_text_with_blanked_comments_are_the_original_texts_offsets() -> None:
    text = '{"tests": [ // the cases\n  {"outputs": [ /* none yet */ ]}\n]}'
    start, end = json_index(blank_comments(text)).spans["$.tests[0].outputs"]
    assert text[start:end] == "[ /* none yet */ ]"


@pytest.mark.parametrize("text", ['{"a": [1, 2}', '{"a": "open'])
def test_a_text_that_is_not_json_raises_index_or_value_errors(text: str) -> None:
    with pytest.raises((IndexError, ValueError)):
        json_index(text)
