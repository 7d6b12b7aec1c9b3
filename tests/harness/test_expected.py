"""expectedException: ksqlDB exception names map to qtt errors; messages match as substrings."""

from __future__ import annotations

import pytest

from qtt import errors
from qtt.harness.cases.expected import KSQL_EXCEPTIONS, expected_class, mismatch
from qtt.harness.cases.model import ExpectedException


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("io.confluent.ksql.util.KsqlException", errors.SqlError),
        ("io.confluent.ksql.util.KsqlStatementException", errors.StatementError),
        ("io.confluent.ksql.parser.exception.ParseFailedException", errors.SqlSyntaxError),
        ("io.confluent.ksql.parser.ParsingException", errors.SqlSyntaxError),
        ("qtt.errors.StatementError", errors.StatementError),
        ("SerdeError", errors.SerdeError),
        (None, errors.QttError),
        ("org.apache.kafka.streams.errors.StreamsException", None),
        ("qtt.errors.did_you_mean", None),
    ],
)
def test_exception_names_map_to_qtt_classes(name, cls):
    assert expected_class(name) is cls


def test_every_mapped_class_is_a_sql_error_or_a_failed_assertion():
    # a case that expects a ksqlDB exception must never pass on a harness or replay failure
    allowed = (errors.SqlError, errors.AssertionFailedError)
    assert all(issubclass(cls, allowed) for cls in KSQL_EXCEPTIONS.values())
    assert not issubclass(errors.ReplayError, allowed) and not issubclass(errors.InfrastructureError, allowed)


def test_subclasses_match_as_java_instanceof_does():
    expected = ExpectedException(type="io.confluent.ksql.util.KsqlException")
    assert mismatch(expected, errors.StatementError("boom")) is None
    assert mismatch(expected, errors.SqlSyntaxError("boom")) is None


def test_a_more_specific_expected_type_does_not_match_its_parent():
    expected = ExpectedException(type="io.confluent.ksql.util.KsqlStatementException")
    why = mismatch(expected, errors.SqlError("Source X does not exist."))
    assert why is not None
    assert "(StatementError) but got SqlError: Source X does not exist." in why


def test_a_different_error_family_does_not_match():
    expected = ExpectedException(type="io.confluent.ksql.util.KsqlException")
    assert mismatch(expected, errors.SerdeError("bad bytes")) is not None


@pytest.mark.parametrize(
    ("message", "ok"),
    [
        (None, True),
        ("", True),
        ("SELECT column 'BOB' cannot be resolved.", True),
        ("column 'BOB'", True),
        ("select column 'bob' cannot be resolved.", False),  # case sensitive, as in ksqlDB
        ("SELECT column 'ALICE' cannot be resolved.", False),
    ],
)
def test_messages_match_as_substrings(message, ok):
    expected = ExpectedException(type="io.confluent.ksql.util.KsqlStatementException", message=message)
    error = errors.StatementError("SELECT column 'BOB' cannot be resolved.")
    assert (mismatch(expected, error) is None) is ok


def test_the_message_may_include_the_location_prefix():
    error = errors.SqlSyntaxError("Syntax Error\nExpecting ')'", line=1, column=40)
    expected = ExpectedException(
        type="io.confluent.ksql.parser.exception.ParseFailedException",
        message="line 1:40: Syntax Error",
    )
    assert mismatch(expected, error) is None


def test_a_mismatch_says_what_was_expected_and_what_came():
    expected = ExpectedException(type="io.confluent.ksql.util.KsqlStatementException", message="nope")
    why = mismatch(expected, errors.StatementError("something else"))
    assert why == "expected a message containing 'nope' but got 'something else'"


def test_a_syntax_error_mismatch_shows_ksqldbs_text_that_was_matched_not_the_printed_one():
    error = errors.SqlSyntaxError(
        "line 3:6: Syntax Error\nExpecting {'('}",
        line=3,
        column=6,
        detail="Syntax Error: unexpected 'FROM'; expecting {'('}",
        snippet=" v + FROM s;\n     ^^^^",
    )
    error.at(path="$.tests[0].statements[1]")
    expected = ExpectedException(type="io.confluent.ksql.parser.exception.ParseFailedException", message="nope")
    why = mismatch(expected, error)
    assert why == "expected a message containing 'nope' but got \"line 3:6: Syntax Error\\nExpecting {'('}\""
