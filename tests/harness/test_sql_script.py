"""Interpreting a SQL test without Spark: epochs, typed inserts, checks and source assertions."""

from __future__ import annotations

import decimal

import pytest

from qtt.errors import AssertionFailedError, SqlError, StatementError
from qtt.harness.sqltests.files import SqlTest
from qtt.harness.sqltests.script import Check, interpret

SOURCE = "CREATE STREAM a (id INT KEY, x INT, d DECIMAL(4, 2), b BYTES) WITH (kafka_topic='a', value_format='JSON');\n"


def _test(sql: str) -> SqlTest:
    return SqlTest(file="t.sql", name="t", index=0, line=1, script=sql)


def test_inserts_are_typed_by_their_columns_and_rowtime_is_their_timestamp() -> None:
    script = interpret(_test(SOURCE + "INSERT INTO a (rowtime, id, x, d, b) VALUES (42, 1, -3, 1.5, 'IQ==');"))
    (insert,) = script.inserts
    assert insert.key == (1,)
    assert insert.value == (-3, decimal.Decimal("1.50"), b"!")
    assert insert.timestamp == 42


def test_an_insert_without_columns_fills_every_column_in_order() -> None:
    script = interpret(_test(SOURCE + "INSERT INTO a VALUES (1, 2, 3.25, NULL);"))
    assert script.inserts[0].value == (2, decimal.Decimal("3.25"), None)


def test_the_plan_changing_after_inserts_begins_an_epoch_and_before_them_does_not() -> None:
    script = interpret(
        _test(
            SOURCE
            + "CREATE STREAM b AS SELECT * FROM a;\n"
            + "CREATE OR REPLACE STREAM b AS SELECT * FROM a WHERE x > 0;\n"
            + "INSERT INTO a (id, x) VALUES (1, 1);\n"
            + "INSERT INTO a (id, x) VALUES (2, 2);\n"
            + "CREATE OR REPLACE STREAM b AS SELECT * FROM a WHERE x > 1;\n"
            + "INSERT INTO a (id, x) VALUES (3, 3);\n"
        )
    )
    assert [epoch.first for epoch in script.epochs] == [0, 2]
    first, second = (epoch.plan.queries() for epoch in script.epochs)
    assert [q.query_id for q in first] == [q.query_id for q in second] == ["CSAS_B_0"]
    assert first != second


def test_a_check_sees_the_inserts_before_it() -> None:
    script = interpret(
        _test(
            SOURCE
            + "INSERT INTO a (id, x) VALUES (1, 1);\n"
            + "ASSERT VALUES a (id, x) VALUES (1, 1);\n"
            + "INSERT INTO a (id, x) VALUES (2, 2);\n"
            + "ASSERT NULL VALUES a (id) KEY (2);\n"
        )
    )
    first, second = script.checks
    assert isinstance(first, Check) and isinstance(second, Check)
    assert (first.seen, first.expected, first.tombstone) == (1, {"ID": 1, "X": 1}, False)
    assert (second.seen, second.expected, second.tombstone) == (2, {"ID": 2}, True)


def test_a_statement_error_ends_the_test_after_the_checks_before_it() -> None:
    script = interpret(
        _test(SOURCE + "ASSERT VALUES a (id) VALUES (1);\nCREATE STREAM b AS SELECT * FROM nowhere;\nSET 'x'='y';")
    )
    assert len(script.checks) == 1
    assert script.error is not None and "NOWHERE" in script.error.message
    assert script.error.line == 3


def test_a_query_started_after_inserts_begins_an_epoch_of_its_own() -> None:
    started = "CREATE STREAM b AS SELECT * FROM a;\nINSERT INTO a (id) VALUES (2);"
    script = interpret(_test(SOURCE + "INSERT INTO a (id) VALUES (1);\n" + started))
    assert [epoch.first for epoch in script.epochs] == [0, 1]
    assert [len(epoch.plan.queries()) for epoch in script.epochs] == [0, 1]


_COLUMNS = "(id INT KEY, x INT, d DECIMAL(4, 2), b BYTES)"
_HOLDS = f"ASSERT STREAM b {_COLUMNS} WITH (kafka_topic='B', value_format='JSON'"


@pytest.mark.parametrize(
    "assertion, words",
    [
        (_HOLDS + ")", None),
        (_HOLDS + ", key_format='KAFKA', wrap_single_value=true, timestamp='x')", "value serde features"),
        (f"ASSERT TABLE b {_COLUMNS} WITH (kafka_topic='B', value_format='JSON')", "type"),
        ("ASSERT TABLE b WITH (kafka_topic='B', value_format='JSON')", "schema"),
        ("ASSERT STREAM b (id INT, x INT, d DECIMAL(4, 2), b BYTES)", "schema"),
        (f"ASSERT STREAM b {_COLUMNS} WITH (kafka_topic='elsewhere', value_format='JSON')", "kafka topic"),
        (f"ASSERT STREAM b {_COLUMNS} WITH (value_format='JSON')", "kafka topic"),
        (f"ASSERT STREAM b {_COLUMNS} WITH (kafka_topic='B', format='AVRO')", "key format"),
        (f"ASSERT STREAM b {_COLUMNS} WITH (kafka_topic='B', value_format='AVRO')", "value format"),
        (f"ASSERT STREAM b {_COLUMNS} WITH (kafka_topic='B')", "value format"),
        (_HOLDS + ", wrap_single_value=false)", "value serde features"),
        (_HOLDS + ", timestamp='x')", "timestamp column"),
        ("ASSERT STREAM c", "stream C to exist"),
    ],
)
def test_a_source_assertion_compares_every_property_as_ksqldb_does(assertion: str, words: str | None) -> None:
    script = interpret(_test(SOURCE + f"CREATE STREAM b AS SELECT * FROM a;\n{assertion};"))
    if words is None:
        assert script.checks == []
    else:
        (problem,) = script.checks
        assert not isinstance(problem, Check)
        assert problem.message.startswith(f"Expected {words}")


def test_a_source_assertion_that_does_not_hold_shows_both_values() -> None:
    script = interpret(_test(SOURCE + f"CREATE STREAM b AS SELECT * FROM a;\n{_HOLDS}, timestamp='x');"))
    (problem,) = script.checks
    assert problem.message == (
        "Expected timestamp column does not match actual for source B.\n"
        "\tExpected: Optional[X]\n\tActual: Optional.empty"
    )


def test_an_insert_that_does_not_fit_its_column_is_a_statement_error() -> None:
    script = interpret(_test(SOURCE + "INSERT INTO a (id, x) VALUES (1, 'many');"))
    assert isinstance(script.error, StatementError)
    assert script.error.message.endswith("Expected type INTEGER for field `X` but got STRING(many)")


def test_an_insert_into_a_windowed_source_is_ksqldbs_error() -> None:
    windowed = (
        "CREATE TABLE w (id INT PRIMARY KEY, n BIGINT) "
        "WITH (kafka_topic='w', value_format='JSON', window_type='TUMBLING', window_size='1 SECOND');\n"
    )
    script = interpret(_test(windowed + "INSERT INTO w (id, n) VALUES (1, 2);"))
    assert script.error is not None
    assert script.error.message == "Cannot insert values into windowed stream/table!"


@pytest.mark.parametrize(
    ("statement", "shown"),
    [
        ("ASSERT VALUES a (rowtime, id, x) VALUES ('soon', 1, 2);", "STRING(soon)"),
        ("ASSERT VALUES a (rowtime, id, x) VALUES (true, 1, 2);", "BOOLEAN(true)"),
        ("ASSERT VALUES a (rowtime, id, x) VALUES (7.9, 1, 2);", "DECIMAL(7.9)"),
    ],
)
def test_a_rowtime_that_is_not_a_number_is_a_statement_error_at_its_line(statement: str, shown: str) -> None:
    # ksqlDB's AssertExecutor builds the expected record as an insert does (GenericRecordFactory)
    script = interpret(_test(SOURCE + "INSERT INTO a (id, x) VALUES (1, 1);\n" + statement))
    assert isinstance(script.error, StatementError)
    assert script.error.line == 3
    assert script.error.message == f"Expected type BIGINT for field `ROWTIME` but got {shown}"
    script.error.at(file="t.sql")
    assert str(script.error).startswith("t.sql: line 3:1: Expected type BIGINT for field `ROWTIME`")


def test_an_inserted_rowtime_that_is_not_a_number_is_ksqldbs_error_at_its_line() -> None:
    inserts = "INSERT INTO a (id, x) VALUES (1, 1);\nINSERT INTO a (rowtime, id) VALUES ('42', 1);"
    script = interpret(_test(SOURCE + inserts))
    assert isinstance(script.error, StatementError)
    assert script.error.line == 3
    # ksqlDB's executor says which INSERT failed; a string never becomes a BIGINT there
    expected = "Failed to insert values into 'A'. Expected type BIGINT for field `ROWTIME` but got STRING(42)"
    assert script.error.message == expected


def test_a_rowtime_is_coerced_as_a_bigint_column_is() -> None:
    script = interpret(
        _test(SOURCE + "INSERT INTO a (rowtime, id) VALUES (42, 1);\nASSERT VALUES a (rowtime, id) VALUES (7, 1);")
    )
    assert script.error is None
    assert script.inserts[0].timestamp == 42
    (check,) = script.checks
    assert isinstance(check, Check) and check.expected["ROWTIME"] == 7


def test_a_syntax_error_in_a_sql_test_file_is_at_the_files_own_line_and_column() -> None:
    from qtt.errors import SqlSyntaxError
    from qtt.harness.sqltests.files import parse_sql_tests

    text = "--@test: bad\n" + SOURCE + "\nCREATE STREAM o AS SELECT id, x FROM a\n WHERE x = 1 AND AND x = 2;\n"
    (test,) = parse_sql_tests(text, file="t.sql")
    with pytest.raises(SqlSyntaxError) as info:
        interpret(test)
    error = info.value.at(file="t.sql", case="bad")
    assert (error.line, error.column) == (5, 18)
    first, source, caret = str(error).splitlines()
    assert first.startswith("t.sql: case 'bad': line 5:18: Syntax Error: unexpected 'AND'; expecting {")
    assert (source, caret) == (" WHERE x = 1 AND AND x = 2;", " " * 17 + "^^^")


TABLE = "CREATE TABLE t (id INT PRIMARY KEY, n INT) WITH (kafka_topic='t', value_format='JSON');\n"


@pytest.mark.parametrize(
    ("statement", "kind", "message"),
    [
        ("ASSERT VALUES t (n) VALUES (1);", SqlError, "Value for primary key column(s) ID is required for tables"),
        (
            "ASSERT VALUES t VALUES (1);",
            StatementError,
            "Expected a value for each column. Expected Columns: []. Got [1]",
        ),
        (
            "ASSERT NULL VALUES t KEY (1);",
            StatementError,
            "Expected a value for each column. Expected Columns: []. Got [1]",
        ),
        (
            "ASSERT NULL VALUES t (id, n) KEY (1, 2);",
            AssertionFailedError,
            "Unexpected value columns specified in ASSERT NULL VALUES.",
        ),
    ],
)
def test_an_asserted_record_is_built_as_ksqldbs_record_factory_builds_it(
    statement: str, kind: type[Exception], message: str
) -> None:
    script = interpret(_test(TABLE + statement))
    assert isinstance(script.error, kind)
    assert script.error.message == message


def test_a_deletion_asserted_without_columns_names_every_column() -> None:
    script = interpret(_test(TABLE + "ASSERT NULL VALUES t KEY (1, NULL);"))
    (check,) = script.checks
    assert isinstance(check, Check) and check.tombstone and check.expected == {"ID": 1, "N": None}
