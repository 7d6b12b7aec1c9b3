"""Which failures are the machine's: Spark's messages, matched in one place."""

from __future__ import annotations

import pytest

from qtt.errors import ReplayError, SqlError
from qtt.runtime.spark import infrastructure


@pytest.mark.parametrize(
    "text",
    [
        "org.apache.spark.SparkException: Python worker failed to connect back.",
        "java.net.SocketTimeoutException: Timed out while waiting for the Python worker to connect back",
        "Python worker exited unexpectedly (crashed)",
        "java.net.ConnectException: Connection refused",
        "java.net.SocketException: Connection reset",
        "py4j.protocol.Py4JNetworkError: Answer from Java side is empty",
        "[CANNOT_OPEN_SOCKET] Can not open socket: tried to connect to 1234",
        "Python daemon failed to launch worker.",
    ],
)
def test_sparks_infrastructure_messages_match(text: str) -> None:
    assert infrastructure.matches(text)


@pytest.mark.parametrize(
    "text",
    [
        "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column with name `X` cannot be resolved",
        "outputs differ on OUT",
        "[DIVIDE_BY_ZERO] Division by zero",
    ],
)
def test_verdicts_do_not_match(text: str) -> None:
    assert not infrastructure.matches(text)


def test_the_chain_of_causes_is_searched_and_the_reason_is_sparks_line() -> None:
    spark = RuntimeError(
        "[STREAM_FAILED] Query terminated\norg.apache.spark.SparkException: Python worker failed to connect back."
    )
    try:
        raise ReplayError("streaming query failed: [STREAM_FAILED] Query terminated") from spark
    except ReplayError as e:
        assert infrastructure.is_infrastructure(e)
        assert infrastructure.reason(spark) == "org.apache.spark.SparkException: Python worker failed to connect back."
    assert not infrastructure.is_infrastructure(SqlError("mismatched input"))
    assert len(infrastructure.reason(RuntimeError("timed out " + "x" * 1000))) == 400


def test_a_py4j_error_is_told_by_what_the_jvm_said() -> None:
    from qtt.runtime.spark.infrastructure import java_reason

    class Py4JLike(Exception):
        java_exception = "org.apache.spark.SparkException: [CANNOT_LOAD_STATE_STORE] no 3.changelog\n\tat x"

    said = java_reason(Py4JLike("An error occurred while calling o606.collectToPython."))
    assert said == "org.apache.spark.SparkException: [CANNOT_LOAD_STATE_STORE] no 3.changelog"
    assert java_reason(ValueError("plain\nmore")) == "plain"
