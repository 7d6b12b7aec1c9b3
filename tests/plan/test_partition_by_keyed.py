"""PARTITION BY over rows keyed for good (a table, a windowed stream): by their own key it re-keys
nothing, by anything else it is ksqlDB's refusal, raised after the query's other checks."""

import re

import pytest

from qtt.errors import StatementError
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

SOURCES = (
    "CREATE TABLE docks (id INT PRIMARY KEY, station STRING, slots INT) WITH (kafka_topic='d', value_format='JSON');"
    "CREATE STREAM laps (rider STRING KEY, n INT) WITH (kafka_topic='l', value_format='JSON', "
    "window_type='Tumbling', window_size='1 MINUTE');"
    "CREATE STREAM rides (id INT KEY, bike STRING, mins INT) WITH (kafka_topic='r', value_format='JSON');"
)


def _plan(sql: str) -> object:
    return plan_statements(parse_statements(SOURCES + sql)).plan.queries()[-1].physical_plan


@pytest.mark.parametrize(
    ("partitioned", "plain"),
    [
        (
            "CREATE TABLE o AS SELECT id, slots FROM docks PARTITION BY id;",
            "CREATE TABLE o AS SELECT id, slots FROM docks;",
        ),
        (
            "CREATE TABLE o AS SELECT station, SUM(slots) AS s FROM docks GROUP BY station PARTITION BY id;",
            "CREATE TABLE o AS SELECT station, SUM(slots) AS s FROM docks GROUP BY station;",
        ),
        (
            "CREATE STREAM o AS SELECT rider, n FROM laps PARTITION BY rider;",
            "CREATE STREAM o AS SELECT rider, n FROM laps;",
        ),
        (
            "CREATE TABLE o AS SELECT bike, COUNT(*) AS c FROM rides GROUP BY bike PARTITION BY mins;",
            "CREATE TABLE o AS SELECT bike, COUNT(*) AS c FROM rides GROUP BY bike;",
        ),
    ],
)
def test_a_re_key_that_changes_nothing_plans_no_step(partitioned: str, plain: str) -> None:
    assert _plan(partitioned) == _plan(plain)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "CREATE TABLE o AS SELECT station, SUM(slots) AS s FROM docks GROUP BY station PARTITION BY station;",
            "TABLE's key column ID instead of [STATION]",
        ),
        (
            "CREATE TABLE o AS SELECT rider, COUNT(*) AS c FROM laps GROUP BY rider PARTITION BY n;",
            "Implicit repartitioning of windowed sources is not supported.",
        ),
        (
            "CREATE TABLE o AS SELECT station, slots FROM docks GROUP BY station PARTITION BY station;",
            "GROUP BY requires aggregate functions",  # the aggregation's own check comes first
        ),
    ],
)
def test_a_refused_re_key_comes_after_the_aggregations_checks(sql: str, message: str) -> None:
    with pytest.raises(StatementError, match=re.escape(message)):
        _plan(sql)
