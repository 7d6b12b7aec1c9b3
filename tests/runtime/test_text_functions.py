"""The text, JSON and URL functions: Jackson and BytesUtils in Python, java.net.URI in Spark."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, cast

import pytest

from qtt.plan.functions.scalar_signatures import FUNCTIONS
from qtt.plan.functions.text_signatures import FUNCTIONS as TEXT_FUNCTIONS
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins import implemented
from qtt.runtime.build.builtins.java import java_bytes, java_json, java_regex

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


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
        ("12kg", False),  # Jackson: a top-level number ends at whitespace
        ("4.", False),
        ("7 apples", True),  # what follows the first value is ignored
        ("nullable", False),  # a literal must not run into an identifier character
        ("false!", True),
        ("null$", True),
        ("[3]kg", True),
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


def test_json_concat_of_one_value_is_not_wrapped() -> None:
    assert java_json.json_concat("7") == "7"
    assert java_json.json_concat('{"a": [1.50]}') == '{"a":[1.50]}'


def test_items_and_records_write_decimals_as_json_node_to_string() -> None:
    assert java_json.json_items("[4.2e2, 0.5, -0.0]") == ["4.2E+2", "0.5", "0.0"]
    assert java_json.json_records('{"a": 1E-7}') == {"a": "1E-7"}


@pytest.mark.parametrize(
    ("path", "result"),
    [
        ("$", '{"a":null,"b":[10,{"c":"x"}],"d e":2.50,"f_g":true}'),
        ("$.a", "null"),
        ("$.b.1.c", "x"),
        ("$.b[0]", "10"),
        ('$["d e"]', "2.50"),
        ("$.f_g", "true"),
        ("$.b[*]", None),
        ("$. a", None),
        ("$.b.x", None),
        ("$.b.-1", None),
        ("$.missing", None),
        ("a", None),
    ],
)
def test_extract_json_field_follows_ksqldb_path_rules(path: str, result: str | None) -> None:
    doc = '{"a": null, "b": [10, {"c": "x"}], "d e": 2.50, "f_g": true}'
    assert java_json.extract_json_field(doc, path) == result


def test_json_path_tokens() -> None:
    assert java_json.json_path_tokens('$.logs[0].cloud["a\\"b"]') == ["logs", "0", "cloud", 'a"b']
    assert java_json.json_path_tokens("$[") is None
    assert java_json.json_path_tokens('$["a\\x"]') is None


@pytest.mark.parametrize(
    ("pattern", "group", "probe"),
    [
        ("(a)(b)?", 2, r"(?>[\s\S]*?(?:(a)(()(?:b))?))\3[\s\S]*"),
        ("(?<w>x|)y", 1, r"(?>[\s\S]*?(?:(?<w>()(?:x|))y))\2[\s\S]*"),
        ("[(](a)", 1, r"(?>[\s\S]*?(?:[(](()(?:a))))\2[\s\S]*"),
        ("(a)", 0, None),
        ("(a)", 2, None),
        (r"(a)\1", 1, None),
        (r"\Q(\E(a)", 1, None),
        ("(?x)(a)", 1, None),
        ("[[a]](b)", 1, None),
    ],
)
def test_participation_pattern(pattern: str, group: int, probe: str | None) -> None:
    assert java_regex.participation_pattern(pattern, group) == probe


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
    assert java_json.json_array_contains(None, 1, "INTEGER") is False  # as persisted plans recorded it
    # Elements are read one by one: a match before broken text still counts.
    assert java_json.json_array_contains("[1, oops", 1, "INTEGER")
    assert not java_json.json_array_contains("[oops, 1]", 1, "INTEGER")


def test_json_array_contains_stops_at_an_integer_out_of_the_value_range() -> None:
    # readValueAs(Integer/Long) throws InputCoercionException, which ends the scan with false.
    assert not java_json.json_array_contains("[3000000000, 4]", 4, "INTEGER")
    assert java_json.json_array_contains("[3000000000, 4]", 4, "BIGINT")
    assert java_json.json_array_contains("[4, 3000000000]", 4, "INTEGER")
    assert not java_json.json_array_contains("[99999999999999999999, 4]", 4, "BIGINT")
    assert java_json.json_array_contains("[3000000000, null]", None, "INTEGER")


# ---------------------------------------------------------------------------- java.net.URI

URL_PARTS = ("PROTOCOL", "HOST", "PORT", "PATH", "QUERY", "FRAGMENT")

# ksqlDB reads java.net.URI's getters; the expected values are what the JVM's URI returns.
URLS = {
    "https://u:p@h.example.org:8443/a%20b/c?x=1&y=%26#frag%20x": (
        "https",
        "h.example.org",
        8443,
        "/a b/c",
        "x=1&y=&",
        "frag x",
    ),
    "http://www.test.com?query#fragment": ("http", "www.test.com", None, "", "query", "fragment"),
    "http://h/p+q?a=b+c%2B": ("http", "h", None, "/p+q", "a=b+c+", None),  # '+' is no space
    "http://h/?a=[%20]%20": ("http", "h", None, "/", "a=[ ] ", None),
    "http://u@h:0080/x": ("http", "h", 80, "/x", None, None),
    "http://%41/": ("http", None, None, "/", None, None),
    "http://h/%C3%28": ("http", "h", None, "/\ufffd(", None, None),  # malformed UTF-8
    "http://under_score.example:80/p": ("http", None, None, "/p", None, None),  # registry-based
    "http://h:2147483648/x": ("http", None, None, "/x", None, None),  # port overflows: registry
    "http://u:12@h/x": ("http", "h", None, "/x", None, None),
    "http://h:/x": ("http", "h", None, "/x", None, None),
    "http://[::1]:80/x": ("http", "[::1]", 80, "/x", None, None),
    "http://[::1]/x": ("http", "[::1]", None, "/x", None, None),
    "//h:9/x": (None, "h", 9, "/x", None, None),
    "www.example.com": (None, None, None, "www.example.com", None, None),
    "mailto:someone@example.com#a%20b": ("mailto", None, None, None, None, "a b"),
    "http://a b/": (None, None, None, None, None, None),
    "http://x/%zz": (None, None, None, None, None, None),
    "1http://x/": (None, None, None, None, None, None),
    "mailto:": (None, None, None, None, None, None),
}

PARAMS = [
    ("http://h/?one=a&two=b%20c&three&one=z", "one", "a"),
    ("http://h/?one=a&two=b%20c&three&one=z", "two", "b c"),
    ("http://h/?one=a&two=b%20c&three&one=z", "three", ""),
    ("http://h/?one=a&two=b%20c&three&one=z", "four", None),
    ("http://h/?k=a=b", "k", "a=b"),
    ("http://h/?k=a%26j=b", "j", "b"),  # the query is decoded before it is split
    ("http://h/?k.=1", "k", None),  # the name is text, not a pattern
    ("http://h/?k=1", None, None),
    ("http://a b/?k=1", "k", None),
]


@pytest.mark.spark
def test_url_extractors_follow_java_net_uri(spark: SparkSession) -> None:
    from pyspark.sql import functions as F

    from qtt.runtime.build.builtins.registry import IMPLEMENTATIONS

    call = cast(e.Call, None)  # the extractors do not read their call
    urls = spark.createDataFrame([(url,) for url in URLS], "url string")
    columns = [IMPLEMENTATIONS[f"URL_EXTRACT_{part}"](call, [F.col("url")]).alias(part) for part in URL_PARTS]
    got = {row["url"]: tuple(row[part] for part in URL_PARTS) for row in urls.select("url", *columns).collect()}
    assert got == URLS


@pytest.mark.spark
def test_url_extract_parameter(spark: SparkSession) -> None:
    from pyspark.sql import functions as F

    from qtt.runtime.build.builtins.registry import IMPLEMENTATIONS

    extract = IMPLEMENTATIONS["URL_EXTRACT_PARAMETER"]
    rows = spark.createDataFrame(
        [(i, url, key) for i, (url, key, _) in enumerate(PARAMS)], "i int, url string, key string"
    )
    got = rows.select("i", extract(cast(e.Call, None), [F.col("url"), F.col("key")]).alias("v")).orderBy("i").collect()
    assert [row["v"] for row in got] == [value for _, _, value in PARAMS]


# ---------------------------------------------------------------------------- BytesUtils


def test_split_bytes() -> None:
    assert java_bytes.split_bytes(b"a,b,,c", b",") == [b"a", b"b", b"", b"c"]
    assert java_bytes.split_bytes(b"abc", b"") == [b"a", b"b", b"c"]
    assert java_bytes.split_bytes(b"", b",") == [b""]
    assert java_bytes.split_bytes(None, b",") is None


def test_split_bytes_keeps_ksqldb_quirk() -> None:
    # Past the delimiter's length only its first byte is compared (BytesUtils.arrayEquals).
    assert java_bytes.split_bytes(b"xyzab", b"ac") == [b"xyz", b""]


# ---------------------------------------------------------------------------- regular expressions


@pytest.mark.spark
def test_a_literal_pattern_is_checked_once_whatever_session_the_thread_has(spark: SparkSession) -> None:
    """A literal pattern is compiled while the plan is built, so the query checks nothing per row.

    It once asked the thread's active session for the JVM: a thread without one (which thread
    has one depends on what ran before in the process) got the per-row check instead, and the
    historical plans of functions_text showed topology drift only in full test runs.
    """
    import threading

    from pyspark.sql import functions as F

    from qtt import sqltypes as t
    from qtt.runtime.build.builtins.registry import IMPLEMENTATIONS

    pattern = e.Literal(value="[0-9]+", sql_type=t.STRING)
    call = e.Call(name="REGEXP_EXTRACT", args=(pattern, e.ColumnRef(name="T", sql_type=t.STRING)), sql_type=t.STRING)
    built: list[str] = []

    def build() -> None:
        spark._jvm.org.apache.spark.sql.SparkSession.clearActiveSession()  # type: ignore[union-attr]
        built.append(str(IMPLEMENTATIONS["REGEXP_EXTRACT"](call, [F.lit("[0-9]+"), F.col("t")])))

    thread = threading.Thread(target=build)
    thread.start()
    thread.join()
    assert built and "RegExUtils" not in built[0], built
    assert built[0] == str(IMPLEMENTATIONS["REGEXP_EXTRACT"](call, [F.lit("[0-9]+"), F.col("t")]))
