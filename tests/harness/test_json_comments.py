from __future__ import annotations

import pytest

from qtt.errors import CaseFileError
from qtt.harness.cases.json_comments import UnterminatedCommentError, blank_comments
from qtt.harness.cases.loader import load_text

STATEMENT = "CREATE STREAM S (x INT) WITH (kafka_topic='t', value_format='JSON');"


def test_comments_become_blanks_of_the_same_length() -> None:
    text = '{ // a\n "a": /* b\n c */ 1 }'
    blanked = blank_comments(text)
    assert len(blanked) == len(text)
    assert blanked.count("\n") == text.count("\n")
    assert blanked == '{     \n "a":     \n      1 }'


def test_slashes_inside_strings_are_kept() -> None:
    text = '{"url": "http://x/*y*/", "q": "a\\"//b"}'
    assert blank_comments(text) == text


def test_a_lone_slash_is_left_for_the_json_reader() -> None:
    assert blank_comments('{"a": 1 / 2}') == '{"a": 1 / 2}'


def test_an_unterminated_block_comment_says_where_it_starts() -> None:
    with pytest.raises(UnterminatedCommentError) as info:
        blank_comments('{"a": 1} /* never')
    assert info.value.offset == 9
    with pytest.raises(CaseFileError, match="unterminated") as error:
        load_text('{"tests": []\n  /* never', file="f.json")
    assert (error.value.line, error.value.column) == (2, 3)


def test_a_commented_case_file_loads_and_errors_keep_their_lines() -> None:
    text = (
        "// header comment\n"
        '{ "tests": [ /* first\n'
        "   case */ {\n"
        f'  "name": "c // in a string", "statements": ["{STATEMENT}"],\n'
        '  "outputs": [], // trailing\n'
        '  "ouputs": []\n'
        "}]}\n"
    )
    loaded = load_text(text, file="f.json")
    assert loaded.variants == ()
    (error,) = loaded.errors
    assert error.case == "c // in a string"
    assert error.line == 6
    assert "unknown field" in str(error)


def test_a_commented_case_loads() -> None:
    case = f'"name": "ok", /* x */ "statements": ["{STATEMENT}"], "outputs": [{{"topic": "t", "value": 1}}]'
    text = f'{{"tests": [{{{case}}}]}} // end'
    loaded = load_text(text, file="f.json")
    assert [v.case for v in loaded.variants] == ["ok"]
    assert loaded.errors == ()
