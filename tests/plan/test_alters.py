"""The schema ALTER ... ADD COLUMN gives a source, refused where ksqlDB refuses it."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.ddl.alters import altered_schema
from qtt.plan.ir.schema import LogicalSchema

SCHEMA = LogicalSchema.parse("`ID` INTEGER KEY, `DEPOT` STRING, `TRACE` BYTES HEADERS")


def test_new_value_columns_come_last() -> None:
    altered = altered_schema(SCHEMA, [("WEIGHT", t.INTEGER), ("NOTE", t.STRING)])
    assert altered.names()[-2:] == ["WEIGHT", "NOTE"]


def test_a_header_columns_name_may_be_taken() -> None:
    assert altered_schema(SCHEMA, [("TRACE", t.STRING)]).names()[-1] == "TRACE"


@pytest.mark.parametrize(
    ("added", "message"),
    [
        ([("DEPOT", t.INTEGER)], "Cannot add column `DEPOT` to schema."),
        ([("ID", t.INTEGER)], "Schema contains duplicate column names"),
        ([("ID", t.INTEGER), ("ID", t.STRING)], "Cannot add column `ID` to schema."),
    ],
)
def test_a_taken_name_is_refused_as_ksqldb_refuses_it(added: list[tuple[str, t.SqlType]], message: str) -> None:
    with pytest.raises(StatementError, match=message):
        altered_schema(SCHEMA, added)
