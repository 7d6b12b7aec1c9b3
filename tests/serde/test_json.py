"""The JSON format: wrapping, coercion on read, Jackson-like output, and its errors."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal

import pytest

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import SerdeColumn, get_format
from qtt.serde.formats import UNWRAP_SINGLE_VALUE, WRAP_SINGLE_VALUE

JSON = get_format("JSON")
ROW = [
    SerdeColumn("ID", t.BIGINT),
    SerdeColumn("NAME", t.STRING),
    SerdeColumn("COST", t.Decimal(4, 2)),
]
SINGLE = [SerdeColumn("V", t.DOUBLE)]


def write(
    columns: list[SerdeColumn],
    row: tuple | None,
    *,
    is_key: bool = False,
    features: frozenset[str] = frozenset(),
) -> bytes | None:
    return JSON.serializer(columns, is_key=is_key, properties={}, features=features)(row)


def read(
    columns: list[SerdeColumn],
    data: bytes | None,
    *,
    is_key: bool = False,
    features: frozenset[str] = frozenset(),
) -> tuple | None:
    return JSON.deserializer(columns, is_key=is_key, properties={}, features=features)(data)


def test_round_trip_of_a_wrapped_row() -> None:
    row = (1, "a", Decimal("1.50"))
    data = write(ROW, row)
    assert data == b'{"ID":1,"NAME":"a","COST":1.50}'
    assert read(ROW, data) == row


def test_single_values_wrap_unless_told_not_to() -> None:
    assert write(SINGLE, (1.5,)) == b'{"V":1.5}'
    assert write(SINGLE, (1.5,), features=frozenset([WRAP_SINGLE_VALUE])) == b'{"V":1.5}'
    unwrapped = frozenset([UNWRAP_SINGLE_VALUE])
    assert write(SINGLE, (1e10,), features=unwrapped) == b"1.0E10"
    assert read(SINGLE, b"2.5", features=unwrapped) == (2.5,)
    assert write(SINGLE, (None,), features=unwrapped) is None


def test_single_keys_are_never_wrapped() -> None:
    key = [SerdeColumn("K", t.STRING)]
    assert write(key, ("a",), is_key=True) == b'"a"'
    assert read(key, b'"a"', is_key=True) == ("a",)


def test_fields_match_case_insensitively_and_missing_fields_are_null() -> None:
    assert read(ROW, b'{"id": "7", "cost": 3}') == (7, None, Decimal("3.00"))


def test_json_null_is_a_null_row() -> None:
    assert read(ROW, b"null") is None
    assert read(ROW, None) is None
    assert write(ROW, None) is None


def test_an_unwrapped_json_null_is_a_row_of_one_null_as_ksqldbs_unwrapped_deserializer_wraps_it() -> None:
    assert read(SINGLE, b" null ", features=frozenset([UNWRAP_SINGLE_VALUE])) == (None,)
    assert read(SINGLE, b"null") is None
    assert read([SerdeColumn("K", t.STRING)], b"null", is_key=True) is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{", "Failed to deserialize value"),
        (b"[1, 2]", "Can't convert type. sourceType: ArrayNode"),
        (b'{"ID": true}', "sourceType: BooleanNode, requiredType: BIGINT, path: $.ID"),
        (b'{"COST": 123.4}', "Numeric field overflow"),
        (b'{"ID": NaN}', "Failed to deserialize value"),
    ],
)
def test_undecodable_values_raise_serde_errors(data: bytes, message: str) -> None:
    with pytest.raises(SerdeError) as raised:
        read(ROW, data)
    assert message in raised.value.message


def test_maps_need_string_keys() -> None:
    with pytest.raises(StatementError, match="JSON only supports MAP types with STRING keys"):
        JSON.validate([SerdeColumn("M", t.Map(t.INTEGER, t.INTEGER))], is_key=False, properties={})


def test_documents_round_trip_exactly() -> None:
    document = {"A": Decimal("1.10"), "B": [1, None]}
    data = JSON.from_document(document, ROW, is_key=False, properties={})
    assert data == b'{"A":1.10,"B":[1,null]}'
    assert JSON.to_document(data, ROW, is_key=False, properties={}) == document


HANG_GUARD_SECONDS = 20.0


def _timed_read(columns: list[SerdeColumn], data: bytes) -> tuple | None:
    """Read ``data`` unwrapped, asserting that it ends: the inputs here would take hours to a
    naive reader (``int(Decimal("1E+999999999"))``), so the bound is a hang guard, generous
    enough for a loaded machine, not a performance figure (``qtt bench`` measures those)."""
    start = time.perf_counter()
    try:
        return read(columns, data, features=frozenset([UNWRAP_SINGLE_VALUE]))
    finally:
        assert time.perf_counter() - start < HANG_GUARD_SECONDS, (
            f"reading {data!r} took {time.perf_counter() - start:.1f} s"
        )


# BigDecimal.longValue() keeps the low 64 bits of the integer part: 10^64 is a multiple of 2^64.
@pytest.mark.parametrize(
    ("data", "type_", "expected"),
    [
        (b"1E+999999", t.BIGINT, 0),
        (b"1E+999999999", t.BIGINT, 0),
        (b"-3E+999999999", t.INTEGER, 0),
        (b"1E+63", t.BIGINT, -(2**63)),
        (b"12345678901234567890.5", t.BIGINT, -6101065172474983726),
        (b"12345678901234567890.5", t.INTEGER, -350287150),
        (b"-1E-999999999", t.BIGINT, 0),
        (b"1E+999999999", t.TIMESTAMP, dt.datetime(1970, 1, 1)),
        (b"1E+999999999", t.DATE, dt.date(1970, 1, 1)),
        (b"1E+999999999", t.DOUBLE, float("inf")),
        (b"-1E-999999999", t.DOUBLE, -0.0),
        (b"1E+999999999", t.STRING, "1E+999999999"),
        (b"1" * 5000, t.STRING, "1" * 5000),
        (b"1" * 5000, t.BIGINT, 8198552921648689607),
    ],
)
def test_numbers_of_any_size_narrow_at_once_as_java_does(data: bytes, type_: t.SqlType, expected: object) -> None:
    assert _timed_read([SerdeColumn("V", type_)], data) == (expected,)


@pytest.mark.parametrize(
    ("data", "type_", "message"),
    [
        (b"-1E-999999999", t.Decimal(4, 2), "into DECIMAL(4, 2) without rounding. (Requires 1,999999999)"),
        (b"1E+999999999", t.Decimal(4, 2), "must round to an absolute value less than 10^2. Got 1000"),
        (b'"-1E-999999999"', t.Decimal(4, 2), "without rounding. (Requires 1,999999999)"),
        (b"1E+9999999999", t.BIGINT, "Malformed numeric value ('1E+9999999999')"),
        (b'"' + b"7" * 100_000 + b'"', t.BIGINT, "Can't coerce string to type. targetType: BIGINT"),
        (b'"' + b"!" * 100_000 + b'"', t.BYTES, "Value is not a valid Base64 encoded string: !!!"),
        (b"9223372036854775807", t.TIMESTAMP, "outside the years 1 to 9999 that qtt (and Spark) can hold"),
        (b"-9223372036854775808", t.DATE, "outside the years 1 to 9999 that qtt (and Spark) can hold"),
        (b"[" * 100_000 + b"]" * 100_000, t.STRING, "nests more than 1000 levels deep"),
    ],
)
def test_rejected_values_are_quoted_in_bounded_excerpts(data: bytes, type_: t.SqlType, message: str) -> None:
    with pytest.raises(SerdeError) as raised:
        _timed_read([SerdeColumn("V", type_)], data)
    assert message in raised.value.message
    assert "JSON" in raised.value.message
    assert len(raised.value.message) < 500


def test_nesting_up_to_jacksons_limit_reads() -> None:
    assert _timed_read([SerdeColumn("V", t.STRING)], b"[" * 1000 + b"]" * 1000) == ("[" * 1000 + "]" * 1000,)


@pytest.mark.parametrize("digits", [310, 4000, 4500])
def test_a_double_of_more_digits_than_a_double_holds_reads_as_infinity_of_its_sign(digits: int) -> None:
    # Jackson holds the integer as a BigIntegerNode; ksqlDB's JsonSerdeUtils.toDouble takes its
    # doubleValue(), which is +-Infinity past the double range (never an error)
    number = "9" * digits
    assert read(SINGLE, f'{{"V": {number}}}'.encode()) == (float("inf"),)
    assert read(SINGLE, f'{{"V": -{number}}}'.encode()) == (float("-inf"),)
    assert read(SINGLE, b'{"V": 1' + b"0" * 308 + b"}") == (1e308,)
    assert write(SINGLE, read(SINGLE, f'{{"V": {number}}}'.encode())) == b'{"V":"Infinity"}'


def test_a_record_without_a_value_is_an_empty_string_or_an_error() -> None:
    # ksqlDB's readTree gives a MissingNode, whose text is ''
    text = [SerdeColumn("K", t.STRING)]
    assert read(text, b"", is_key=True) == ("",)
    assert read(text, b" \r\n", features=frozenset([UNWRAP_SINGLE_VALUE])) == ("",)
    with pytest.raises(SerdeError, match="sourceType: MissingNode, requiredType: STRUCT<K VARCHAR>, path: \\$"):
        read(text, b"")
    with pytest.raises(SerdeError, match="sourceType: MissingNode, requiredType: BIGINT"):
        read([SerdeColumn("K", t.BIGINT)], b"\t", is_key=True)


def test_what_follows_the_first_json_value_is_not_read() -> None:
    assert read(ROW, b'{"ID": 1} {"ID": 2}') == (1, None, None)
    assert read(ROW, b'{"ID": 1}\ngarbage') == (1, None, None)
    with pytest.raises(SerdeError, match="root-level"):
        read(SINGLE, b"1.5x", features=frozenset([UNWRAP_SINGLE_VALUE]))
