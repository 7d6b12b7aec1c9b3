"""A query statement as ksqlDB prints it after sanitizing it (the ``Statement: ...`` of its messages)."""

from __future__ import annotations

import pytest

from qtt.errors import SqlError
from qtt.harness.cases.expected import mismatch
from qtt.harness.cases.model import ExpectedException
from qtt.plan.planner.statement_text import ksql_statement_text
from qtt.plan.statements import Planner
from qtt.sql import ast, parse_statements

SOURCES = """
CREATE STREAM rides (bike VARCHAR KEY, station VARCHAR, minutes INT, `note` VARCHAR)
  WITH (kafka_topic='rides', value_format='JSON');
CREATE TABLE bikes (bike VARCHAR PRIMARY KEY, model VARCHAR, station VARCHAR)
  WITH (kafka_topic='bikes', value_format='JSON');
CREATE STREAM repairs (bike VARCHAR KEY, station VARCHAR, cost DOUBLE)
  WITH (kafka_topic='repairs', value_format='JSON');
"""


def _text(sql: str) -> str:
    planner = Planner({})
    *ddl, query = parse_statements(SOURCES + sql)
    for statement in ddl:
        planner.plan(statement)
    assert isinstance(query, ast.CreateAsSelect | ast.InsertInto)
    return ksql_statement_text(query, planner.sources)


@pytest.mark.parametrize(
    ("sql", "printed"),
    [
        (
            "CREATE STREAM long_rides AS SELECT bike, minutes * 60, station FROM rides WHERE minutes > 30;",
            "CREATE STREAM LONG_RIDES AS SELECT\n  RIDES.BIKE BIKE,\n  (RIDES.`MINUTES` * 60) KSQL_COL_0,\n"
            "  RIDES.STATION STATION\nFROM RIDES RIDES\nWHERE (RIDES.`MINUTES` > 30)\nEMIT CHANGES",
        ),
        (
            "CREATE TABLE busy WITH (kafka_topic='busy-stations', key_format='KAFKA') AS SELECT station, COUNT() "
            "FROM rides r WINDOW HOPPING (SIZE 1 HOUR, ADVANCE BY 10 MINUTES, GRACE PERIOD 2 MINUTES) "
            "GROUP BY station HAVING COUNT(*) > 2;",
            "CREATE TABLE BUSY WITH (KAFKA_TOPIC='busy-stations', KEY_FORMAT='KAFKA') AS SELECT\n  R.STATION STATION,\n"
            "  COUNT(*) KSQL_COL_0\nFROM RIDES R\nWINDOW HOPPING ( SIZE 1 HOURS , ADVANCE BY 10 MINUTES , GRACE PERIOD "
            "2 MINUTES ) \nGROUP BY R.STATION\nHAVING (COUNT(*) > 2)\nEMIT CHANGES",
        ),
        (
            "CREATE STREAM fixed AS SELECT r.bike, r.station, p.station, cost, r.ROWTIME "
            "FROM rides r JOIN repairs p WITHIN (5 MINUTES, 1 HOUR) ON r.bike = p.bike;",
            "CREATE STREAM FIXED AS SELECT\n  R.BIKE R_BIKE,\n  R.STATION R_STATION,\n  P.STATION P_STATION,\n"
            "  P.COST COST,\n  R.ROWTIME R_ROWTIME\nFROM RIDES R\nINNER JOIN REPAIRS P WITHIN (5 MINUTES, 1 HOURS) "
            "ON ((R.BIKE = P.BIKE))\nEMIT CHANGES",
        ),
        (
            "CREATE STREAM described AS SELECT * FROM rides LEFT JOIN bikes ON rides.bike = bikes.bike "
            "WHERE model NOT LIKE 'city%';",
            "CREATE STREAM DESCRIBED AS SELECT *\nFROM RIDES RIDES\nLEFT OUTER JOIN BIKES BIKES ON "
            "((RIDES.BIKE = BIKES.BIKE))\nWHERE (NOT (BIKES.MODEL LIKE 'city%'))\nEMIT CHANGES",
        ),
        (
            "CREATE STREAM by_station AS SELECT station, `note`, TRANSFORM(ARRAY[minutes], x => x + 1) AS plus "
            "FROM rides PARTITION BY station;",
            "CREATE STREAM BY_STATION AS SELECT\n  RIDES.STATION STATION,\n  RIDES.`note` `note`,\n"
            "  TRANSFORM(ARRAY[RIDES.`MINUTES`], (X) => (X + 1)) PLUS\nFROM RIDES RIDES\nPARTITION BY RIDES.STATION\n"
            "EMIT CHANGES",
        ),
        ("INSERT INTO rides SELECT * FROM rides;", "INSERT INTO rides SELECT * FROM rides;"),
    ],
)
def test_a_query_statement_prints_as_ksqldb_prints_it_sanitized(sql: str, printed: str) -> None:
    assert _text(sql) == printed


def test_an_error_of_a_query_statement_also_reads_with_the_statement_after_it() -> None:
    planner = Planner({})
    *ddl, query = parse_statements(
        SOURCES + "CREATE TABLE per_station WITH (key_format='KAFKA') AS SELECT station, bike, COUNT(*) AS n "
        "FROM rides GROUP BY station, bike;"
    )
    for statement in ddl:
        planner.plan(statement)
    with pytest.raises(SqlError) as raised:
        planner.plan(query)
    error = raised.value
    assert error.ksql_statement == (
        "CREATE TABLE PER_STATION WITH (KEY_FORMAT='KAFKA') AS SELECT\n  RIDES.STATION STATION,\n"
        "  RIDES.BIKE BIKE,\n  COUNT(*) N\nFROM RIDES RIDES\nGROUP BY RIDES.STATION, RIDES.BIKE\nEMIT CHANGES"
    )
    whole = f"{error.message}\nStatement: {error.ksql_statement}"
    assert mismatch(ExpectedException(message=whole), error) is None
    assert "Statement:" not in str(error)  # what qtt prints names the place instead
