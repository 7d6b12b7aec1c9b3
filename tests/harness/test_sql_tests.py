"""Loading SQL test files: tests, directives, positions and the errors a bad file gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from qtt.errors import CaseFileError
from qtt.harness.sqltests.files import discover_sql, load_sql_tests

TWO_TESTS = """-- a header comment
--@test: first one
CREATE STREAM s (id INT KEY, v INT) WITH (kafka_topic='s', value_format='JSON');

--@test: second one
--@expected.error: java.lang.AssertionError
--@expected.message: Expected record does not match actual
CREATE STREAM s (id INT KEY, v INT) WITH (kafka_topic='s', value_format='JSON');
ASSERT VALUES s (id) VALUES (1);
"""


def _file(tmp_path: Path, text: str, name: str = "t.sql") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_each_test_gets_its_name_expectations_and_only_its_own_statements(tmp_path: Path) -> None:
    first, second = load_sql_tests(_file(tmp_path, TWO_TESTS))
    assert (first.name, first.index, first.line) == ("first one", 0, 2)
    assert first.expected_error is None and first.expected_message is None
    assert "ASSERT" not in first.script
    assert second.expected_error == "java.lang.AssertionError"
    assert second.expected_message == "Expected record does not match actual"
    assert "CREATE STREAM" not in second.script.splitlines()[2]


def test_a_statement_keeps_its_line_in_the_file(tmp_path: Path) -> None:
    second = load_sql_tests(_file(tmp_path, TWO_TESTS))[1]
    lines = second.script.splitlines()
    assert lines[8].startswith("ASSERT VALUES")  # line 9 of the file
    assert all(not line for line in lines[:7])


def test_a_test_without_statements_says_so(tmp_path: Path) -> None:
    empty, full = load_sql_tests(_file(tmp_path, "--@test: empty\n-- only a comment\n--@test: full\nSET 'a'='b';\n"))
    assert not empty.has_statements
    assert full.has_statements


def test_a_directive_name_is_read_in_any_case_as_ksqldb_reads_it(tmp_path: Path) -> None:
    (test,) = load_sql_tests(_file(tmp_path, "--@TEST: a\n--@Expected.Error: x.Y\n--@EXPECTED.message: z\n"))
    assert (test.name, test.expected_error, test.expected_message) == ("a", "x.Y", "z")


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("--@test: a\n--@expcted.error: x\n", 2, "unknown directive '--@expcted.error:'"),
        (
            "CREATE STREAM s (id INT KEY) WITH (kafka_topic='s', value_format='JSON');\n--@test: a\n",
            1,
            "before the first test",
        ),
        ("--@expected.message: x\n--@test: a\n", 1, "before the first '--@test:'"),
    ],
)
def test_a_bad_file_is_refused_with_its_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    with pytest.raises(CaseFileError) as raised:
        load_sql_tests(_file(tmp_path, text))
    assert raised.value.line == line
    assert words in raised.value.message
    assert raised.value.file is not None and raised.value.file.endswith("t.sql")


def test_sql_files_are_found_in_folders_and_by_name(tmp_path: Path) -> None:
    nested = tmp_path / "deep"
    nested.mkdir()
    one = _file(nested, "--@test: a\n", "one.sql")
    two = _file(tmp_path, "--@test: b\n", "two.sql")
    _file(tmp_path, "{}", "cases.json")
    assert discover_sql([tmp_path]) == [one, two]
    assert discover_sql([two, tmp_path / "cases.json"]) == [two]
