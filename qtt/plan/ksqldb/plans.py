"""A whole ksqlDB ``plan.json`` (its ``ksqlPlanV1`` statements: DDL commands and query plans)
translated into qtt's :class:`~qtt.plan.ir.steps.Plan`, with the streams and tables it declares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qtt.plan.analysis.expression_errors import with_error_scope
from qtt.plan.ddl.metastore import STREAM, TABLE, DataSource
from qtt.plan.ir import steps as s
from qtt.plan.ksqldb import (  # noqa: F401  (register translators)
    aggregations,
    fields,
    joins,
    projections,
    sources,
    table_functions,
)
from qtt.plan.ksqldb.context import StepContext, Untranslatable, translate_step
from qtt.plan.settings import NESTED_ERROR_SET_NULL, enabled
from qtt.plan.statements import PlannedCase

_COMMANDS = {"createStreamV1": (s.CreateStreamV1, STREAM), "createTableV1": (s.CreateTableV1, TABLE)}


def _command(raw: Mapping[str, Any], text: str, partitions: Mapping[str, int]) -> tuple[s.DdlCommand, DataSource]:
    tag = raw.get("@type", "?")
    if tag not in _COMMANDS:
        raise Untranslatable(tag, "qtt has no command with its semantics")
    command_class, kind = _COMMANDS[tag]
    schema = fields.schema(raw["schema"])
    formats = fields.formats(raw["formats"], fields.window_info(raw.get("windowInfo")))
    timestamp = fields.timestamp_column(raw.get("timestampColumn"))
    topic = raw["topicName"]
    command = command_class(
        source_name=raw["sourceName"],
        schema=schema,
        topic=topic,
        formats=formats,
        timestamp_column=timestamp,
        is_source=bool(raw.get("isSource", False)),
        or_replace=bool(raw.get("orReplace", False)),
    )
    source = DataSource(
        name=raw["sourceName"],
        kind=kind,
        schema=schema,
        topic=topic,
        formats=formats,
        timestamp_column=timestamp,
        is_source=command.is_source,
        partitions=partitions.get(topic),
        sql=text,
    )
    return command, source


def translate_plan(
    raw: Mapping[str, Any],
    *,
    release: str,
    recorded: Mapping[str, str],
    partitions: Mapping[str, int],
    properties: Mapping[str, Any],
) -> PlannedCase:
    """Translate ``raw`` (a ``plan.json`` of ``release``).

    ``recorded``: the step schemas its ``spec.json`` recorded; ``partitions``: each topic's
    partition count as the case declares them; ``properties``: the case's properties.

    Raises:
        Untranslatable: a step or command that qtt has no counterpart for (a skip).
        SqlError: an expression that does not type, or a field ksqlDB never wrote.
    """
    statements: list[s.StatementPlan] = []
    declared: dict[str, DataSource] = {}
    topic_partitions = dict(partitions)
    key_fields: dict[str, str] = {}
    config = {**dict(raw.get("configs") or {}), **dict(properties)}
    for entry in raw["plan"]:
        if entry.get("@type") != "ksqlPlanV1":
            raise Untranslatable(str(entry.get("@type")), "a plan entry qtt does not read")
        text = entry.get("statementText", "")
        command = None
        if entry.get("ddlCommand") is not None:
            command, source = _command(entry["ddlCommand"], text, topic_partitions)
            declared[source.name] = source
            if entry["ddlCommand"].get("keyField"):
                key_fields[source.topic] = str(entry["ddlCommand"]["keyField"])
        query = None
        if entry.get("queryPlan") is not None:
            query = _query(entry["queryPlan"], release, recorded, declared, topic_partitions, config, key_fields)
            if not isinstance(query.physical_plan, s.SinkStep):
                # a source table's materialization (CREATE SOURCE TABLE): no output, as qtt plans it
                query = None
        statements.append(s.KsqlPlanV1(statement_text=text, ddl_command=command, query_plan=query))
    # a plan persisted before ksql.nested.error.set.null existed runs with its legacy value, off
    caught = enabled(config, NESTED_ERROR_SET_NULL, False)
    plan = with_error_scope(s.Plan(config={**properties, NESTED_ERROR_SET_NULL: caught}, statements=tuple(statements)))
    return PlannedCase(plan=plan, sources=declared, topic_partitions=topic_partitions)


def _query(
    raw: Mapping[str, Any],
    release: str,
    recorded: Mapping[str, str],
    declared: Mapping[str, DataSource],
    partitions: dict[str, int],
    config: Mapping[str, Any],
    key_fields: Mapping[str, str],
) -> s.QueryPlan:
    names = {source.topic: source.name for source in declared.values()}
    read = [declared[name].topic for name in raw.get("sources") or () if name in declared]
    sink = declared.get(raw.get("sink") or "")
    if sink is not None and sink.topic not in partitions:
        partitions[sink.topic] = max((partitions.get(topic, 1) for topic in read), default=1)
    context = StepContext(
        query_id=raw["queryId"],
        recorded=recorded,
        release=release,
        config=config,
        source_names=names,
        partitions=partitions,
        key_fields=key_fields,
    )
    step = translate_step(context, raw["physicalPlan"]).step
    return s.QueryPlan(
        query_id=raw["queryId"], sources=tuple(raw.get("sources") or ()), sink=raw.get("sink") or "", physical_plan=step
    )
