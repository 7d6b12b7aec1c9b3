"""The case-file model: ksqlDB's QTT test-file format, loaded strictly.

Field names follow ksqlDB's JSON (camelCase in files, snake_case here). Free-text
annotation keys (see :data:`ANNOTATION_KEYS`) are kept but never interpreted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Keys ksqlDB's files use for free text; accepted at any level and otherwise ignored.
ANNOTATION_KEYS = frozenset(["comment", "comments", "description", "note", "notes", "issues", "tracked by"])

#: qtt's own extension keys (names ksqlDB does not use); documented in docs/reference/case-files.md.
QTT_BATCH_KEY = "qttBatch"
QTT_RESTORE_POINT_KEY = "qttRestorePoint"
QTT_PROCESSING_LOG_KEY = "qttProcessingLog"


@dataclass(frozen=True, kw_only=True)
class Window:
    """The window of a windowed key."""

    start: int
    end: int
    type: str


@dataclass(frozen=True, kw_only=True)
class Header:
    KEY: str
    VALUE: str | None = None


@dataclass(frozen=True, kw_only=True)
class Record:
    """One input or expected output record.

    ``key`` and ``value`` hold the JSON exactly as written (fractions as Decimal). A key
    that the file leaves out is null. ``qtt_batch`` (JSON ``qttBatch``), a qtt extension,
    starts a new micro-batch at this input record; ``qtt_restore_point`` (JSON
    ``qttRestorePoint``) makes it the first input after a stored checkpoint's restore point.

    ``line`` is where an expected output record is written in its case file (1-based), for
    reports; None when not known (a record made in code). It is no part of the record: not a
    JSON field, not compared, and set only by the loader (:func:`at_line`).
    """

    topic: str
    value: Any
    key: Any = None
    timestamp: int | None = None
    window: Window | None = None
    headers: tuple[Header, ...] | None = None
    qtt_batch: bool = False
    qtt_restore_point: bool = False
    line: int | None = field(default=None, init=False, compare=False, repr=False)


def at_line(record: Record, line: int | None) -> Record:
    """``record``, noted as written at ``line`` of its case file (see :attr:`Record.line`).

    Sets the field on the record as loaded, before anything shares it: the record stays frozen
    for everything else, and its value and equality do not change.
    """
    object.__setattr__(record, "line", line)
    return record


@dataclass(frozen=True, kw_only=True)
class TopicSpec:
    """A topic declared by the case, with optional formats and schemas."""

    name: str
    format: str | None = None
    key_format: str | None = None
    value_format: str | None = None
    key_schema: Any = None
    value_schema: Any = None
    schema: Any = None
    key_schema_id: int | None = None
    value_schema_id: int | None = None
    key_schema_references: Any = None
    value_schema_references: Any = None
    partitions: int | None = None
    replicas: int | None = None


@dataclass(frozen=True, kw_only=True)
class ExpectedLogEntry:
    """One expected processing-log entry (qtt extension, JSON ``qttProcessingLog``).

    ``input`` is the 0-based position in the case's ``inputs`` of the record that a query
    skipped; ``message`` must be contained in the logged message ("" matches any).
    """

    input: int
    message: str


@dataclass(frozen=True, kw_only=True)
class ExpectedException:
    type: str | None = None
    message: str | None = None
    cause: str | None = None
    cause_message: str | None = None


@dataclass(frozen=True, kw_only=True)
class PostSource:
    """A post-condition on a source in the metastore after the statements ran."""

    name: str
    type: str | None = None
    schema: str | None = None
    key_format: Any = None
    value_format: Any = None
    key_features: tuple[str, ...] | None = None
    value_features: tuple[str, ...] | None = None
    is_source: bool | None = None


@dataclass(frozen=True, kw_only=True)
class PostTopic:
    name: str
    key_format: Any = None
    value_format: Any = None
    partitions: int | None = None
    key_schema: Any = None
    value_schema: Any = None


@dataclass(frozen=True, kw_only=True)
class PostTopics:
    blacklist: str | None = None
    topics: tuple[PostTopic, ...] = ()


@dataclass(frozen=True, kw_only=True)
class PostConditions:
    sources: tuple[PostSource, ...] = ()
    topics: PostTopics | None = None


@dataclass(frozen=True, kw_only=True)
class VersionBounds:
    min: str | None = None
    max: str | None = None


@dataclass(frozen=True, kw_only=True)
class CaseNode:
    """One entry of a file's ``tests`` array, before ``format``/``config`` expansion."""

    name: str
    statements: tuple[str, ...]
    inputs: tuple[Record, ...] = ()
    outputs: tuple[Record, ...] = ()
    topics: tuple[TopicSpec, ...] = ()
    properties: Mapping[str, Any] = field(default_factory=dict)
    expected_exception: ExpectedException | None = None
    post: PostConditions | None = None
    format: tuple[str, ...] = ()
    config: tuple[str, ...] = ()
    enabled: bool = True
    versions: VersionBounds | None = None
    qtt_processing_log: tuple[ExpectedLogEntry, ...] | None = None
    #: the names the case had before (``name``, or ``cases/old.json::name`` after a move of its file):
    #: its historical folders under those names stay its history (JSON ``qttFormerNames``)
    qtt_former_names: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class CaseVariant:
    """One runnable case: a case node with one ``format`` and one ``config`` value applied."""

    file: str
    case: str
    index: int  # position in the file's tests array
    variant: str  # "" when the case has neither format nor config
    statements: tuple[str, ...]
    inputs: tuple[Record, ...]
    outputs: tuple[Record, ...]
    topics: tuple[TopicSpec, ...]
    properties: Mapping[str, Any]
    expected_exception: ExpectedException | None
    post: PostConditions | None
    enabled: bool
    #: None: the processing log is not checked; empty: nothing may be logged.
    qtt_processing_log: tuple[ExpectedLogEntry, ...] | None = None
    #: the 1-based line of each statement in the case file; empty when not known
    statement_lines: tuple[int, ...] = ()
    #: see :attr:`CaseNode.qtt_former_names`
    qtt_former_names: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``case`` or ``case [variant]``, for people."""
        return f"{self.case} [{self.variant}]" if self.variant else self.case
