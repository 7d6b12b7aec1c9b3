"""Match ``expectedException`` against qtt's errors.

ksqlDB names Java exception classes; each maps to the qtt error class with the same
meaning. A case may also name a qtt class directly (``"qtt.errors.StatementError"``).
The expected message must be contained in the error's text, as in ksqlDB, or in its message
as ksqlDB prefixes an error it locates (``Line: 3, Col: 70: ...``, the position in the case's
statements joined by newlines, which is the script ksqlDB runs). A query that stops at run time
(:class:`~qtt.errors.QueryStoppedError`, Kafka Streams' ``StreamsException``) also matches the
expected ``cause`` (the ksqlDB class) and ``causeMessage``.
"""

from __future__ import annotations

import re

from qtt import errors
from qtt.harness.cases.model import ExpectedException

#: ksqlDB exception class -> qtt error class. Subclasses match, as Java's instanceof does.
KSQL_EXCEPTIONS: dict[str, type[errors.QttError]] = {
    "io.confluent.ksql.util.KsqlException": errors.SqlError,
    "io.confluent.ksql.util.KsqlStatementException": errors.StatementError,
    "io.confluent.ksql.parser.exception.ParseFailedException": errors.SqlSyntaxError,
    "io.confluent.ksql.parser.ParsingException": errors.SqlSyntaxError,
    "io.confluent.ksql.function.KsqlFunctionException": errors.StatementError,
    "io.confluent.ksql.util.KsqlServerException": errors.SqlError,
    "java.lang.AssertionError": errors.AssertionFailedError,
    "org.apache.kafka.streams.errors.StreamsException": errors.QueryStoppedError,
}


def at_run_time(expected: ExpectedException) -> bool:
    """Whether the expected exception can be a query's stop at run time (Kafka Streams'
    ``StreamsException``, or an exception of no named type): a case whose statements all plan
    then replays, and passes if its query stops as expected."""
    cls = expected_class(expected.type)
    return cls is not None and issubclass(errors.QueryStoppedError, cls)


def described(expected: ExpectedException) -> str:
    """The expectation in words: its type, message and cause."""
    text = expected.type or "an exception"
    if expected.message:
        text += f" containing {expected.message!r}"
    if expected.cause or expected.cause_message:
        text += f", caused by {expected.cause or 'an exception'}"
        if expected.cause_message:
            text += f" containing {expected.cause_message!r}"
    return text


def expected_class(name: str | None) -> type[errors.QttError] | None:
    """The qtt class for a type named in a case file, or None when qtt has no equivalent."""
    if name is None:
        return errors.QttError
    if name in KSQL_EXCEPTIONS:
        return KSQL_EXCEPTIONS[name]
    short = name.removeprefix("qtt.errors.")
    found = getattr(errors, short, None)
    if isinstance(found, type) and issubclass(found, errors.QttError):
        return found
    return None


_STATEMENT_PATH = re.compile(r"\.statements\[(\d+)\]$")


def not_the_last_statement(error: errors.QttError, statements: int) -> str | None:
    """Why a negative case fails whatever it expects, when a statement before its last fails to
    plan; None otherwise.

    ksqlDB's runner (``TestExecutorUtil.execute``) fails a case with an ``expectedException``
    when a ``KsqlStatementException`` (qtt's :class:`~qtt.errors.StatementError`) comes from a
    statement that is not the last; a syntax error is raised as the script is parsed, before
    that check, and a plain ``KsqlException`` is not checked.
    """
    found = _STATEMENT_PATH.search(error.path or "") if isinstance(error, errors.StatementError) else None
    if found is None or int(found[1]) >= statements - 1:
        return None
    first_line = error.message.splitlines()[0] if error.message else ""
    return (
        "Only the last statement in a negative test should fail. "
        f"Yet in this case statement {int(found[1]) + 1} failed: {first_line}"
    )


def mismatch(expected: ExpectedException, error: errors.QttError) -> str | None:
    """None if ``error`` is what the case expects; otherwise why it is not."""
    cls = expected_class(expected.type)
    if cls is None:
        return f"expected exception type {expected.type} has no qtt equivalent"
    if not isinstance(error, cls):
        return (
            f"expected {expected.type} ({cls.__name__}) but got {type(error).__name__}: {error.message.splitlines()[0]}"
        )
    texts = [str(error), error.message]
    if isinstance(error, errors.SqlError):
        texts += error.ksql_texts()
    if expected.message and all(expected.message not in text for text in texts):
        # a syntax error prints a readable form of its own; show ksqlDB's text, which was matched
        got = error.message if isinstance(error, errors.SqlSyntaxError) else str(error)
        return f"expected a message containing {expected.message!r} but got {got!r}"
    if isinstance(error, errors.QueryStoppedError):
        return _cause_mismatch(expected, error)
    return None


def _cause_mismatch(expected: ExpectedException, error: errors.QueryStoppedError) -> str | None:
    """None if the stop's cause is the one expected (``cause``, ``causeMessage``)."""
    if expected.cause and expected.cause != error.cause:
        return f"expected a stop caused by {expected.cause} but it was caused by {error.cause}: {error.cause_message}"
    if expected.cause_message and expected.cause_message not in (error.cause_message or ""):
        return f"expected a cause containing {expected.cause_message!r} but got {error.cause_message!r}"
    return None
