"""The JSON format: wrapping, coercion on read, Jackson-like output, and its errors."""

from __future__ import annotations

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
