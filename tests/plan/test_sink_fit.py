"""Results fitted to an existing sink: DECIMAL widening as ksqlDB does it, and nothing more."""

from __future__ import annotations

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

SOURCES = (
    "CREATE STREAM src (id INT KEY, d DECIMAL(3, 1), wide DECIMAL(9, 4), n INT) "
    "WITH (kafka_topic='src', value_format='JSON');\n"
    "CREATE STREAM dst (id INT KEY, c DECIMAL(5, 2)) WITH (kafka_topic='dst', value_format='JSON');\n"
)


def _insert(select: str) -> tuple[e.Expression, ...]:
    plan = plan_statements(parse_statements(f"{SOURCES}INSERT INTO dst SELECT id, {select} AS c FROM src;")).plan
    sink = plan.queries()[-1].physical_plan
    assert isinstance(sink, s.SinkStep) and isinstance(sink.source, s.SelectStep)
    return tuple(x.expression for x in sink.source.select_expressions)


@pytest.mark.parametrize(
    "literal, value",
    [("1", "1.00"), ("2.5", "2.50"), ("123.45", "123.45"), ("5.0E0", "5.00"), ("-7", "-7.00")],
)
def test_a_number_literal_that_fits_becomes_a_literal_of_the_sink_type(literal: str, value: str) -> None:
    *_, fitted = _insert(literal)
    assert fitted == e.Literal(value=value, sql_type=t.Decimal(5, 2))


def test_a_decimal_column_that_fits_is_cast_to_the_sink_type() -> None:
    *_, fitted = _insert("d")
    assert isinstance(fitted, e.Cast) and fitted.sql_type == t.Decimal(5, 2)


@pytest.mark.parametrize("select", ["1234", "0.125", "wide", "n", "'1'"])
def test_what_does_not_fit_keeps_its_type_and_the_insert_is_refused(select: str) -> None:
    with pytest.raises(StatementError, match="Incompatible schema between results and sink"):
        _insert(select)
