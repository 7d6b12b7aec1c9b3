"""Execution steps, DDL commands and the plan that holds them.

Every concrete class declares an explicit ``type_tag`` and is registered in its root's
registry (:mod:`qtt.plan.tagged`). A shipped tag never changes shape: to change a step, keep
the old class under its ``...V1`` tag, buildable, and add a ``...V2`` class (STYLE.md rule 3).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from qtt.plan.expressions import Expression
from qtt.plan.schema import LogicalSchema
from qtt.plan.tagged import Tagged

EMPTY: Mapping[str, object] = MappingProxyType({})


@dataclass(frozen=True, kw_only=True)
class FormatInfo:
    """A serialization format and its properties (``{"delimiter": "|"}`` for DELIMITED)."""

    format: str
    properties: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, kw_only=True)
class Formats:
    """The key and value formats of a topic, with ksqlDB's serde features."""

    key_format: FormatInfo
    value_format: FormatInfo
    key_features: tuple[str, ...] = ()
    value_features: tuple[str, ...] = ()


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


@dataclass(frozen=True, kw_only=True)
class ExecutionStep(Tagged, root=True, kind="step"):
    """Base class of the steps of a query's physical plan.

    ``context`` is the step's query context (``"KsqlTopic/Source"``, ``"Project"`` ...). It is
    unique within a query and names everything the step owns, such as internal topics.
    """

    context: str

    def sources(self) -> tuple[ExecutionStep, ...]:
        """The steps this step reads from."""
        return ()


@dataclass(frozen=True, kw_only=True)
class StreamSourceV1(ExecutionStep):
    """Read a stream's topic, decode key and value, and expose pseudo columns."""

    type_tag: ClassVar[str] = "streamSourceV1"
    topic: str
    source_name: str
    source_schema: LogicalSchema
    formats: Formats
    timestamp_column: TimestampColumn | None = None


@dataclass(frozen=True, kw_only=True)
class StreamSelectV1(ExecutionStep):
    """Project a stream: compute the output columns; ``key_column_names`` stay the key."""

    type_tag: ClassVar[str] = "streamSelectV1"
    source: ExecutionStep
    key_column_names: tuple[str, ...]
    select_expressions: tuple[SelectExpression, ...]

    def sources(self) -> tuple[ExecutionStep, ...]:
        return (self.source,)


@dataclass(frozen=True, kw_only=True)
class StreamFilterV1(ExecutionStep):
    """Keep the rows for which ``filter_expression`` is true (null counts as false)."""

    type_tag: ClassVar[str] = "streamFilterV1"
    source: ExecutionStep
    filter_expression: Expression

    def sources(self) -> tuple[ExecutionStep, ...]:
        return (self.source,)


@dataclass(frozen=True, kw_only=True)
class StreamSelectKeyV1(ExecutionStep):
    """PARTITION BY: the key becomes ``key_expressions``; old key columns move to the value."""

    type_tag: ClassVar[str] = "streamSelectKeyV1"
    source: ExecutionStep
    key_expressions: tuple[SelectExpression, ...]

    def sources(self) -> tuple[ExecutionStep, ...]:
        return (self.source,)


@dataclass(frozen=True, kw_only=True)
class StreamSinkV1(ExecutionStep):
    """Encode key and value columns and write them to ``topic``."""

    type_tag: ClassVar[str] = "streamSinkV1"
    source: ExecutionStep
    topic: str
    formats: Formats
    timestamp_column: TimestampColumn | None = None

    def sources(self) -> tuple[ExecutionStep, ...]:
        return (self.source,)


@dataclass(frozen=True, kw_only=True)
class StreamSinkV2(StreamSinkV1):
    """As V1, and routes each record by key to one of ``partitions``, as Kafka's producer does.

    V1 wrote every record to the partition of the input record that caused it. V2 pins the
    sink topic's partition count in the plan, so a running query keeps sending a key to the
    same partition even if the topic later gains partitions.
    """

    type_tag: ClassVar[str] = "streamSinkV2"
    partitions: int


# ---------------------------------------------------------------------------- DDL commands


@dataclass(frozen=True, kw_only=True)
class DdlCommand(Tagged, root=True, kind="command"):
    """Base class of commands that change the set of sources."""

    source_name: str


@dataclass(frozen=True, kw_only=True)
class CreateStreamV1(DdlCommand):
    """Register a stream over a topic."""

    type_tag: ClassVar[str] = "createStreamV1"
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
