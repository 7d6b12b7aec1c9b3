"""expectedException: ksqlDB exception names map to qtt errors; messages match as substrings."""

from __future__ import annotations

import pytest

from qtt import errors
from qtt.harness.cases import expected as expected_
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
        ("org.apache.kafka.streams.errors.StreamsException", errors.QueryStoppedError),
        ("org.apache.kafka.streams.errors.TopologyException", None),
        ("qtt.errors.did_you_mean", None),
    ],
)
def test_exception_names_map_to_qtt_classes(name, cls):
    assert expected_class(name) is cls


def test_every_mapped_class_is_a_sql_error_a_failed_assertion_or_a_stopped_query():
    # a case that expects a ksqlDB exception must never pass on a harness or replay failure
    allowed = (errors.SqlError, errors.AssertionFailedError, errors.QueryStoppedError)
    assert all(issubclass(cls, allowed) for cls in KSQL_EXCEPTIONS.values())
    for failure in (errors.ReplayError, errors.InfrastructureError, errors.RuntimeBuildError, errors.TimeLimitReached):
        assert not issubclass(failure, allowed)


@pytest.mark.parametrize(
    ("type_", "at_run_time"),
    [
        ("org.apache.kafka.streams.errors.StreamsException", True),
        (None, True),  # an exception of no named type may be a stop at run time too
        ("qtt.errors.ReplayError", True),
        ("io.confluent.ksql.util.KsqlException", False),
        ("io.confluent.ksql.util.KsqlStatementException", False),
        ("org.apache.kafka.streams.errors.TopologyException", False),
    ],
)
def test_which_expectations_a_stopped_query_can_meet(type_, at_run_time):
    assert expected_.at_run_time(ExpectedException(type=type_)) is at_run_time


def _stop(cause_message: str = "Numeric field overflow: Got 10.5") -> errors.QueryStoppedError:
    stops = errors.QueryStops("io.confluent.ksql.function.KsqlFunctionException", cause_message, owner="j3.")
    found = errors.QueryStoppedError.found_in(f"[STREAM_FAILED] ... Traceback ...\nqtt.errors.QueryStops: {stops}\n")
    assert found is not None
    return found


def test_a_stop_crosses_spark_as_text_with_its_cause_and_query():
    stop = _stop()
    assert (stop.stream_message, stop.cause, stop.owner) == (
        "Exception caught in process",
        "io.confluent.ksql.function.KsqlFunctionException",
        "j3.",
    )
    assert stop.message == "Exception caught in process: Numeric field overflow: Got 10.5"
    assert errors.QueryStoppedError.found_in("[STREAM_FAILED] a Python worker crashed") is None
    assert errors.QueryStoppedError.found_in(f"{errors.QueryStops.SIGNAL} not json") is None


@pytest.mark.parametrize(
    ("cause", "cause_message", "why"),
    [
        ("io.confluent.ksql.function.KsqlFunctionException", "Numeric field overflow", None),
        (None, "field overflow", None),
        (None, None, None),
        (
            "io.confluent.ksql.util.KsqlException",
            None,
            "expected a stop caused by io.confluent.ksql.util.KsqlException but it was caused by "
            "io.confluent.ksql.function.KsqlFunctionException: Numeric field overflow: Got 10.5",
        ),
        (
            None,
            "Division by zero",
            "expected a cause containing 'Division by zero' but got 'Numeric field overflow: Got 10.5'",
        ),
    ],
)
def test_a_stop_matches_its_expected_cause(cause, cause_message, why):
    expected = ExpectedException(
        type="org.apache.kafka.streams.errors.StreamsException",
        message="Exception caught in process",
        cause=cause,
        cause_message=cause_message,
    )
    assert mismatch(expected, _stop()) == why


def test_a_stop_is_no_statement_error():
    expected = ExpectedException(type="io.confluent.ksql.util.KsqlException")
    assert mismatch(expected, _stop()) is not None


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


def _at(error: errors.QttError, position: int) -> errors.QttError:
    error.path = f"$.tests[0].statements[{position}]"
    return error


def test_a_negative_case_fails_when_a_statement_before_its_last_fails():
    # ksqlDB's TestExecutorUtil.execute: a KsqlStatementException from a statement that is not
    # the last fails a case with an expectedException, whatever it expects
    early = _at(errors.StatementError("Source `X` does not exist."), 0)
    why = expected_.not_the_last_statement(early, 2)
    assert why == (
        "Only the last statement in a negative test should fail. "
        "Yet in this case statement 1 failed: Source `X` does not exist."
    )
    assert expected_.not_the_last_statement(_at(errors.StatementError("bad"), 1), 2) is None


@pytest.mark.parametrize(
    "error",
    [
        errors.SqlSyntaxError("line 1:5: Syntax Error"),  # raised as the whole script parses
        errors.SqlError("Cannot insert values into windowed stream/table!"),  # a KsqlException
    ],
)
def test_only_statement_errors_must_come_from_the_last_statement(error):
    assert expected_.not_the_last_statement(_at(error, 0), 3) is None
