"""ksqlDB's generated column names."""

from __future__ import annotations

from qtt.plan.planner.aliases import ColumnAliasGenerator
from qtt.sql import ast


def test_alias_generator_numbers_struct_fields_and_expressions() -> None:
    generator = ColumnAliasGenerator([["TOWN", "KSQL_COL_1"]])
    town = ast.Dereference(base=ast.ColumnRef(name="A"), field="TOWN")
    street = ast.Dereference(base=ast.ColumnRef(name="A"), field="STREET")
    other = ast.IntegerLiteral(value=1)
    assert [generator.unique_alias_for(n) for n in (town, street, other, other)] == [
        "TOWN_1",
        "STREET",
        "KSQL_COL_0",
        "KSQL_COL_2",
    ]


def test_next_named_drops_number_zero_and_counts_a_bare_name_as_zero() -> None:
    assert ColumnAliasGenerator([["ROWKEY_0", "ROWKEY_2"]]).next_named("ROWKEY") == "ROWKEY_1"
    assert ColumnAliasGenerator([["OTHER"]]).next_named("ROWKEY") == "ROWKEY"
