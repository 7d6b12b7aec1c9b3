"""ksqlDB's magic timestamps: partial timestamp texts as epoch millis, and where they apply."""

from __future__ import annotations

import pytest

from qtt.errors import StatementError
from qtt.plan.analysis.pseudo_timestamps import timestamp_millis


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
    ],
)
def test_full_and_partial_texts_read_as_ksqldb_reads_them(text: str, millis: int) -> None:
    assert timestamp_millis(text) == millis


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("soon", "Failed to parse timestamp 'soon': Text 'soon-01-01T00:00:00.000' could not be parsed"),
        ("2024-13-01", "Failed to parse timestamp '2024-13-01'"),
        # ksqlDB completes the time before it splits off the offset: '-05' becomes '-050'
        ("2024-03-01T04:00:00-05", "Failed to parse timezone '-050'"),
    ],
)
def test_a_text_that_is_no_timestamp_is_refused_with_ksqldbs_message(text: str, message: str) -> None:
    with pytest.raises(StatementError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        timestamp_millis(text)
