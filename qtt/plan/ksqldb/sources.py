"""ksqlDB's source and sink steps.

A source step's expressions may read ROWTIME (and, from the release that added them, ROWPARTITION
and ROWOFFSET), and a windowed source's WINDOWSTART and WINDOWEND. ksqlDB's sinks route records
by key, as qtt's :class:`~qtt.plan.ir.steps.StreamSinkV2` and table sink do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qtt.plan.analysis.analyzer import ScopeColumn
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import PSEUDO_COLUMNS, ROWTIME, WINDOW_BOUNDS
from qtt.plan.ksqldb import fields
from qtt.plan.ksqldb.context import StepContext, Translated, Untranslatable, query_context, translates


def _visible(raw: Mapping[str, Any], window: s.WindowInfo | None) -> tuple[ScopeColumn, ...]:
    pseudo = PSEUDO_COLUMNS if raw.get("pseudoColumnVersion", 0) >= 1 else {ROWTIME: PSEUDO_COLUMNS[ROWTIME]}
    bounds = WINDOW_BOUNDS if window is not None else {}
    return tuple(ScopeColumn(name, type_) for name, type_ in {**pseudo, **bounds}.items())


def _source(context: StepContext, raw: Mapping[str, Any], *, table: bool) -> Translated:
    window = fields.window_info(raw.get("windowInfo"))
    schema = fields.schema(raw["sourceSchema"])
    topic = raw["topicName"]
    step_class = s.TableSourceV1 if table else s.StreamSourceV1
    step = step_class(
        context=query_context(raw),
        topic=topic,
        source_name=context.source_names.get(topic, topic),
        source_schema=schema,
        formats=fields.formats(raw["formats"], window),
        timestamp_column=fields.timestamp_column(raw.get("timestampColumn")),
    )
    key_field = context.key_fields.get(topic)
    copies = {key_field: schema.key[0].name} if key_field and len(schema.key) == 1 else {}
    return Translated(step, schema, _visible(raw, window), is_table=table, window=window, key_copies=copies)


def _stream_source(context: StepContext, raw: Mapping[str, Any], _: list[Translated]) -> Translated:
    return _source(context, raw, table=False)


def _table_source(context: StepContext, raw: Mapping[str, Any], _: list[Translated]) -> Translated:
    # tableSourceV2 names the formats of the materialized source table's store; qtt's table
    # source keeps its state its own way, so the store formats decide nothing here
    return _source(context, raw, table=True)


for _tag in ("streamSourceV1", "windowedStreamSourceV1"):
    translates(_tag)(_stream_source)
for _tag in ("tableSourceV1", "tableSourceV2", "windowedTableSourceV1"):
    translates(_tag)(_table_source)


def _sink(context: StepContext, raw: Mapping[str, Any], sources: list[Translated], *, table: bool) -> Translated:
    (source,) = sources
    if table and any(c.name in PSEUDO_COLUMNS for c in source.schema.key):
        raise Untranslatable(raw["@type"], "a key column named like a pseudo column (GROUP BY ROWTIME, before 0.10)")
    if source.hidden_keys:
        raise Untranslatable(raw["@type"], "an aggregate's hidden grouping keys reach the sink without its projection")
    if source.key_and_value:
        names = ", ".join(source.key_and_value)
        raise Untranslatable(raw["@type"], f"{names} in both the key and the value (ksqlDB before 0.10)")
    topic = raw["topicName"]
    formats = fields.formats(raw["formats"], source.window)
    timestamp = fields.timestamp_column(raw.get("timestampColumn"))
    partitions = context.partitions_of(topic)
    step: s.ExecutionStep
    if table:
        step = s.TableSinkV1(
            context=query_context(raw), source=source.step, topic=topic, formats=formats,
            timestamp_column=timestamp, partitions=partitions,
        )  # fmt: skip
    else:
        step = s.StreamSinkV2(
            context=query_context(raw), source=source.step, topic=topic, formats=formats,
            timestamp_column=timestamp, partitions=partitions,
        )  # fmt: skip
    return Translated(step, source.schema, source.extra, is_table=table, window=source.window)


@translates("streamSinkV1")
def stream_sink_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    if sources[0].is_table:
        raise Untranslatable("streamSinkV1", "over a table")
    return _sink(context, raw, sources, table=False)


@translates("tableSinkV1")
def table_sink_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    return _sink(context, raw, sources, table=True)
