"""plan_variant: SQL errors are located in the case file, as structured fields; written_topics."""

from __future__ import annotations

from pathlib import Path

import pytest

from qtt.errors import SqlError, SqlSyntaxError, StatementError
from qtt.harness.cases.expected import mismatch
from qtt.harness.cases.loader import load_file
from qtt.harness.cases.model import ExpectedException
from qtt.harness.replay.driver import ReplayItem, ReplayResult
from qtt.harness.replay.runner import plan_variant, read_back, unevaluated, written_topics
from qtt.harness.replay.topic_serdes import topic_serdes

FIXTURE = Path(__file__).parent / "fixtures" / "runner" / "sql_errors.json"


def _error(case: str) -> SqlError:
    [variant] = [v for v in load_file(FIXTURE, display="sql_errors.json").variants if v.case == case]
    with pytest.raises(SqlError) as caught:
        plan_variant(variant)
    return caught.value


@pytest.mark.parametrize(
    ("case", "kind", "path", "line", "inside"),
    [
        ("bad", SqlSyntaxError, "$.tests[1].statements[1]", 8, (2, 6)),
        ("unknown column", StatementError, "$.tests[2].statements[1]", 16, (1, 30)),
    ],
)
def test_a_sql_error_names_the_statement_in_the_case_file(
    case: str, kind: type, path: str, line: int, inside: tuple[int, int]
) -> None:
    error = _error(case)
    assert isinstance(error, kind)
    assert (error.file, error.case, error.path, error.line) == ("sql_errors.json", case, path, line)
    assert (error.statement_line, error.statement_column) == inside
    assert str(error).startswith(f"sql_errors.json: case {case!r}: {path}: line {line}: statement line ")


def test_a_syntax_error_keeps_ksqldbs_message() -> None:
    # ksqlDB lists no more than three expected tokens, and here many would do
    assert _error("bad").message.startswith("line 3:6: Syntax Error\n\nStatement: ")


def test_a_syntax_error_in_a_case_file_gives_one_position_and_points_at_the_token() -> None:
    # the second statement's "v + FROM s": the operand is missing where FROM stands (line 2:6 of
    # the statement, whose string is on line 8 of the file); the joined script's own "line 3:6"
    # stays in the ksqlDB message that expectedException matches, and is not printed
    error = _error("bad")
    assert error.message.startswith("line 3:6: Syntax Error\n")
    first, source, caret = str(error).splitlines()
    assert first.startswith(
        "sql_errors.json: case 'bad': $.tests[1].statements[1]: line 8: statement line 2:6: "
        "Syntax Error: unexpected 'FROM'; expecting {'(',"
    )
    assert "line 3:" not in str(error)
    assert (source, caret) == (" v + FROM s;", "     ^^^^")


def test_a_located_error_also_reads_as_ksqldb_prefixes_it_in_the_joined_script() -> None:
    error = _error("unknown column")
    assert error.script_position == (2, 30)  # the second statement's line in the statements joined by newlines
    assert error.ksql_text() == "Line: 2, Col: 30: SELECT column 'NOPE' cannot be resolved."
    expected = ExpectedException(type="io.confluent.ksql.util.KsqlStatementException", message=error.ksql_text())
    assert mismatch(expected, error) is None
    elsewhere = ExpectedException(type="io.confluent.ksql.util.KsqlStatementException", message="Line: 1, Col: 30: ")
    assert mismatch(elsewhere, error) is not None


def test_a_topic_no_query_writes_holds_the_inserts_then_the_inputs_written_there() -> None:
    # ksqlDB's runner reads an expected topic whole from its stub Kafka, inputs included
    fixture = FIXTURE.with_name("written_topics.json")
    [variant] = load_file(fixture, display="written_topics.json").variants
    planned = plan_variant(variant, unevaluated)
    item = ReplayItem.from_case(planned.plan, variant.inputs, inserts=planned.inserts)
    outputs, sinks = written_topics(item, ReplayResult(), {"a", "b", "unknown"}, planned.inserts, {"a"})
    assert [(r.key, r.value, r.timestamp) for r in outputs["a"]] == [("i1", {"M": 1}, 0), ("x", {"M": 5}, 7)]
    assert [(r.key, r.value) for r in outputs["b"]] == [("i2", {"N": 2})]
    assert set(sinks) == {"a", "b"} and "unknown" not in outputs


def test_the_records_a_case_writes_to_a_querys_sink_come_before_the_querys() -> None:
    # ksqlDB's runner writes the inserts and the inputs to its stub Kafka before any query runs
    fixture = FIXTURE.with_name("written_topics.json")
    [variant] = load_file(fixture, display="written_topics.json").variants
    planned = plan_variant(variant, unevaluated)
    item = ReplayItem.from_case(planned.plan, variant.inputs, inserts=planned.inserts)
    serde = topic_serdes(planned.plan.ddl_commands())["a"]
    the_querys = read_back(serde, 0, item.inputs[0])
    outcome = ReplayResult(outputs={"a": [the_querys]}, sinks={"a": serde})
    outputs, sinks = written_topics(item, outcome, {"a"}, planned.inserts, {"a"})
    assert [(r.key, r.value) for r in outputs["a"]] == [("i1", {"M": 1}), ("x", {"M": 5}), ("x", {"M": 5})]
    assert outputs["a"][-1] is the_querys and sinks["a"] is serde
