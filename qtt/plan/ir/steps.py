"""Execution steps, DDL commands and the plan that holds them.

Every concrete class declares an explicit ``type_tag`` and is registered in its root's
registry (:mod:`qtt.plan.ir.tagged`). A shipped tag never changes shape: to change a step, keep
the old class under its ``...V1`` tag, buildable, and add a ``...V2`` class (docs/style.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from qtt.plan.ir.expressions import Expression
from qtt.plan.ir.schema import LogicalSchema
from qtt.plan.ir.tagged import Tagged, children_of
from qtt.sqltypes import SqlType

EMPTY: Mapping[str, object] = MappingProxyType({})


@dataclass(frozen=True, kw_only=True)
class FormatInfo:
    """A serialization format and its properties (``{"delimiter": "|"}`` for DELIMITED).

    ``writer_version`` is the version of qtt's writer of the format that the plan was made
    with, where a later writer writes other bytes for the same rows (AVRO 2: a MAP as Kafka
    Connect's array of map entries, as ksqlDB writes it; 1: as an Avro map). The planner
    writes the newest version only where the columns make the bytes differ, so other plans
    keep their shape; a plan made before a writer changed keeps the old writer. The JSON form
    leaves out version 1 (:mod:`qtt.plan.ir.codec`).
    """

    format: str
    properties: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    writer_version: int = 1


@dataclass(frozen=True, kw_only=True)
class WindowInfo:
    """What a windowed key carries besides the key: ksqlDB's ``WindowInfo``.

    ``type`` is ``TUMBLING``, ``HOPPING`` or ``SESSION``; ``size_ms`` is the window size of a
    time window (a time-windowed key stores only the window start, so its end needs the size),
    None for a session window (its key stores both bounds).
    """

    type: str
    size_ms: int | None = None


@dataclass(frozen=True, kw_only=True)
class Formats:
    """The key and value formats of a topic, with ksqlDB's serde features.

    ``window`` is set for a topic with windowed keys. As in ksqlDB's plans, the JSON form
    leaves it out when there is none (:mod:`qtt.plan.ir.codec`), so plans of unwindowed topics
    keep the shape they always had.
    """

    key_format: FormatInfo
    value_format: FormatInfo
    key_features: tuple[str, ...] = ()
    value_features: tuple[str, ...] = ()
    window: WindowInfo | None = None


@dataclass(frozen=True, kw_only=True)
class WindowExpression:
    """A windowed aggregation's windows, every duration resolved to milliseconds.

    ``advance_ms`` equals ``size_ms`` for tumbling windows; for session windows ``size_ms`` is
    the inactivity gap and ``advance_ms`` is unused (0). ``grace_ms`` is the one in force,
    ksqlDB's default (24 hours less the size or gap, never negative) when the query names none.
    ``retention_ms`` is how long a window's state is kept (at least size plus grace).
    """

    type: str
    size_ms: int
    advance_ms: int
    grace_ms: int
    retention_ms: int
    #: ``EMIT FINAL``: each window is emitted once, when stream time closes it (Kafka Streams'
    #: emit-on-window-close), instead of on every change
    emit_final: bool = False


@dataclass(frozen=True, kw_only=True)
class TimestampColumn:
    """The column that provides ROWTIME instead of the record timestamp."""

    column: str
    format: str | None = None


@dataclass(frozen=True, kw_only=True)
class SelectExpression:
    """One output column of a projection: its name and the expression that computes it."""

    alias: str
    expression: Expression


# ---------------------------------------------------------------------------- steps
#
# Every concrete step class is a leaf: it declares all of its own fields and never inherits
# from another tagged class, so a change to one tag cannot silently change another's shape.
# What steps share lives in the role bases below, which add behaviour and attribute types,
# never dataclass fields.


@dataclass(frozen=True, kw_only=True)
class ExecutionStep(Tagged, root=True, kind="step"):
    """Base class of the steps of a query's physical plan.

    ``context`` is the step's query context (``"KsqlTopic/Source"``, ``"Project"`` ...). It is
    unique within a query and names everything the step owns, such as internal topics.
    """

    context: str
    stateful: ClassVar[bool] = False
    #: whether the step may emit a row for an input record in a later micro-batch than the
    #: record's own (it holds rows back)
    holds_rows: ClassVar[bool] = False

    def sources(self) -> tuple[ExecutionStep, ...]:
        """The steps this step reads from, in field order (derived from the fields)."""
        return children_of(self, ExecutionStep)


class SourceStep(ExecutionStep):
    """Role: reads a source's topic and decodes its records. Has no upstream step."""

    topic: str
    source_name: str
    source_schema: LogicalSchema
    formats: Formats
    timestamp_column: TimestampColumn | None


class SinkStep(ExecutionStep):
    """Role: encodes its source's rows and writes them to ``topic``; the root of a query."""

    source: ExecutionStep
    topic: str
    formats: Formats
    timestamp_column: TimestampColumn | None


class FilterStep(ExecutionStep):
    """Role: keeps the rows for which ``filter_expression`` is true."""

    source: ExecutionStep
    filter_expression: Expression


class SelectStep(ExecutionStep):
    """Role: computes the output columns; ``key_column_names`` stay the key."""

    source: ExecutionStep
    key_column_names: tuple[str, ...]
    select_expressions: tuple[SelectExpression, ...]


class StatefulStep(ExecutionStep):
    """Role: owns state stores, named after ``context``, whose change feeds are internal topics.

    A stateful step needs its input one record per micro-batch (ksqlDB with record caching
    off), so a query with one is replayed record by record.
    """

    stateful: ClassVar[bool] = True
    source: ExecutionStep


class AggregateStep(StatefulStep):
    """Role: aggregates each group's rows with ``aggregations``."""

    aggregations: tuple[AggregateCall, ...]


@dataclass(frozen=True, kw_only=True)
class StreamSourceV1(SourceStep):
    """Read a stream's topic, decode key and value, and expose pseudo columns."""

    type_tag: ClassVar[str] = "streamSourceV1"
    topic: str
    source_name: str
    source_schema: LogicalSchema
    formats: Formats
    timestamp_column: TimestampColumn | None = None


@dataclass(frozen=True, kw_only=True)
class StreamSelectV1(SelectStep):
    """Project a stream: compute the output columns; ``key_column_names`` stay the key."""

    type_tag: ClassVar[str] = "streamSelectV1"
    source: ExecutionStep
    key_column_names: tuple[str, ...]
    select_expressions: tuple[SelectExpression, ...]


@dataclass(frozen=True, kw_only=True)
class StreamFilterV1(FilterStep):
    """Keep the rows for which ``filter_expression`` is true (null counts as false)."""

    type_tag: ClassVar[str] = "streamFilterV1"
    source: ExecutionStep
    filter_expression: Expression


@dataclass(frozen=True, kw_only=True)
class StreamSelectKeyV1(ExecutionStep):
    """PARTITION BY: the key becomes ``key_expressions``; old key columns move to the value."""

    type_tag: ClassVar[str] = "streamSelectKeyV1"
    source: ExecutionStep
    key_expressions: tuple[SelectExpression, ...]


@dataclass(frozen=True, kw_only=True)
class StreamSelectKeyV2(ExecutionStep):
    """A join's re-key of a stream side (ksqlDB's pre-join repartition), recorded as an internal topic.

    Computes as :class:`StreamSelectKeyV1`, and writes each re-keyed row whose key is not null
    to the internal topic ``<queryId>-<repartition_name>-repartition``, as Kafka Streams'
    join repartitions its input (``Join-left``, ``Join-right`` for a stream-stream join,
    ``Join`` for a stream-table one). V1 recorded no repartition.
    """

    type_tag: ClassVar[str] = "streamSelectKeyV2"
    source: ExecutionStep
    key_expressions: tuple[SelectExpression, ...]
    repartition_name: str


@dataclass(frozen=True, kw_only=True)
class StreamSinkV1(SinkStep):
    """Encode key and value columns and write them to ``topic``.

    Writes every record to the partition of the input record that caused it. Kept for plans
    persisted by qtt 0.1.0; new plans use :class:`StreamSinkV2`.
    """

    type_tag: ClassVar[str] = "streamSinkV1"
    source: ExecutionStep
    topic: str
    formats: Formats
    timestamp_column: TimestampColumn | None = None


@dataclass(frozen=True, kw_only=True)
class StreamSinkV2(SinkStep):
    """Encode key and value columns and route each record by key to one of ``partitions``,
    as Kafka's producer does.

    V1 wrote every record to the partition of the input record that caused it. V2 pins the
    sink topic's partition count in the plan, so a running query keeps sending a key to the
    same partition even if the topic later gains partitions.
    """

    type_tag: ClassVar[str] = "streamSinkV2"
    source: ExecutionStep
    topic: str
    formats: Formats
    timestamp_column: TimestampColumn | None = None
    partitions: int


# ---------------------------------------------------------------------------- tables and aggregation


@dataclass(frozen=True, kw_only=True)
class TableSourceV1(SourceStep):
    """Read a table's topic: each record upserts its primary key; a null value deletes it."""

    type_tag: ClassVar[str] = "tableSourceV1"
    topic: str
    source_name: str
    source_schema: LogicalSchema
    formats: Formats
    timestamp_column: TimestampColumn | None = None


@dataclass(frozen=True, kw_only=True)
class TableFilterV1(FilterStep):
    """A row that does not pass ``filter_expression`` becomes a delete (tombstone) of its key."""

    type_tag: ClassVar[str] = "tableFilterV1"
    source: ExecutionStep
    filter_expression: Expression


@dataclass(frozen=True, kw_only=True)
class TableFilterV2(FilterStep):
    """ksqlDB's HAVING over an aggregate: like :class:`TableFilterV1`, but a failing row is a
    delete only when the group's previous result passed; otherwise nothing is emitted.

    Its source must be an aggregate step, which supplies each group's previous result.
    TableFilterV1, kept for plans persisted by qtt 0.3.0, deleted every failing group.
    """

    type_tag: ClassVar[str] = "tableFilterV2"
    source: ExecutionStep
    filter_expression: Expression


@dataclass(frozen=True, kw_only=True)
class TableFilterV3(FilterStep, StatefulStep):
    """ksqlDB's WHERE over a table since 0.14 (Kafka Streams' KAFKA-10077): the step keeps each
    key's previous source row, and a row that fails ``filter_expression`` (or a delete) is a
    delete only when that previous row passes the same expression; otherwise nothing is
    emitted. A row that passes is emitted as it is.

    The previous row is tested with the step's own expression, so a ``CREATE OR REPLACE``
    that changes the filter judges the rows its state holds by the new one. Plans persisted
    with :class:`TableFilterV1` keep deleting on every failing row.
    """

    type_tag: ClassVar[str] = "tableFilterV3"
    source: ExecutionStep
    filter_expression: Expression


@dataclass(frozen=True, kw_only=True)
class TableSelectV1(SelectStep):
    """Project a table's rows; a delete stays a delete of the same key."""

    type_tag: ClassVar[str] = "tableSelectV1"
    source: ExecutionStep
    key_column_names: tuple[str, ...]
    select_expressions: tuple[SelectExpression, ...]


@dataclass(frozen=True, kw_only=True)
class TableSinkV1(SinkStep):
    """Write a table's changes: upserts, and deletes as tombstones; routed by key as V2 streams."""

    type_tag: ClassVar[str] = "tableSinkV1"
    source: ExecutionStep
    topic: str
    formats: Formats
    timestamp_column: TimestampColumn | None = None
    partitions: int


@dataclass(frozen=True, kw_only=True)
class AggregateCall:
    """One aggregate function call: its result column, arguments and persisted state layout.

    ``args`` are the column arguments (evaluated on each input row, already cast to the types
    the function takes), ``params`` the initialisation arguments with ksqlDB's defaults and
    the configuration the function reads filled in, so the plan needs no config to run.
    ``state_type`` is the accumulator's type: it is what the state store (and so the internal
    topic) holds, so it is part of the plan's contract.
    """

    alias: str
    function: str
    args: tuple[Expression, ...]
    params: tuple[Any, ...]
    return_type: SqlType
    state_type: SqlType


@dataclass(frozen=True, kw_only=True)
class StreamGroupByV1(ExecutionStep):
    """Re-key a stream by ``group_by_expressions``; rows with a null grouping value are dropped."""

    type_tag: ClassVar[str] = "streamGroupByV1"
    source: ExecutionStep
    group_by_expressions: tuple[SelectExpression, ...]


@dataclass(frozen=True, kw_only=True)
class StreamAggregateV1(AggregateStep):
    """Aggregate each group's rows; emits the group's new aggregate row for every input row.

    State per group: one accumulator per call plus the newest ROWTIME, in a state store named
    after ``context``.
    """

    type_tag: ClassVar[str] = "streamAggregateV1"
    source: ExecutionStep
    aggregations: tuple[AggregateCall, ...]


@dataclass(frozen=True, kw_only=True)
class StreamWindowedAggregateV1(AggregateStep):
    """Aggregate each group's rows per window (``WINDOW TUMBLING | HOPPING | SESSION``).

    Time windows: each row joins every window that holds its timestamp, unless stream time
    (the newest timestamp its source partition has shown this step) has closed the window: its
    end plus the grace period is at or before stream time (Kafka Streams' rule). Emits the
    window's new aggregate row for every row it takes, windows in start order; the row's
    timestamp is the newest in the window. Session windows merge the sessions a row reaches
    and emit tombstones for those they replace (docs/reference/windows.md). With ``emit_final``, a
    window is emitted once, when it closes. State: per partition, its stream time (and, for
    ``EMIT FINAL``, the windows not yet emitted); per group and window, one accumulator per
    call plus the newest ROWTIME (per group, its sessions).
    """

    type_tag: ClassVar[str] = "streamWindowedAggregateV1"
    source: ExecutionStep
    aggregations: tuple[AggregateCall, ...]
    window: WindowExpression
    #: the formats of its state store's keys (the source's): ``EMIT FINAL`` emits the windows
    #: that close together in the order of their start, then of their key's bytes in this format
    internal_formats: Formats


@dataclass(frozen=True, kw_only=True)
class TableGroupByV1(StatefulStep):
    """Re-key a table's changes by ``group_by_expressions``.

    State per source key: the grouping values and aggregate arguments it last contributed,
    so that an update or delete first retracts them from their old group (ksqlDB's undo).
    ``argument_expressions`` are evaluated here, on the source row.
    """

    type_tag: ClassVar[str] = "tableGroupByV1"
    source: ExecutionStep
    group_by_expressions: tuple[SelectExpression, ...]
    argument_expressions: tuple[SelectExpression, ...]


@dataclass(frozen=True, kw_only=True)
class TableAggregateV1(AggregateStep):
    """As the stream aggregate, and retracts (undo) what a table row contributed before.

    Emits after the retraction and again after the addition, even when the row stays in the
    same group. Kept for plans persisted by qtt 0.3.0; new plans use :class:`TableAggregateV2`.
    """

    type_tag: ClassVar[str] = "tableAggregateV1"
    source: ExecutionStep
    aggregations: tuple[AggregateCall, ...]


@dataclass(frozen=True, kw_only=True)
class TableAggregateV2(AggregateStep):
    """As :class:`TableAggregateV1`, but a row updated within its group emits once.

    ksqlDB applies the retraction and the addition of an update that keeps the row's group as
    one change, so the group's result is emitted once, not first without the row and then with
    its new value.
    """

    type_tag: ClassVar[str] = "tableAggregateV2"
    source: ExecutionStep
    aggregations: tuple[AggregateCall, ...]


# ---------------------------------------------------------------------------- DDL commands


@dataclass(frozen=True, kw_only=True)
class DdlCommand(Tagged, root=True, kind="command"):
    """Base class of commands that change the set of sources."""

    source_name: str


class CreateSourceCommand(DdlCommand):
    """Role: registers a stream or table over a topic."""

    schema: LogicalSchema
    topic: str
    formats: Formats
    timestamp_column: TimestampColumn | None
    is_source: bool
    or_replace: bool


@dataclass(frozen=True, kw_only=True)
class CreateStreamV1(CreateSourceCommand):
    """Register a stream over a topic."""

    type_tag: ClassVar[str] = "createStreamV1"
    schema: LogicalSchema
    topic: str
    formats: Formats
    timestamp_column: TimestampColumn | None = None
    is_source: bool = False
    or_replace: bool = False


@dataclass(frozen=True, kw_only=True)
class CreateTableV1(CreateSourceCommand):
    """Register a table over a topic; its key columns are the primary key."""

    type_tag: ClassVar[str] = "createTableV1"
    schema: LogicalSchema
    topic: str
    formats: Formats
    timestamp_column: TimestampColumn | None = None
    is_source: bool = False
    or_replace: bool = False


@dataclass(frozen=True, kw_only=True)
class DropSourceV1(DdlCommand):
    """Remove a stream or table from the set of sources."""

    type_tag: ClassVar[str] = "dropSourceV1"


# ---------------------------------------------------------------------------- plans


@dataclass(frozen=True, kw_only=True)
class QueryPlan:
    """One persistent query: the sources it reads, its sink and its physical plan."""

    query_id: str
    sources: tuple[str, ...]
    sink: str
    physical_plan: ExecutionStep


@dataclass(frozen=True, kw_only=True)
class StatementPlan(Tagged, root=True, kind="statement plan"):
    """What one statement does: a DDL command, a persistent query, or both."""

    statement_text: str


@dataclass(frozen=True, kw_only=True)
class KsqlPlanV1(StatementPlan):
    type_tag: ClassVar[str] = "ksqlPlanV1"
    ddl_command: DdlCommand | None = None
    query_plan: QueryPlan | None = None


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The execution plan of a case: every statement's plan, and the config it was planned with."""

    config: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    statements: tuple[StatementPlan, ...] = ()

    def queries(self) -> list[QueryPlan]:
        """The persistent queries, in statement order."""
        return [q for s in self.statements if (q := getattr(s, "query_plan", None)) is not None]

    def ddl_commands(self) -> list[DdlCommand]:
        return [c for s in self.statements if (c := getattr(s, "ddl_command", None)) is not None]


def walk_steps(step: ExecutionStep) -> list[ExecutionStep]:
    """``step`` and every step upstream of it, sources first (build order)."""
    out: list[ExecutionStep] = []
    for source in step.sources():
        out.extend(walk_steps(source))
    out.append(step)
    return out


# ---------------------------------------------------------------------------- table functions


@dataclass(frozen=True, kw_only=True)
class StreamFlatMapV1(ExecutionStep):
    """Table functions (ksqlDB's ``StreamFlatMap``): each input row becomes one row per result.

    Each of ``table_functions`` is a table function call (EXPLODE, CUBE_EXPLODE) whose results
    become the column ``alias`` next to the source's columns. Several table functions zip:
    the row count is the longest result's, the shorter ones padded with nulls. A row whose
    table functions all return nothing (a null or empty array) emits no row.
    """

    type_tag: ClassVar[str] = "streamFlatMapV1"
    source: ExecutionStep
    table_functions: tuple[SelectExpression, ...]
