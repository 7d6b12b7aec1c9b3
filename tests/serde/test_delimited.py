"""The DELIMITED format: Commons CSV quoting, Java parsing per type, delimiters."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal

import pytest

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import SerdeColumn, get_format
from qtt.serde.delimited import format_record, parse_delimiter

DELIMITED = get_format("DELIMITED")
ROW = [
    SerdeColumn("B", t.BOOLEAN),
    SerdeColumn("I", t.INTEGER),
    SerdeColumn("D", t.DOUBLE),
    SerdeColumn("S", t.STRING),
    SerdeColumn("C", t.Decimal(4, 2)),
]


def write(columns: list[SerdeColumn], row: tuple | None, delimiter: str = ",") -> bytes | None:
    return DELIMITED.serializer(columns, is_key=False, properties={"delimiter": delimiter}, features=frozenset())(row)


def read(columns: list[SerdeColumn], data: bytes | None, delimiter: str = ",") -> tuple | None:
    return DELIMITED.deserializer(columns, is_key=False, properties={"delimiter": delimiter}, features=frozenset())(
        data
    )


def test_round_trip() -> None:
    row = (True, 1, 1e10, "a b", Decimal("1.50"))
    assert write(ROW, row) == b"true,1,1.0E10,a b,1.50"
    assert read(ROW, b"true,1,1.0E10,a b,1.50") == row


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        (["-1", "a", "1"], '"-1",a,1'),
        (["a", "-1"], "a,-1"),
        ([" x", " y "], '" x"," y "'),
        (["a", "#b"], 'a,"#b"'),
        (["a,b", 'q"q'], '"a,b","q""q"'),
        ([None, "x", None], ",x,"),
        (["", "x", ""], '"",x,'),
        (["\u00e9t\u00e9", "\u00e9"], '"\u00e9t\u00e9",\u00e9'),
    ],
)
def test_quoting_follows_commons_csv_minimal_mode(fields: list[str | None], text: str) -> None:
    assert format_record(fields, ",") == text


def test_empty_fields_read_as_null_and_quotes_are_removed() -> None:
    assert read(ROW, b',"2",,"",') == (None, 2, None, None, None)


@pytest.mark.parametrize(("text", "expected"), [("true", True), ("TRUE", True), ("yes", False), ("0", False)])
def test_booleans_parse_like_java(text: str, expected: bool) -> None:
    assert read([SerdeColumn("B", t.BOOLEAN)], text.encode()) == (expected,)


def test_the_field_count_error_names_the_topic() -> None:
    reader = DELIMITED.deserializer(ROW, is_key=False, properties={}, features=frozenset(), topic="crates")
    with pytest.raises(SerdeError) as raised:
        reader(b"true,1")
    assert raised.value.message.endswith("topic: crates, expected: 5, got: 2")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("ew", b"{"), ("ew==", b"{"), ("ewA", b"{\x00"), ("ewA=", b"{\x00"), ("3q2+7w", b"\xde\xad\xbe\xef")],
)
def test_bytes_read_base64_with_or_without_padding_as_javas_basic_decoder(text: str, expected: bytes) -> None:
    assert read([SerdeColumn("B", t.BYTES)], text.encode()) == (expected,)


@pytest.mark.parametrize("text", ["e", "ew=", "ewA==", "ew==ew==", "e w==", "ew\t", "=", "ew-_"])
def test_bytes_refuse_what_javas_basic_decoder_refuses(text: str) -> None:
    with pytest.raises(SerdeError, match="Value is not a valid Base64 encoded string"):
        read([SerdeColumn("B", t.BYTES)], text.encode())


def test_dates_are_parsed_as_java_ints() -> None:
    with pytest.raises(SerdeError, match='For input string: "2147483648"'):
        read([SerdeColumn("D", t.DATE)], b"2147483648")


def test_time_types_and_bytes() -> None:
    columns = [SerdeColumn("T", t.TIMESTAMP), SerdeColumn("D", t.DATE), SerdeColumn("B", t.BYTES)]
    row = read(columns, b"100,10,ew==")
    assert row == (dt.datetime(1970, 1, 1, 0, 0, 0, 100_000), dt.date(1970, 1, 11), b"{")
    assert write(columns, row) == b"100,10,ew=="


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"true,1,1.0,a", "Column count mismatch on deserialization. topic: , expected: 5, got: 4"),
        (b"", "No fields in record"),
        (b"true, 1,1.0,a,1", "Error deserializing delimited field I (INTEGER)"),
        (b"true,3000000000,1.0,a,1", "Error deserializing delimited field I"),
        (b"true,1,1.0,a,123", "Numeric field overflow"),
        (b'true,1,1.0,"a"b,1', "invalid char between encapsulated token and delimiter"),
        (b'true,1,1.0,"a,1', "EOF reached before encapsulated token finished"),
    ],
)
def test_undecodable_records_raise_serde_errors(data: bytes, message: str) -> None:
    with pytest.raises(SerdeError) as raised:
        read(ROW, data)
    assert message in raised.value.message


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'"a" ,2', ("a", 2)),
        (b'b,"3"\t', ("b", 3)),
        (b'"c"\xe2\x80\x83,4\r\nnext', ("c", 4)),
        (b'"d""e" ,5', ('d"e', 5)),
    ],
)
def test_white_space_after_a_closing_quote_is_dropped_as_commons_csv_drops_it(data: bytes, expected: tuple) -> None:
    assert read([SerdeColumn("S", t.STRING), SerdeColumn("I", t.INTEGER)], data) == expected


def test_custom_and_named_delimiters() -> None:
    columns = [SerdeColumn("A", t.INTEGER), SerdeColumn("B", t.STRING)]
    assert write(columns, (1, "x|y"), "|") == b'1|"x|y"'
    assert read(columns, b"1\tz", "TAB") == (1, "z")
    assert write(columns, (1, "z"), "SPACE") == b"1 z"


@pytest.mark.parametrize("value", ["", " ", "ab", "<~>"])
def test_invalid_delimiters(value: str) -> None:
    with pytest.raises(ValueError):
        parse_delimiter(value)


def test_unsupported_types_name_the_column() -> None:
    with pytest.raises(StatementError) as raised:
        DELIMITED.validate([SerdeColumn("K", t.Array(t.INTEGER))], is_key=True, properties={})
    assert raised.value.message == "The 'DELIMITED' format does not support type 'ARRAY', column: `K`"


def test_documents_are_the_record_text() -> None:
    assert DELIMITED.from_document("1,a", ROW, is_key=False, properties={}) == b"1,a"
    assert DELIMITED.from_document(10, ROW, is_key=False, properties={}) == b"10"
    assert DELIMITED.to_document(b'"x",1', ROW, is_key=False, properties={}) == '"x",1'


def test_fields_past_pythons_csv_limit_read_as_commons_csv_reads_them() -> None:
    text = "x" * 200_000
    assert read([SerdeColumn("S", t.STRING)], text.encode()) == (text,)


@pytest.mark.parametrize(
    ("data", "type_", "message"),
    [
        (b"1" * 100_000, t.INTEGER, 'For input string: "1111'),
        (b"-1E-999999999", t.Decimal(4, 2), "without rounding. (Requires 1,999999999)"),
        (b"1E+999999999", t.Decimal(4, 2), "must round to an absolute value less than 10^2"),
        (b"!" * 100_000, t.BYTES, "Value is not a valid Base64 encoded string: !!!"),
        (b"9223372036854775807", t.TIMESTAMP, "outside the years 1 to 9999 that qtt (and Spark) can hold"),
    ],
)
def test_rejected_fields_are_quoted_in_bounded_excerpts(data: bytes, type_: t.SqlType, message: str) -> None:
    start = time.perf_counter()
    with pytest.raises(SerdeError) as raised:
        read([SerdeColumn("F", type_)], data)
    assert time.perf_counter() - start < 20.0, "a hang guard: a naive reader takes hours on these"
    assert message in raised.value.message
    assert len(raised.value.message) < 500
