"""CREATE OR REPLACE: which upgrades a running query may take, and the plan it leaves."""

from __future__ import annotations

import pytest

from qtt.errors import SqlError, StatementError
from qtt.plan.ddl.upgrades import ksql_step_name
from qtt.plan.ir import steps as s
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

SOURCE = "CREATE STREAM a (id INT KEY, x INT, y INT) WITH (kafka_topic='a', value_format='JSON');\n"
TABLE = "CREATE TABLE t (id INT PRIMARY KEY, name STRING) WITH (kafka_topic='t', value_format='JSON');\n"


def _plan(sql: str) -> s.Plan:
    return plan_statements(parse_statements(sql)).plan


def _refused(sql: str) -> str:
    with pytest.raises(SqlError) as raised:
        _plan(sql)
    return raised.value.message


@pytest.mark.parametrize(
    "old, new",
    [
        ("SELECT * FROM a", "SELECT * FROM a WHERE x > 0"),
        ("SELECT * FROM a WHERE x > 0", "SELECT * FROM a WHERE y > 0"),
        ("SELECT id, x FROM a", "SELECT id, x, y, x + y AS s FROM a"),
        ("SELECT * FROM a PARTITION BY x", "SELECT * FROM a WHERE y > 1 PARTITION BY x"),
    ],
)
def test_passive_changes_upgrade_the_query_in_place(old: str, new: str) -> None:
    plan = _plan(f"{SOURCE}CREATE STREAM b AS {old};\nCREATE OR REPLACE STREAM b AS {new};")
    (query,) = plan.queries()
    assert query.query_id == "CSAS_B_0"  # the id of the query it replaced
    assert new.split(" FROM")[0].split("SELECT ")[1] in plan.statements[-1].statement_text
    declared = [c for c in plan.ddl_commands() if getattr(c, "source_name", None) == "B"]
    assert len(declared) == 1 and declared[0].or_replace  # type: ignore[attr-defined]


def test_an_aggregate_keeps_its_id_when_only_its_filter_changes() -> None:
    plan = _plan(
        f"{SOURCE}CREATE TABLE c AS SELECT id, COUNT(*) AS n FROM a WHERE x < 0 GROUP BY id;\n"
        "CREATE OR REPLACE TABLE c AS SELECT id, COUNT(*) AS n FROM a WHERE x > 0 GROUP BY id;"
    )
    assert [q.query_id for q in plan.queries()] == ["CTAS_C_0"]


def test_replacing_an_insert_targets_upgrades_the_insert_and_a_read_only_sink_is_refused() -> None:
    target = "CREATE STREAM b (id INT KEY, x INT, y INT) WITH (kafka_topic='B', value_format='JSON');\n"
    plan = _plan(f"{SOURCE}{target}INSERT INTO b SELECT * FROM a;\nCREATE OR REPLACE STREAM b AS SELECT * FROM a;")
    assert [q.query_id for q in plan.queries()] == ["INSERTQUERY_0"]  # QueryIdUtil.buildId: the one writer
    read_only = "CREATE SOURCE STREAM b (id INT KEY, x INT, y INT) WITH (kafka_topic='B', value_format='JSON');\n"
    for create in ("CREATE OR REPLACE STREAM b", "CREATE STREAM IF NOT EXISTS b"):
        assert _refused(f"{SOURCE}{read_only}{create} AS SELECT * FROM a;") == "Cannot insert into read-only stream: B"
    source_table = "CREATE SOURCE TABLE c (id INT PRIMARY KEY, x INT) WITH (kafka_topic='C', value_format='JSON');\n"
    switched_off = f"SET 'ksql.create.or.replace.enabled' = 'false';\n{SOURCE}{source_table}"
    refused = _refused(switched_off + "CREATE OR REPLACE TABLE c AS SELECT id, COUNT(*) AS x FROM a GROUP BY id;")
    assert refused == "Cannot add table 'C': A table with the same name already exists"  # its CST_ query's name


@pytest.mark.parametrize(
    "old, new, words",
    [
        (
            "STREAM b AS SELECT * FROM a PARTITION BY x",
            "STREAM b AS SELECT * FROM a PARTITION BY y",
            "Key columns must be identical. The following key columns are changed, missing or reordered: "
            "[`X` INTEGER KEY]",
        ),
        (
            "STREAM b AS SELECT id, x, y FROM a",
            "STREAM b AS SELECT id, y, x FROM a",
            "The following columns are changed, missing or reordered: [`X` INTEGER, `Y` INTEGER]",
        ),
        (
            "STREAM b AS SELECT id, x FROM a",
            "STREAM b AS SELECT id, CAST(x AS STRING) AS x FROM a",
            "The following columns are changed, missing or reordered: [`X` INTEGER]",
        ),
        (
            "STREAM b AS SELECT * FROM a",
            "STREAM b WITH (kafka_topic='other') AS SELECT * FROM a",
            "Cannot upgrade data source: DataSource '`B`' has topic = B which is not upgradeable to other",
        ),
        (
            "TABLE c AS SELECT id, SUM(x) AS n FROM a GROUP BY id",
            "TABLE c AS SELECT id, MAX(x) AS n FROM a GROUP BY id",
            "StreamAggregate must have matching aggregate functions. Values differ: [SUM(X)] vs. [MAX(X)]",
        ),
        (  # ksqlDB compares the columns an aggregation reads before its aggregations
            "TABLE c AS SELECT id, SUM(x) AS n FROM a GROUP BY id",
            "TABLE c AS SELECT id, SUM(y) AS n FROM a GROUP BY id",
            "StreamAggregate must have matching columns not part of aggregate. "
            "Values differ: [`ID`, `X`] vs. [`ID`, `Y`]",
        ),
        (
            "TABLE c AS SELECT id, COUNT(*) AS n FROM a GROUP BY id",
            "TABLE c AS SELECT id, COUNT(*) AS n FROM a WHERE x > 0 GROUP BY id",
            "StreamAggregate must have matching columns not part of aggregate. "
            "Values differ: [`ID`, `ROWTIME`] vs. [`ID`, `ROWTIME`, `X`]",
        ),
        (
            "TABLE c AS SELECT id, COUNT(*) AS n FROM a WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY id",
            "TABLE c AS SELECT id, COUNT(*) AS n FROM a WINDOW TUMBLING (SIZE 1 SECOND) WHERE x > 0 GROUP BY id",
            "Upgrades not yet supported for StreamWindowedAggregate",
        ),
        (
            "STREAM j AS SELECT a.id, a.x, t.name FROM a JOIN t ON a.id = t.id",
            "STREAM j AS SELECT a.id, a.x, t.name FROM a JOIN t ON a.id = t.id WHERE a.x > 0",
            "Upgrades not yet supported for StreamTableJoin",
        ),
    ],
)
def test_an_upgrade_that_would_break_the_sink_or_the_state_is_refused(old: str, new: str, words: str) -> None:
    message = _refused(f"{SOURCE}{TABLE}CREATE {old};\nCREATE OR REPLACE {new};")
    assert words in message


def test_a_declared_stream_may_gain_columns_at_its_end_only() -> None:
    grown = "CREATE OR REPLACE STREAM a (id INT KEY, x INT, y INT, z INT) WITH (kafka_topic='a', value_format='JSON');"
    plan = _plan(SOURCE + grown)
    (declared,) = plan.ddl_commands()
    assert [c.name for c in declared.schema.columns] == ["ID", "X", "Y", "Z"]  # type: ignore[attr-defined]
    shrunk = "CREATE OR REPLACE STREAM a (id INT KEY, x INT) WITH (kafka_topic='a', value_format='JSON');"
    assert "[`Y` INTEGER]" in _refused(SOURCE + shrunk)


def test_a_source_that_a_query_reads_cannot_be_dropped_but_the_query_sink_can() -> None:
    with pytest.raises(StatementError) as raised:
        _plan(f"{SOURCE}CREATE STREAM b AS SELECT * FROM a;\nDROP STREAM a;")
    assert "The following streams and/or tables read from this source: [B]" in raised.value.message
    plan = _plan(f"{SOURCE}CREATE STREAM b AS SELECT * FROM a;\nDROP STREAM b;\nDROP STREAM a;")
    assert isinstance(plan.ddl_commands()[-1], s.DropSourceV1)
    # a running INSERT holds both the source it reads and the sink it writes (ksqlDB's engine)
    inserting = f"{SOURCE}CREATE STREAM b AS SELECT * FROM a;\nCREATE STREAM c AS SELECT * FROM a;\n"
    inserting += "INSERT INTO b SELECT * FROM c;\n"
    with pytest.raises(
        StatementError, match=r"read from this source: \[INSERTQUERY_2\]\.\n.*write into this source: \[\]"
    ):
        _plan(inserting + "DROP STREAM c;")
    with pytest.raises(
        StatementError, match=r"read from this source: \[\]\.\n.*write into this source: \[INSERTQUERY_2\]"
    ):
        _plan(inserting + "DROP STREAM b;")


def test_step_names_are_ksqldbs_class_names() -> None:
    plan = _plan(f"{SOURCE}{TABLE}CREATE STREAM j AS SELECT a.id, a.x, t.name FROM a JOIN t ON a.id = t.id;")
    names = {ksql_step_name(step) for step in s.walk_steps(plan.queries()[0].physical_plan)}
    assert {"StreamTableJoin", "StreamSource", "StreamSink"} <= names


EXTENDED = "SET 'qtt.upgrades.extended' = 'true';\n"
STREAM_B = "CREATE STREAM bb (id INT KEY, z INT) WITH (kafka_topic='bb', value_format='JSON');\n"
TABLE_U = "CREATE TABLE u (id INT PRIMARY KEY, v INT) WITH (kafka_topic='u', value_format='JSON');\n"


@pytest.mark.parametrize(
    "old, new",
    [
        (  # a filter after a stream-table join
            "STREAM j AS SELECT a.id, a.x, t.name FROM a JOIN t ON a.id = t.id",
            "STREAM j AS SELECT a.id, a.x, t.name FROM a JOIN t ON a.id = t.id WHERE a.x > 0",
        ),
        (  # a projection after a stream-table join
            "STREAM j AS SELECT a.id, a.x FROM a JOIN t ON a.id = t.id",
            "STREAM j AS SELECT a.id, a.x, t.name FROM a JOIN t ON a.id = t.id",
        ),
        (  # a filter after a table-table join
            "TABLE j AS SELECT t.id, name, v FROM t JOIN u ON t.id = u.id",
            "TABLE j AS SELECT t.id, name, v FROM t JOIN u ON t.id = u.id WHERE v > 1",
        ),
        (  # a filter after a stream-stream join
            "STREAM j AS SELECT a.id, x, z FROM a JOIN bb WITHIN 1 MINUTE ON a.id = bb.id",
            "STREAM j AS SELECT a.id, x, z FROM a JOIN bb WITHIN 1 MINUTE ON a.id = bb.id WHERE z > x",
        ),
        (  # a filter before a windowed aggregation
            "TABLE c AS SELECT id, COUNT(*) AS n FROM a WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY id",
            "TABLE c AS SELECT id, COUNT(*) AS n FROM a WINDOW TUMBLING (SIZE 1 SECOND) WHERE x > 0 GROUP BY id",
        ),
        (  # a HAVING after a windowed aggregation
            "TABLE c AS SELECT id, COUNT(*) AS n FROM a WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY id",
            "TABLE c AS SELECT id, COUNT(*) AS n FROM a WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY id "
            "HAVING COUNT(*) > 1",
        ),
        (  # a filter and a projection around a table function
            "STREAM e AS SELECT id, EXPLODE(ARRAY[x, y]) AS v FROM a",
            "STREAM e AS SELECT id, EXPLODE(ARRAY[x, y]) AS v, x FROM a WHERE y > 0",
        ),
    ],
)
def test_extended_upgrades_change_filters_and_projections_around_joins_windows_and_table_functions(
    old: str, new: str
) -> None:
    statements = f"{SOURCE}{TABLE}{STREAM_B}{TABLE_U}CREATE {old};\nCREATE OR REPLACE {new};"
    assert "Upgrades not yet supported for" in _refused(statements)  # ksqlDB's rules by default
    assert "qtt upgrades it when the statements before set 'qtt.upgrades.extended' = 'true'" in _refused(statements)
    plan = _plan(EXTENDED + statements)
    assert len(plan.queries()) == 1


@pytest.mark.parametrize(
    "old, new, words",
    [
        (
            "STREAM j AS SELECT a.id, a.x, t.name FROM a JOIN t ON a.id = t.id",
            "STREAM j AS SELECT a.id, a.x, t.name FROM a LEFT JOIN t ON a.id = t.id",
            "StreamTableJoin must have matching join type. Values differ: INNER vs. LEFT (its state was kept",
        ),
        (
            "STREAM j AS SELECT a.id, x, z FROM a JOIN bb WITHIN 1 MINUTE ON a.id = bb.id",
            "STREAM j AS SELECT a.id, x, z FROM a JOIN bb WITHIN 2 MINUTES ON a.id = bb.id",
            "StreamStreamJoin must have matching before ms. Values differ: 60000 vs. 120000",
        ),
        (
            "TABLE c AS SELECT id, COUNT(*) AS n FROM a WINDOW TUMBLING (SIZE 1 SECOND, GRACE PERIOD 1 SECOND) "
            "GROUP BY id",
            "TABLE c AS SELECT id, COUNT(*) AS n FROM a WINDOW TUMBLING (SIZE 1 SECOND, GRACE PERIOD 2 SECONDS) "
            "GROUP BY id",
            "StreamWindowedAggregate must have matching window.",
        ),
        (
            "TABLE c AS SELECT id, COUNT(*) AS n FROM a WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY id",
            "TABLE c AS SELECT id, COUNT(*) AS n, SUM(x) AS s FROM a WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY id",
            "StreamWindowedAggregate must have matching aggregations.",
        ),
    ],
)
def test_extended_upgrades_still_refuse_what_the_state_cannot_follow(old: str, new: str, words: str) -> None:
    message = _refused(f"{EXTENDED}{SOURCE}{TABLE}{STREAM_B}{TABLE_U}CREATE {old};\nCREATE OR REPLACE {new};")
    assert words in message
