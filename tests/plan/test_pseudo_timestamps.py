"""ksqlDB's magic timestamps: partial timestamp texts as epoch millis, and where they apply."""

from __future__ import annotations

import re

import pytest

from qtt.errors import StatementError
from qtt.plan.analysis.pseudo_timestamps import lambda_parameters, rewritten, timestamp_millis
from qtt.sql import ast


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        ("1970-01-01T00:00:00.001", 1),
        ("1969-12-31T23:59:59.999", -1),
        ("2024", 1704067200000),
        ("2024-03", 1709251200000),
        ("2024-03-01", 1709251200000),
        ("2024-03-01T09", 1709283600000),
        ("2024-03-01T09:30", 1709285400000),
        ("2024-03-01T10:00:00.000+0100", 1709283600000),
        ("2024-03-01T10:00:00.000+01:00", 1709283600000),
        ("2024-03-01T04:00:00.000-0500", 1709283600000),
        # the SMART resolver: a day past the month's end is its last day, 24:00 the next midnight
        ("2023-02-30", 1677542400000),
        ("2024-02-31T09", 1709197200000),
        ("2024-04-31", 1714435200000),
        ("2024-03-01T24", 1709337600000),
        ("2024-03-01T10:00:00.000+5", 1709269200000),
        # the offset is what follows the first sign, before the time is completed; a trailing Z
        # is dropped
        ("2024-03-01T04:00:00-05", 1709283600000),
        ("2024-03-01T09:30Z", 1709285400000),
    ],
)
def test_full_and_partial_texts_read_as_ksqldb_reads_them(text: str, millis: int) -> None:
    assert timestamp_millis(text) == millis


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("soon", "Failed to parse timestamp 'soon': Text 'soon-01-01T00:00:00.000' could not be parsed"),
        ("2024-13-01", "Failed to parse timestamp '2024-13-01'"),
        # the offset's error is inside the timestamp's (PartialStringToTimestampParser catches both)
        (
            "2024-03-01T04:00:00+5:00",
            "Failed to parse timestamp '2024-03-01T04:00:00+5:00': Failed to parse timezone '+5:00': "
            "Invalid ID for ZoneOffset, non numeric characters found: +5:00",
        ),
        # java.time's messages: where the text stops matching, or the field out of range
        (
            "2024-3-01",
            "Failed to parse timestamp '2024-3-01': Text '2024-3-01T00:00:00.000' could not be parsed at index 5",
        ),
        (
            "2024-03-01T09:30:00.0001",
            "Failed to parse timestamp '2024-03-01T09:30:00.0001': Text '2024-03-01T09:30:00.0001' could not be "
            "parsed, unparsed text found at index 23",
        ),
        (
            "2024-03-32",
            "Failed to parse timestamp '2024-03-32': Text '2024-03-32T00:00:00.000' could not be parsed: "
            "Invalid value for DayOfMonth (valid values 1 - 28/31): 32",
        ),
        (
            "2024-03-01T24:30",
            "Failed to parse timestamp '2024-03-01T24:30': Text '2024-03-01T24:30:00.000' could not be parsed: "
            "Invalid value for HourOfDay (valid values 0 - 23): 24",
        ),
        # ZoneOffset.of's ranges and layouts
        (
            "2024-03-01T09:30:00.000+05:75",
            "Failed to parse timestamp '2024-03-01T09:30:00.000+05:75': Failed to parse timezone '+05:75': "
            "Zone offset minutes not in valid range: value 75 is not in the range -59 to 59",
        ),
        (
            "2024-03-01T09:30:00.000-18:30",
            "Failed to parse timestamp '2024-03-01T09:30:00.000-18:30': Failed to parse timezone '-18:30': "
            "Zone offset not in valid range: -18:00 to +18:00",
        ),
        (
            "2024-03-01T09:30:00.000+0530:00",
            "Failed to parse timestamp '2024-03-01T09:30:00.000+0530:00': Failed to parse timezone '+0530:00': "
            "Invalid ID for ZoneOffset, invalid format: +0530:00",
        ),
    ],
)
def test_a_text_that_is_no_timestamp_is_refused_with_ksqldbs_message(text: str, message: str) -> None:
    with pytest.raises(StatementError, match="^" + re.escape(message)):
        timestamp_millis(text)


def test_a_lambda_parameter_named_like_a_pseudo_column_is_left_alone() -> None:
    """ksqlDB's rewriter rewrites column references only; a lambda variable is none."""
    text = ast.StringLiteral(value="2024-03")
    bare = ast.Comparison(op=">", left=ast.ColumnRef(name="ROWTIME"), right=text)
    qualified = ast.Comparison(op=">", left=ast.ColumnRef(name="ROWTIME", source="S"), right=text)
    with lambda_parameters(("ROWTIME",)):
        assert rewritten(bare) == bare
        assert rewritten(qualified) != qualified
    assert rewritten(bare) == ast.Comparison(op=">", left=bare.left, right=ast.IntegerLiteral(value=1709251200000))
