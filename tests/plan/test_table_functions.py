"""Table functions planned as ksqlDB plans them: a flat map before the projection."""

from __future__ import annotations

import pytest

from qtt.errors import SqlError, StatementError
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from tests.plan.test_statements import fails, plan, schema_of, steps_of

SOURCE = (
    "CREATE STREAM IN1 (K STRING KEY, A ARRAY<INT>, B ARRAY<STRING>, N INT) "
    "WITH (kafka_topic='in', value_format='JSON');"
)


def test_the_flat_map_comes_before_the_projection_which_reads_its_synthetic_columns() -> None:
    planned = plan(
        SOURCE, "CREATE STREAM OUTPUT AS SELECT K, EXPLODE(A) + 1 AS X, N, CUBE_EXPLODE(B) FROM IN1 WHERE N > 0;"
    )
    kinds = [type(step).__name__ for step in steps_of(planned)]
    assert kinds == ["StreamSourceV1", "StreamFilterV1", "StreamFlatMapV1", "StreamSelectV1", "StreamSinkV2"]
    flat_map = next(step for step in steps_of(planned) if isinstance(step, s.StreamFlatMapV1))
    assert [(tf.alias, tf.expression.result_type.__str__()) for tf in flat_map.table_functions] == [
        ("KSQL_SYNTH_0", "INTEGER"),
        ("KSQL_SYNTH_1", "ARRAY<STRING>"),
    ]
    project = next(step for step in steps_of(planned) if isinstance(step, s.StreamSelectV1))
    reads = {x.name for sel in project.select_expressions for x in e.walk(sel.expression) if isinstance(x, e.ColumnRef)}
    assert reads == {"K", "N", "KSQL_SYNTH_0", "KSQL_SYNTH_1"}
    assert schema_of(planned) == "`K` STRING KEY, `X` INTEGER, `N` INTEGER, `KSQL_COL_0` ARRAY<STRING>"


def test_select_star_does_not_show_the_synthetic_columns() -> None:
    planned = plan(SOURCE, "CREATE STREAM OUTPUT AS SELECT *, EXPLODE(A) AS V FROM IN1;")
    assert schema_of(planned) == "`K` STRING KEY, `A` ARRAY<INTEGER>, `B` ARRAY<STRING>, `N` INTEGER, `V` INTEGER"


@pytest.mark.parametrize(
    ("error", "statement", "message"),
    [
        (
            StatementError,
            "CREATE TABLE OUTPUT AS SELECT N, EXPLODE(A), COUNT(*) FROM IN1 GROUP BY N;",
            "Table functions cannot be used with aggregations.",
        ),
        (
            StatementError,
            "CREATE STREAM OUTPUT AS SELECT K, EXPLODE(EXPLODE(A)) FROM IN1;",
            "Table functions cannot be nested: `EXPLODE`(`EXPLODE`())",
        ),
        (
            StatementError,
            "CREATE STREAM OUTPUT AS SELECT K, CASE WHEN N > 1 THEN EXPLODE(A) END FROM IN1;",
            "Table functions cannot be used in CASE: ",
        ),
        (
            StatementError,
            "CREATE STREAM OUTPUT AS SELECT K FROM IN1 WHERE EXPLODE(A) > 1;",
            "Invalid Predicate: Can't find any functions with the name 'EXPLODE'.",
        ),
        (
            StatementError,
            "CREATE STREAM OUTPUT AS SELECT K, EXPLODE(N) FROM IN1;",
            "Function 'explode' does not accept parameters (INTEGER).",
        ),
        (
            StatementError,
            "CREATE STREAM OUTPUT AS SELECT K, CUBE_EXPLODE(A, B) FROM IN1;",
            "cube_explode(ARRAY<T> columns)",
        ),
        # ksqlDB's Analyzer: an aggregate groups the query from its own item on
        (
            StatementError,
            "CREATE STREAM OUTPUT AS SELECT K, COUNT(*), EXPLODE(A) FROM IN1;",
            "Table functions cannot be used with aggregations.",
        ),
        # ... a CASE holds for the rest of its item, printed as the sanitized statement reads
        (
            StatementError,
            "CREATE STREAM OUTPUT AS SELECT K, CASE WHEN N > 1 THEN 1 END + EXPLODE(A) FROM IN1;",
            "Table functions cannot be used in CASE: (CASE WHEN (IN1.N > 1) THEN 1 END)",
        ),
        # ... and both come before the WHERE clause is read
        (
            StatementError,
            "CREATE STREAM OUTPUT AS SELECT K, EXPLODE(EXPLODE(A)) FROM IN1 WHERE NOPE;",
            "Table functions cannot be nested: `EXPLODE`(`EXPLODE`())",
        ),
        (
            StatementError,
            "CREATE STREAM OUTPUT AS SELECT K, EXPLODE() FROM IN1;",
            "Function 'explode' does not accept parameters (BIGINT).",
        ),
        # a grouping expression types a table function as its row type: the key no SELECT has
        (
            StatementError,
            "CREATE TABLE OUTPUT AS SELECT N, COUNT(*) FROM IN1 GROUP BY N, EXPLODE(A);",
            "must include the grouping expression EXPLODE(A) in its projection",
        ),
        (
            StatementError,
            "CREATE STREAM OUTPUT AS SELECT K FROM IN1 WHERE N > 0 AND CUBE_EXPLODE(A) IS NULL;",
            "Invalid Predicate: Can't find any functions with the name 'CUBE_EXPLODE'.",
        ),
    ],
)
def test_table_function_errors(error: type[Exception], statement: str, message: str) -> None:
    assert message in fails(error, SOURCE, statement)


def test_table_functions_do_not_read_tables() -> None:
    table = "CREATE TABLE T1 (K STRING PRIMARY KEY, A ARRAY<INT>) WITH (kafka_topic='t', value_format='JSON');"
    assert "Table source is not supported with table functions" in fails(
        SqlError, table, "CREATE TABLE OUTPUT AS SELECT K, EXPLODE(A) FROM T1;"
    )
    # the analyzer's refusals come first (ksqlDB's QueryAnalyzer asks of the source after it)
    assert "Table functions cannot be nested" in fails(
        SqlError, table, "CREATE TABLE OUTPUT AS SELECT K, EXPLODE(EXPLODE(A)) FROM T1;"
    )


def test_partition_by_comes_before_the_flat_map() -> None:
    # ksqlDB's LogicalPlanner: source, WHERE, PARTITION BY, then the flat map, then the projection.
    planned = plan(SOURCE, "CREATE STREAM OUTPUT AS SELECT N, K, EXPLODE(A) AS E FROM IN1 PARTITION BY N;")
    contexts = [getattr(step, "context", None) for step in steps_of(planned)]
    assert [c for c in contexts if c in ("PartitionBy", "FlatMap", "Project")] == ["PartitionBy", "FlatMap", "Project"]
    assert schema_of(planned) == "`N` INTEGER KEY, `K` STRING, `E` INTEGER"
