"""Typed values: ksqlDB's JSON coercion rules and Jackson-like JSON text."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from qtt import sqltypes as t
from qtt.errors import SerdeError
from qtt.serde import values


@pytest.mark.parametrize(
    ("value", "type_", "expected"),
    [
        (True, t.BOOLEAN, True),
        (10, t.INTEGER, 10),
        (Decimal("1.9"), t.INTEGER, 1),
        (Decimal("-1.9"), t.BIGINT, -1),
        ("42", t.INTEGER, 42),
        (2**31, t.INTEGER, -(2**31)),
        (2**32 + 5, t.INTEGER, 5),
        (Decimal("1.5"), t.DOUBLE, 1.5),
        ("1e2", t.DOUBLE, 100.0),
        (Decimal("99.99"), t.Decimal(4, 2), Decimal("99.99")),
        ("1.5", t.Decimal(4, 2), Decimal("1.50")),
        (7, t.Decimal(4, 2), Decimal("7.00")),
        (1, t.STRING, "1"),
        (Decimal("1.50"), t.STRING, "1.50"),
        (True, t.STRING, "true"),
        ([1, "a", None], t.STRING, "[1, a, null]"),
        ({"b": 1, "a": [2]}, t.STRING, '{"b":1,"a":[2]}'),
        ("AQI=", t.BYTES, b"\x01\x02"),
        (" AQI=\n", t.BYTES, b"\x01\x02"),
        ("AQ==AQI=", t.BYTES, b"\x01\x01\x02"),
        ("\tAQID AQ==", t.BYTES, b"\x01\x02\x03\x01"),
        (10, t.TIMESTAMP, dt.datetime(1970, 1, 1, 0, 0, 0, 10_000)),
        ("10", t.TIMESTAMP, dt.datetime(1970, 1, 1, 0, 0, 0, 10_000)),
        (2, t.DATE, dt.date(1970, 1, 3)),
        (1000, t.TIME, dt.time(0, 0, 1)),
        ([1, None], t.Array(t.STRING), ["1", None]),
        ({"k": "2"}, t.Map(t.STRING, t.INTEGER), {"k": 2}),
    ],
)
def test_from_json_coerces_like_ksqldb(value: Any, type_: t.SqlType, expected: Any) -> None:
    assert values.from_json(value, type_) == expected


@pytest.mark.parametrize(
    ("value", "type_", "message"),
    [
        ("true", t.BOOLEAN, "Can't convert type. sourceType: TextNode, requiredType: BOOLEAN"),
        (1, t.BOOLEAN, "sourceType: IntNode"),
        (True, t.INTEGER, "sourceType: BooleanNode, requiredType: INTEGER"),
        ("1.5", t.INTEGER, "Can't coerce string to type. targetType: INTEGER"),
        ("3000000000", t.INTEGER, "Can't coerce string to type. targetType: INTEGER"),
        ("x", t.DOUBLE, "Can't coerce string to type. targetType: DOUBLE"),
        ([1], t.INTEGER, "sourceType: ArrayNode"),
        ({"a": 1}, t.Array(t.INTEGER), "sourceType: ObjectNode, requiredType: ARRAY<INT>"),
        (Decimal("100.5"), t.Decimal(4, 2), "Numeric field overflow"),
        (
            Decimal("1.555"),
            t.Decimal(4, 2),
            "Cannot fit decimal '1.555' into DECIMAL(4, 2) without rounding. (Requires 4,3)",
        ),
        ("1 ", t.Decimal(4, 2), "is not a valid decimal number"),
        (
            86_400_001,
            t.TIME,
            "Time values must use number of milliseconds greater than 0 and less than 86400000.",
        ),
        (86_400_000, t.TIME, "a TIME of 24:00, which qtt (and Spark) cannot hold; ksqlDB accepts it"),
        ("%%", t.BYTES, "Value is not a valid Base64 encoded string"),
        ("AQI", t.BYTES, "Value is not a valid Base64 encoded string: AQI"),
        ("AQ I=", t.BYTES, "Value is not a valid Base64 encoded string"),
        ("A===", t.BYTES, "Value is not a valid Base64 encoded string"),
    ],
)
def test_from_json_errors(value: Any, type_: t.SqlType, message: str) -> None:
    with pytest.raises(SerdeError) as raised:
        values.from_json(value, type_)
    assert message in raised.value.message


@pytest.mark.parametrize(
    ("value", "type_", "message"),
    [
        (Decimal("NaN"), t.INTEGER, "Can't convert type. sourceType: DecimalNode, requiredType: INTEGER, path: $.F"),
        (float("inf"), t.BIGINT, "Can't convert type. sourceType: DoubleNode, requiredType: BIGINT, path: $.F"),
        ("9223372036854775808", t.BIGINT, "Can't coerce string to type. targetType: BIGINT, path: $.F"),
        (True, t.DOUBLE, "Can't convert type. sourceType: BooleanNode, requiredType: DOUBLE, path: $.F"),
        ([1], t.DOUBLE, "Can't convert type. sourceType: ArrayNode, requiredType: DOUBLE, path: $.F"),
        ("x", t.TIMESTAMP, "Can't coerce string to type. targetType: TIMESTAMP, path: $.F"),
        (True, t.DATE, "Can't convert type. sourceType: BooleanNode, requiredType: DATE, path: $.F"),
        ({"a": 1}, t.TIME, "Can't convert type. sourceType: ObjectNode, requiredType: TIME, path: $.F"),
    ],
)
def test_number_errors_name_the_path(value: Any, type_: t.SqlType, message: str) -> None:
    with pytest.raises(SerdeError) as raised:
        values.from_json(value, type_, "$.F")
    assert raised.value.message == message


def test_struct_fields_match_exact_case_first_then_upper_case() -> None:
    type_ = t.Struct((t.Field("A", t.INTEGER), t.Field("b", t.INTEGER)))
    assert values.from_json({"a": 1, "b": 2}, type_) == (1, 2)
    assert values.from_json({"A": 1, "B": 2}, type_) == (1, None)


def test_dumps_writes_doubles_as_java_and_quotes_non_finite() -> None:
    text = values.dumps({"a": 1e10, "b": [0.5, float("nan")], "c": Decimal("1.50")})
    assert text == '{"a":1.0E10,"b":[0.5,"NaN"],"c":1.50}'
    assert values.loads(text)["a"] == Decimal("1.0E10")


def test_loads_strict_rejects_non_numeric_tokens() -> None:
    with pytest.raises(ValueError):
        values.loads_strict('{"a": NaN}')


def test_an_exact_case_field_that_is_null_wins_over_other_spellings() -> None:
    type_ = t.Struct((t.Field("A", t.INTEGER),))
    assert values.from_json({"A": None, "a": 1}, type_) == (None,)
    assert values.from_json({"a": 1, "A": None}, type_) == (None,)
    assert values.from_json({"a": 1}, type_) == (1,)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b'{"a": 1} {"a": 2}', {"a": 1}),
        (b'"x" junk', "x"),
        (b"[1]]", [1]),
        (b"7 8", 7),
        (b"true,", True),
        (b"null}", None),
        (b'{"a": 1}\xff', {"a": 1}),
    ],
)
def test_loads_strict_reads_the_first_value_and_ignores_what_follows(text: bytes, expected: object) -> None:
    assert values.loads_strict(text) == expected


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (b"7x", ValueError),
        (b"1.5,", ValueError),
        (b"truex", ValueError),
        (b"null1", ValueError),
        (b'"\xff" 1', UnicodeDecodeError),
        (b"", ValueError),
    ],
)
def test_loads_strict_still_checks_what_ends_a_number_or_a_word(text: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        values.loads_strict(text)


def test_collections_are_named_by_their_connect_schema_in_conversion_errors() -> None:
    struct = t.Struct((t.Field("A", t.INTEGER), t.Field("b c", t.Map(t.STRING, t.Array(t.Decimal(4, 2))))))
    assert values.connect_type_text(struct) == "STRUCT<A INT, b c MAP<VARCHAR, ARRAY<DECIMAL(4, 2)>>>"
    assert values.connect_type_text(t.Struct(())) == "STRUCT< >"
    assert values.required_type_text(t.INTEGER) == "INTEGER"
    with pytest.raises(SerdeError, match=r"requiredType: ARRAY<VARCHAR>, path: \$.X"):
        values.from_json(True, t.Array(t.STRING), "$.X")
