"""Every exception qtt raises. All derive from :class:`QttError`.

Each error carries structured location fields so that the CLI, the pytest plugin and
the JSON report can say *where* something went wrong without parsing messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from difflib import get_close_matches
from typing import Any


class QttError(Exception):
    """Base class of every qtt error.

    Args:
        message: what was wrong, what was seen and what was expected.
        file: the file the problem is in, if any.
        case: the case name, if the problem belongs to one case.
        path: a JSON path inside ``file`` (``$.tests[3].inputs[0].key``).
        line: 1-based line, for SQL or JSON text (for a SQL error located in a case file: the
            line of the statement in that file).
        column: 1-based column, for SQL or JSON text.
        hint: one suggestion that fixes the problem.
        statement_line: for a SQL error located in a case file, the 1-based line inside the
            statement (``path`` names the statement).
        statement_column: likewise, the 1-based column inside the statement.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        case: str | None = None,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
        statement_line: int | None = None,
        statement_column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.case = case
        self.path = path
        self.line = line
        self.column = column
        self.hint = hint
        self.statement_line = statement_line
        self.statement_column = statement_column

    def location(self, *, innermost: bool = True, file_and_case: bool = True) -> str:
        """Where the error is, as ``file: case 'x': $.path: line L:C: statement line L:C``, or ``""``.

        ``innermost=False`` leaves out the last line:column, for a message that starts with it;
        ``file_and_case=False`` the file and the case, for a line that already names them.
        """
        parts = []
        if self.file and file_and_case:
            parts.append(self.file)
        if self.case and file_and_case:
            parts.append(f"case {self.case!r}")
        if self.path:
            parts.append(self.path)
        if self.line is not None:
            parts.append(f"line {self.line}:{self.column}" if self.column else f"line {self.line}")
        if self.statement_line is not None:
            inside = (
                f"{self.statement_line}:{self.statement_column}" if self.statement_column else f"{self.statement_line}"
            )
            parts.append(f"statement line {inside}")
        if not innermost and (self.line is not None or self.statement_line is not None):
            parts.pop()
        return ": ".join(parts)

    def _innermost_position(self) -> str | None:
        line, column = (
            (self.statement_line, self.statement_column)
            if self.statement_line is not None
            else (self.line, self.column)
        )
        return None if line is None or not column else f"line {line}:{column}:"

    def shown_message(self) -> str:
        """The message as qtt prints it after the error's location (:attr:`message` by default)."""
        return self.message

    def describe(self, *, file_and_case: bool = True, hint: bool = True) -> str:
        """The location, then the message, then the hint: ``str(error)``.

        ``file_and_case=False`` leaves the file and the case out (for a line that names them),
        ``hint=False`` the hint (for a report that gives its own).
        """
        message = self.shown_message()
        # ksqlDB's syntax errors start with their own "line L:C:"; say it once.
        position = self._innermost_position()
        innermost = not (position and message.startswith(position))
        where = self.location(innermost=innermost, file_and_case=file_and_case)
        text = f"{where}: {message}" if where else message
        if self.hint and hint:
            text += f"\nhint: {self.hint}"
        return text

    def __str__(self) -> str:
        return self.describe()

    def at(self, **fields: object) -> QttError:
        """Fill in location fields that are still unknown, and return self."""
        for name, value in fields.items():
            if getattr(self, name, None) is None:
                setattr(self, name, value)
        return self


class UsageError(QttError):
    """A command's arguments or files do not make sense together (a command prints it and exits 2)."""


class CaseFileError(QttError):
    """A case file is not valid JSON or does not follow the case-file schema."""


class PlanFileError(QttError):
    """A persisted ``plan.json``, ``spec.json`` or ``topology`` cannot be read."""


class CorruptGoldenError(PlanFileError):
    """A stored golden is damaged: a historical folder's files differ from the ledger, or its
    stored checkpoint cannot be read or does not fit its manifest. Not the runtime's fault."""


class SqlError(QttError):
    """A statement cannot be executed. ksqlDB's ``KsqlException``."""

    #: line and column in the case's statements joined by newlines, the script ksqlDB runs, for
    #: its messages' own prefix (``Line: 3, Col: 70: ...``); set when the error is located
    script_position: tuple[int, int] | None = None

    #: the persistent query's statement as ksqlDB prints it after sanitizing it, which ksqlDB
    #: ends the message with (``Statement: ...``); set when the error is a query statement's
    ksql_statement: str | None = None

    def ksql_text(self) -> str | None:
        """The message as ksqlDB prefixes an error it locates in the script, or None."""
        if self.script_position is None:
            return None
        line, column = self.script_position
        return f"Line: {line}, Col: {column}: {self.message}"

    def ksql_texts(self) -> list[str]:
        """The message in the forms ksqlDB gives it: located in the script, and followed by
        the statement (``Statement: ...``)."""
        texts = [text] if (text := self.ksql_text()) is not None else []
        if self.ksql_statement is not None:
            texts.append(f"{self.message}\nStatement: {self.ksql_statement}")
        return texts


class SqlSyntaxError(SqlError):
    """A statement does not parse. ksqlDB's ``ParseFailedException``.

    :attr:`message` is ksqlDB's text, with ksqlDB's positions (in the case's statements joined by
    newlines): what a case's ``expectedException`` matches. qtt prints :attr:`detail` instead when
    there is one: the offending token and what was expected, with no position of its own (the
    error's location is the one position), then :attr:`snippet`, the line with a caret under the
    mistake.
    """

    def __init__(
        self,
        message: str,
        *,
        detail: str | None = None,
        snippet: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, line=line, column=column, hint=hint)
        self.detail = detail
        self.snippet = snippet

    def shown_message(self) -> str:
        """:attr:`detail` (or the message without its leading ``line L:C:``, once located), and the snippet."""
        text = self.detail
        if text is None:
            located = self.line is not None or self.statement_line is not None
            text = _LEADING_POSITION.sub("", self.message, count=1) if located else self.message
        return f"{text}\n{self.snippet}" if self.snippet else text


_LEADING_POSITION = re.compile(r"^line \d+:\d+: ")


class StatementError(SqlError):
    """A statement parses but is invalid. ksqlDB's ``KsqlStatementException``."""


class UnknownColumnError(StatementError):
    """A column reference no source resolves (ksqlDB's ``UnknownColumnException``);
    :attr:`shown` is the reference as written."""

    def __init__(self, message: str, *, shown: str, **location: object) -> None:
        super().__init__(message, **location)  # type: ignore[arg-type]
        self.shown = shown


class ConfigError(SqlError):
    """A setting (a case's ``properties``) has a value its type cannot read: Kafka's
    ``ConfigException``, which makes a ksqlDB test invalid as its runner builds it."""


class UnsupportedFeatureError(SqlError):
    """The statement uses a feature that qtt does not support yet.

    The harness reports such a case as skipped, with :attr:`feature` as the reason.
    """

    def __init__(self, feature: str, **location: object) -> None:
        super().__init__(f"unsupported feature: {feature}", **location)  # type: ignore[arg-type]
        self.feature = feature


class SerdeError(QttError):
    """Bytes do not match their declared format, or a value cannot be serialized."""


class RuntimeBuildError(QttError):
    """A plan cannot be built into a Spark query."""


class ReplayError(QttError):
    """A Spark query failed while a case was replayed."""


class TimeLimitReached(ReplayError):
    """A streaming query did not end within the replay's time limit and was stopped
    (:mod:`qtt.runtime.spark.time_limit`). ``partial``: what its sink had collected by then."""

    def __init__(self, seconds: float, partial: list[Any] | None = None) -> None:
        super().__init__(f"the streaming query did not end within its time limit of {seconds:g} s and was stopped")
        self.seconds = seconds
        self.partial = partial or []


class LineGapError(ReplayError, UnsupportedFeatureError):
    """A query failed on an older Spark line for a feature that only a later line has
    (:data:`qtt.runtime.spark.lines.GAPS`): a skip naming the feature and the line, not a
    failure of the plan. A :class:`ReplayError` still, so the rest of its group runs again apart."""


class QueryStoppedError(ReplayError):
    """A query stopped at run time on a record, as ksqlDB's query stops on an exception that its
    processing log does not take (Kafka Streams' ``StreamsException``): a decimal ``SUM`` that
    overflows, a timestamp that cannot be extracted under ``ksql.timestamp.throw.on.invalid``.
    A verdict on the plan and its inputs, not a fault of qtt's: a case may expect it.

    :attr:`message` is Kafka Streams' text; ``cause`` names the exception that stopped it (the
    ksqlDB class a case's ``expectedException.cause`` names), ``cause_message`` its text.
    """

    def __init__(
        self, message: str, *, cause: str | None = None, cause_message: str | None = None, owner: str = ""
    ) -> None:
        super().__init__(f"{message}: {cause_message}" if cause_message else message)
        self.stream_message = message
        self.cause = cause
        self.cause_message = cause_message
        #: which query of a shared streaming query stopped (the label its builder gave it), if known
        self.owner = owner

    @classmethod
    def found_in(cls, text: str) -> QueryStoppedError | None:
        """The error a :class:`QueryStops` raised in a running query left in Spark's ``text``
        (its exception's message, with the Python traceback in it), or None."""
        at = text.find(QueryStops.SIGNAL)
        if at < 0:
            return None
        try:
            fields, _ = json.JSONDecoder().raw_decode(text, at + len(QueryStops.SIGNAL))
        except ValueError:
            return None
        if not isinstance(fields, dict):
            return None
        return cls(
            str(fields.get("message", "")),
            cause=fields.get("cause"),
            cause_message=fields.get("causeMessage"),
            owner=str(fields.get("owner", "")),
        )


class QueryStops(Exception):
    """Raised inside a running query's operator to stop the query (:class:`QueryStoppedError`).

    It crosses Spark as text: its message is :attr:`SIGNAL` and one line of JSON, which the
    executor finds in the exception Spark reports for the query.
    """

    SIGNAL = "qtt-query-stops:"

    def __init__(
        self, cause: str, cause_message: str, message: str = "Exception caught in process", owner: str = ""
    ) -> None:
        self.fields = {"message": message, "cause": cause, "causeMessage": cause_message, "owner": owner}
        super().__init__(self.SIGNAL + json.dumps(self.fields))

    def of(self, owner: str) -> QueryStops:
        """The same stop, raised by the query ``owner`` (the label its builder gave it)."""
        fields = self.fields
        return QueryStops(fields["cause"], fields["causeMessage"], fields["message"], owner)


class AssertionFailedError(QttError):
    """A test statement's assertion does not hold (``ASSERT VALUES`` ...). Java's ``AssertionError``."""


class InfrastructureError(QttError):
    """Spark or the machine could not run a replay (a Python worker did not connect back, the
    JVM died, a timeout expired). Not a verdict on the plan or the case: the harness retries,
    then reports it apart from failures, with Spark's reason.
    """


class SnapshotError(QttError):
    """``qtt snapshot`` cannot persist a plan."""


def raise_interrupt_behind(error: BaseException) -> None:
    """Raise the interrupt that ``error`` was raised while handling, if any: Ctrl-C, SIGTERM or
    another exception that is no :class:`Exception`, anywhere in its chain of causes.

    A Spark call cut off by a signal leaves its connection mid-answer, so the cleanup that runs
    while the interrupt unwinds can fail with an error of its own, which replaces the interrupt.
    Code that turns errors into verdicts or retries calls this first, so that an interrupted
    run still ends as one.
    """
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if not isinstance(current, Exception):
            raise current
        pending += [link for link in (current.__cause__, current.__context__) if link is not None]


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``" Did you mean 'x'?"`` for the closest choice, or ``""``."""
    matches = get_close_matches(name, list(choices), n=1)
    return f" Did you mean {matches[0]!r}?" if matches else ""
