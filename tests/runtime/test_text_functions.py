"""The pure Python halves of the text, JSON and URL functions: Jackson, java.net.URI, BytesUtils."""

from __future__ import annotations

from decimal import Decimal

import pytest

from qtt.plan.scalar_signatures import FUNCTIONS
from qtt.plan.text_signatures import FUNCTIONS as TEXT_FUNCTIONS
from qtt.runtime.builtins import implemented, java_bytes, java_json, java_uri


def test_every_text_function_is_in_the_table_and_implemented() -> None:
    names = {f.name for f in TEXT_FUNCTIONS}
    assert names <= set(FUNCTIONS)
    assert names <= implemented()


# ---------------------------------------------------------------------------- Jackson


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("1", True),
        ('"a"', True),
        ("null", True),
        ("[1, 2]", True),
        ("{}", True),
        ("", False),
        ("  ", False),
        ("abc", False),
        ("NaN", False),
        ("01", False),
        ("{'a': 1}", False),
        (None, False),
    ],
)
def test_is_json_string(text: str | None, valid: bool) -> None:
    assert java_json.is_json_string(text) is valid


def test_numbers_stay_exact_and_plain() -> None:
    assert java_json.parse("2.50") == Decimal("2.50")
    assert java_json.write(java_json.parse("[1.0e2, 2.50, -0.0010, 12345678901234567890]")) == (
        "[100,2.50,-0.0010,12345678901234567890]"
    )


def test_strings_are_escaped_as_jackson_does() -> None:
    assert java_json.quote('a"b\\c\n\u0001é/') == '"a\\"b\\\\c\\n\\u0001é/"'
    assert java_json.quote("\u001f") == '"\\u001F"'


def test_keys_length_and_records() -> None:
    doc = '{"b": {"x": [1, "y"]}, "a": "text", "b": 3}'
    assert java_json.json_keys(doc) == ["b", "a"]  # a repeated key keeps its first place
    assert java_json.json_records(doc) == {"b": "3", "a": "text"}
    assert java_json.json_array_length("[1, [2, 3], {}]") == 3
    assert java_json.json_array_length("{}") is None
    assert java_json.json_keys("[]") is None
    assert java_json.json_records("not json") is None


@pytest.mark.parametrize(
    ("texts", "result"),
    [
        (['{"a": 1}', '{"a": 2, "b": 3}'], '{"a":2,"b":3}'),
        (["[1]", "2", '{"c": null}'], '[1,2,{"c":null}]'),
        (["null", "null"], "[null,null]"),
        (["[]", "x"], None),
        ([None, "[]"], None),
    ],
)
def test_json_concat(texts: list[str | None], result: str | None) -> None:
    assert java_json.json_concat(*texts) == result


def test_json_array_contains_compares_by_token_type() -> None:
    doc = '[1, 2.5, "s", true, null, [9]]'
    assert java_json.json_array_contains(doc, 1, "BIGINT")
    assert not java_json.json_array_contains(doc, 1.0, "DOUBLE")
    assert java_json.json_array_contains(doc, 2.5, "DOUBLE")
    assert java_json.json_array_contains(doc, "s", "STRING")
    assert java_json.json_array_contains(doc, True, "BOOLEAN")
    assert java_json.json_array_contains(doc, None, "STRING")
    assert not java_json.json_array_contains(doc, 9, "INTEGER")
    assert not java_json.json_array_contains('{"a": 1}', 1, "INTEGER")
    # Elements are read one by one: a match before broken text still counts.
    assert java_json.json_array_contains("[1, oops", 1, "INTEGER")
    assert not java_json.json_array_contains("[oops, 1]", 1, "INTEGER")


# ---------------------------------------------------------------------------- java.net.URI


def test_uri_components() -> None:
    uri = java_uri.parse("https://u:p@host.example.org:8443/a%20b/c?x=1&y=%26#frag%20x")
    assert uri == java_uri.Uri(
        scheme="https", host="host.example.org", port=8443, path="/a b/c", query="x=1&y=&", fragment="frag x"
    )


@pytest.mark.parametrize(
    ("text", "host", "path"),
    [
        ("http://www.test.com?query#fragment", "www.test.com", ""),
        ("http://under_score.example/p", None, "/p"),  # registry-based authority: no host
        ("http://10.0.0.1:80/", "10.0.0.1", "/"),
        ("http://[::1]:80/", "[::1]", "/"),
        ("www.example.com", None, "www.example.com"),
        ("mailto:someone@example.com", None, None),
    ],
)
def test_uri_host_and_path(text: str, host: str | None, path: str | None) -> None:
    uri = java_uri.parse(text)
    assert (uri.host, uri.path) == (host, path)


@pytest.mark.parametrize("text", ["http://a b/", "http://x/%zz", "1http://x/", "http://", "mailto:"])
def test_invalid_uris_are_null(text: str) -> None:
    with pytest.raises(java_uri.URISyntaxError):
        java_uri.parse(text)
    assert java_uri.component(text, "host") is None


def test_port_and_parameters() -> None:
    assert java_uri.component("http://h:8080/", "port") == 8080
    assert java_uri.component("http://h/", "port") is None
    url = "http://h/?one=a&two=b%20c&three&one=z"
    assert java_uri.query_parameter(url, "one") == "a"
    assert java_uri.query_parameter(url, "two") == "b c"
    assert java_uri.query_parameter(url, "three") == ""
    assert java_uri.query_parameter(url, "four") is None


# ---------------------------------------------------------------------------- BytesUtils


def test_split_bytes() -> None:
    assert java_bytes.split_bytes(b"a,b,,c", b",") == [b"a", b"b", b"", b"c"]
    assert java_bytes.split_bytes(b"abc", b"") == [b"a", b"b", b"c"]
    assert java_bytes.split_bytes(b"", b",") == [b""]
    assert java_bytes.split_bytes(None, b",") is None


def test_split_bytes_keeps_ksqldb_quirk() -> None:
    # Past the delimiter's length only its first byte is compared (BytesUtils.arrayEquals).
    assert java_bytes.split_bytes(b"xyzab", b"ac") == [b"xyz", b""]
