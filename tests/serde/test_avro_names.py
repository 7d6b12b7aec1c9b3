"""AVRO names: records before fields, a field's type before its name, in Avro's words."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.serde.interface import SerdeColumn
from qtt.serde.registry.avro_schema import check_avro_names

ROOT = "io.confluent.ksql.avro_schemas.KsqlDataSourceSchema"


def _struct(*fields: tuple[str, t.SqlType]) -> t.Struct:
    return t.Struct(tuple(t.Field(name, type_) for name, type_ in fields))


@pytest.mark.parametrize(
    ("columns", "full_name", "problem"),
    [
        ([("a-b", t.INTEGER)], ROOT, "Illegal character in: a-b"),
        ([("9a", t.INTEGER)], ROOT, "Illegal initial character: 9a"),
        ([("a-b", _struct(("X", t.INTEGER)))], ROOT, "Illegal character in: KsqlDataSourceSchema_a-b"),
        ([("S", t.Array(_struct(("1x", t.INTEGER))))], ROOT, "Illegal initial character: 1x"),
        ([("M", t.Map(t.STRING, _struct(("x-y", t.INTEGER))))], ROOT, "Illegal character in: x-y"),
        ([("A", t.INTEGER)], "com.acme.bad-name", "Illegal character in: bad-name"),
        ([("A", t.INTEGER)], "com.acme.", "Empty name"),
    ],
)
def test_the_first_name_avro_cannot_take_is_refused(
    columns: list[tuple[str, t.SqlType]], full_name: str, problem: str
) -> None:
    serde_columns = [SerdeColumn(name, type_) for name, type_ in columns]
    with pytest.raises(StatementError) as caught:
        check_avro_names(serde_columns, full_name=full_name, unwrapped=False)
    assert caught.value.message == f"Schema is not compatible with Avro: {problem}"


@pytest.mark.parametrize(
    ("columns", "full_name", "unwrapped"),
    [
        ([("a.b", t.INTEGER)], ROOT, False),  # written as a_b
        ([("crème", _struct(("größe", t.INTEGER)))], ROOT, False),
        ([("a-b", t.INTEGER)], "1space.Name", True),  # a bare value names nothing; namespaces go unchecked
        ([("a-b", _struct(("OK", t.INTEGER)))], ROOT, True),
    ],
)
def test_names_avro_takes_pass(columns: list[tuple[str, t.SqlType]], full_name: str, unwrapped: bool) -> None:
    check_avro_names([SerdeColumn(name, type_) for name, type_ in columns], full_name=full_name, unwrapped=unwrapped)
