"""The format registry: lookup by name, the known names, and types a format cannot hold."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.serde import SerdeColumn, get_format, known_formats
from qtt.serde.formats import unsupported_base


def test_lookup_ignores_case() -> None:
    assert get_format("json") is get_format("JSON")
    assert get_format("Kafka").name == "KAFKA"


def test_known_formats() -> None:
    assert known_formats() == ["AVRO", "DELIMITED", "JSON", "JSON_SR", "KAFKA", "NONE", "PROTOBUF", "PROTOBUF_NOSR"]


def test_unknown_formats_suggest_a_known_one() -> None:
    with pytest.raises(StatementError) as raised:
        get_format("jsn")
    assert raised.value.message == (
        "Unknown format: jsn. Did you mean 'JSON'? Known formats: "
        "AVRO, DELIMITED, JSON, JSON_SR, KAFKA, NONE, PROTOBUF, PROTOBUF_NOSR"
    )


@pytest.mark.parametrize(
    ("type_", "format_name", "expected"),
    [
        (t.INTEGER, "JSON", None),
        (t.BOOLEAN, "KAFKA", "BOOLEAN"),
        (t.Array(t.Map(t.STRING, t.BOOLEAN)), "KAFKA", "ARRAY"),
        (t.Array(t.Map(t.STRING, t.BOOLEAN)), "JSON", None),
        (t.Struct((t.Field("A", t.Array(t.BOOLEAN)),)), "DELIMITED", "STRUCT"),
    ],
)
def test_unsupported_base_finds_the_outermost_unsupported_type(
    type_: t.SqlType, format_name: str, expected: str | None
) -> None:
    assert unsupported_base(type_, format_name) == expected


def test_unknown_properties_are_rejected() -> None:
    with pytest.raises(StatementError) as raised:
        get_format("JSON").validate([SerdeColumn("A", t.INTEGER)], is_key=False, properties={"delimiter": ","})
    assert raised.value.message == "JSON does not support the following configs: [delimiter]"
