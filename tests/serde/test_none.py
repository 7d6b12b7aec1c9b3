"""The NONE format: a key with no columns; nothing is written and nothing is read."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.serde import SerdeColumn, get_format

NONE = get_format("NONE")


def test_rows_are_never_written_and_always_read_empty() -> None:
    assert NONE.serializer([], is_key=True, properties={}, features=frozenset())(()) is None
    assert NONE.serializer([], is_key=True, properties={}, features=frozenset())(None) is None
    deserialize = NONE.deserializer([], is_key=True, properties={}, features=frozenset())
    assert deserialize(b"anything") == ()
    # a NONE key or value holds no columns, so a null record is an empty row, not a null one
    assert deserialize(None) == ()


def test_documents_are_text() -> None:
    assert NONE.from_document(None, [], is_key=True, properties={}) is None
    assert NONE.from_document(12, [], is_key=True, properties={}) == b"12"
    assert NONE.from_document(True, [], is_key=True, properties={}) == b"True"
    assert NONE.to_document(None, [], is_key=True, properties={}) is None
    assert NONE.to_document(b"\xffa", [], is_key=True, properties={}) == "\ufffda"


@pytest.mark.parametrize(
    ("is_key", "message"),
    [
        (True, "The 'NONE' format can only be used when no columns are defined. Got: [`K` INTEGER KEY]"),
        (False, "The 'NONE' format can only be used when no columns are defined. Got: [`K` INTEGER]"),
    ],
)
def test_columns_are_rejected(is_key: bool, message: str) -> None:
    with pytest.raises(StatementError) as raised:
        NONE.validate([SerdeColumn("K", t.INTEGER)], is_key=is_key, properties={})
    assert raised.value.message == message


def test_no_columns_validate_whatever_the_properties() -> None:
    NONE.validate([], is_key=True, properties={"delimiter": ","})
