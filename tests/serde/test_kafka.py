"""The KAFKA format: one primitive in Kafka's own byte layout."""

from __future__ import annotations

import struct

import pytest

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import SerdeColumn, get_format

KAFKA = get_format("KAFKA")


@pytest.mark.parametrize(
    ("type_", "value", "data"),
    [
        (t.INTEGER, 2, b"\x00\x00\x00\x02"),
        (t.BIGINT, -1, b"\xff" * 8),
        (t.DOUBLE, 2.5, struct.pack(">d", 2.5)),
        (t.STRING, "h\u00e9", "h\u00e9".encode()),
        (t.BYTES, b"\x00\x01", b"\x00\x01"),
    ],
)
def test_round_trip(type_: t.SqlType, value: object, data: bytes) -> None:
    columns = [SerdeColumn("V", type_)]
    assert KAFKA.serializer(columns, is_key=True, properties={}, features=frozenset())((value,)) == data
    assert KAFKA.deserializer(columns, is_key=True, properties={}, features=frozenset())(data) == (value,)


def test_nulls_and_keyless_schemas() -> None:
    columns = [SerdeColumn("V", t.INTEGER)]
    assert KAFKA.serializer(columns, is_key=False, properties={}, features=frozenset())((None,)) is None
    assert KAFKA.deserializer([], is_key=True, properties={}, features=frozenset())(b"anything") is None


def test_wrong_sizes_are_errors() -> None:
    columns = [SerdeColumn("V", t.BIGINT)]
    with pytest.raises(SerdeError) as raised:
        KAFKA.deserializer(columns, is_key=False, properties={}, features=frozenset())(b"\x00")
    assert raised.value.message == (
        "Failed to deserialize value as KAFKA BIGINT: Size of data received by LongDeserializer is not 8"
    )


def test_strings_decode_leniently() -> None:
    columns = [SerdeColumn("V", t.STRING)]
    assert KAFKA.deserializer(columns, is_key=False, properties={}, features=frozenset())(b"\xff") == ("\ufffd",)


def test_documents() -> None:
    columns = [SerdeColumn("V", t.INTEGER)]
    data = KAFKA.from_document(7, columns, is_key=False, properties={})
    assert data == b"\x00\x00\x00\x07"
    assert KAFKA.to_document(data, columns, is_key=False, properties={}) == 7


def test_null_and_keyless_documents() -> None:
    columns = [SerdeColumn("V", t.INTEGER)]
    assert KAFKA.from_document(None, columns, is_key=False, properties={}) is None
    assert KAFKA.from_document(7, [], is_key=True, properties={}) is None
    assert KAFKA.to_document(None, columns, is_key=False, properties={}) is None
    assert KAFKA.to_document(b"\x00\x00\x00\x07", [], is_key=True, properties={}) is None
    assert KAFKA.serializer([], is_key=True, properties={}, features=frozenset())((7,)) is None
    assert KAFKA.deserializer(columns, is_key=True, properties={}, features=frozenset())(None) is None


@pytest.mark.parametrize(
    ("columns", "is_key", "message"),
    [
        (
            [SerdeColumn("A", t.INTEGER), SerdeColumn("B", t.INTEGER)],
            True,
            "The 'KAFKA' format only supports a single field. Got: [`A` INTEGER KEY, `B` INTEGER KEY]",
        ),
        (
            [SerdeColumn("A", t.INTEGER), SerdeColumn("B", t.STRING)],
            False,
            "The 'KAFKA' format only supports a single field. Got: [`A` INTEGER, `B` STRING]",
        ),
        ([SerdeColumn("A", t.BOOLEAN)], True, "The 'KAFKA' format does not support type 'BOOLEAN'"),
        (
            [SerdeColumn("A", t.Decimal(4, 2))],
            False,
            "The 'KAFKA' format does not support type 'DECIMAL'",
        ),
    ],
)
def test_validation_messages(columns: list[SerdeColumn], is_key: bool, message: str) -> None:
    with pytest.raises(StatementError) as raised:
        KAFKA.validate(columns, is_key=is_key, properties={})
    assert raised.value.message == message
