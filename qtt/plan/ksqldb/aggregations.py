"""ksqlDB's grouping and aggregation steps.

ksqlDB's aggregate outputs its key, its ``nonAggregateColumns`` (the latest row's copies of
the grouping columns) and the aggregates; qtt's outputs the key and the aggregates. The copies
are read as the key columns they copy, which is what they hold for a grouping column; a
non-aggregate column that copies no key does not translate.

``streamGroupByV1`` and ``tableGroupByV1`` over several expressions made one STRING key of
them joined with ``|+|`` (ksqlDB before 0.15, plans of 5.5 to 6.2): that key, and the grouping values as hidden keys
that the aggregate's projection drops (:mod:`qtt.plan.ksqldb.string_keys`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from qtt.plan.analysis.analyzer import ScopeColumn
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ir import suppress_steps as ss
from qtt.plan.ir.schema import KEY, VALUE, WINDOW_BOUNDS, Column, LogicalSchema
from qtt.plan.ksqldb import fields, string_keys
from qtt.plan.ksqldb.context import StepContext, Translated, Untranslatable, carried, query_context, translates
from qtt.plan.ksqldb.expressions import aggregate_call, typed
from qtt.plan.ksqldb.projections import ROWKEY, key_names, pseudo_of, rekeyed_schema


def _groups(
    context: StepContext, raw: Mapping[str, Any], source: Translated
) -> tuple[tuple[s.SelectExpression, ...], tuple[s.SelectExpression, ...]]:
    """The group-by's key columns, and those of them that are hidden keys."""
    expressions = [typed(text, source, "GROUP BY") for text in raw["groupByExpressions"]]
    rowkey_era = [c.name for c in source.schema.key] == [ROWKEY]
    if len(expressions) > 1 and raw["@type"].endswith("V1"):
        taken = [c.name for c in source.columns()]
        name = string_keys.key_name(context, raw, taken, rowkey_era=rowkey_era)
        key = s.SelectExpression(alias=name, expression=string_keys.joined_key(raw["@type"], expressions))
        hidden = string_keys.hidden_groups(raw["@type"], expressions, name, taken)
        return (key, *hidden), hidden
    names = key_names(context, raw, expressions, rowkey_era=rowkey_era)
    return tuple(s.SelectExpression(alias=n, expression=x) for n, x in zip(names, expressions, strict=True)), ()


def _copies(groups: tuple[s.SelectExpression, ...]) -> tuple[ScopeColumn, ...]:
    """A grouped value column whose key has another name: read as that key."""
    return tuple(
        ScopeColumn(g.expression.name, g.expression.result_type, input_name=g.alias)
        for g in groups
        if isinstance(g.expression, e.ColumnRef) and g.expression.name != g.alias
    )


def _stream_group_by(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    (source,) = sources
    groups, hidden = _groups(context, raw, source)
    step = s.StreamGroupByV1(context=query_context(raw), source=source.step, group_by_expressions=groups)
    extra = _copies(groups) + pseudo_of(source)
    return Translated(
        step, rekeyed_schema(source, groups), extra, window=source.window, groups=hidden or groups,
        hidden_keys=tuple(g.alias for g in hidden),
    )  # fmt: skip


for _tag in ("streamGroupByV1", "streamGroupByV2"):
    translates(_tag)(_stream_group_by)


@translates("streamGroupByKeyV1")
def stream_group_by_key_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    (source,) = sources
    groups = tuple(
        s.SelectExpression(alias=c.name, expression=e.ColumnRef(name=c.name, sql_type=c.type))
        for c in source.schema.key
    )
    step = s.StreamGroupByV1(context=query_context(raw), source=source.step, group_by_expressions=groups)
    return Translated(
        step, rekeyed_schema(source, groups), source.extra, window=source.window, key_copies=source.key_copies
    )


def _table_group_by(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    (source,) = sources
    groups, hidden = _groups(context, raw, source)
    taken = {g.alias for g in groups}
    # every value column the aggregate may read travels with the row, as its undo needs
    arguments = tuple(
        s.SelectExpression(alias=c.name, expression=e.ColumnRef(name=c.name, sql_type=c.type))
        for c in source.schema.value
        if c.name not in taken
    )
    step = s.TableGroupByV1(
        context=query_context(raw), source=source.step, group_by_expressions=groups, argument_expressions=arguments
    )
    values = tuple(Column(a.alias, a.expression.result_type, VALUE) for a in arguments)
    keys = tuple(Column(g.alias, g.expression.result_type, KEY) for g in groups)
    extra = _copies(groups) + pseudo_of(source)
    return Translated(
        step, LogicalSchema(keys + values), extra, is_table=True, groups=hidden or groups,
        hidden_keys=tuple(g.alias for g in hidden),
    )  # fmt: skip


for _tag in ("tableGroupByV1", "tableGroupByV2"):
    translates(_tag)(_table_group_by)


def _calls(context: StepContext, raw: Mapping[str, Any], source: Translated) -> tuple[s.AggregateCall, ...]:
    return tuple(
        aggregate_call(text, index, source, context.config) for index, text in enumerate(raw["aggregationFunctions"])
    )


def _aggregated(
    raw: Mapping[str, Any], source: Translated, step: s.ExecutionStep, calls: tuple[s.AggregateCall, ...],
    window: s.WindowInfo | None,
) -> Translated:  # fmt: skip
    keys = source.schema.key
    schema = LogicalSchema(tuple(keys) + tuple(Column(c.alias, c.return_type, VALUE) for c in calls))
    key_names = {c.name for c in keys}
    copies = [c for c in source.extra if c.input_name is not None]
    stand_ins: dict[e.Expression, e.Expression] = {}
    for name in raw.get("nonAggregateColumns") or ():
        if name not in key_names and not any(c.name == name for c in copies):
            type_ = source.type_of(name)
            if source.key_copies.get(name) in key_names:  # it holds the key on every row
                copies.append(ScopeColumn(name, type_, input_name=source.key_copies[name]))
                continue
            copies.append(ScopeColumn(name, type_, input_name=carried(name, type_).name))
            stand_ins[e.ColumnRef(name=name, sql_type=type_)] = carried(name, type_)
    # a grouping expression over non-aggregate columns is the key it made
    rewrites = {
        e.substitute(g.expression, stand_ins): e.ColumnRef(name=g.alias, sql_type=g.expression.result_type)
        for g in source.groups
        if not isinstance(g.expression, e.ColumnRef)
    }
    bounds = [ScopeColumn(n, t) for n, t in WINDOW_BOUNDS.items()] if window is not None else []
    return Translated(
        step, schema, (*copies, *bounds), is_table=True, window=window, rewrites=rewrites,
        hidden_keys=source.hidden_keys,
    )  # fmt: skip


@translates("streamAggregateV1")
def stream_aggregate_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    (source,) = sources
    calls = _calls(context, raw, source)
    step = s.StreamAggregateV1(context=query_context(raw), source=source.step, aggregations=calls)
    return _aggregated(raw, source, step, calls, source.window)


@translates("tableAggregateV1")
def table_aggregate_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    (source,) = sources
    calls = _calls(context, raw, source)
    # ksqlDB's table aggregate (to 7.3, the last release that wrote it) emits after an update's
    # retraction and again after its addition: qtt's TableAggregateV1
    step = s.TableAggregateV1(context=query_context(raw), source=source.step, aggregations=calls)
    return _aggregated(raw, source, step, calls, None)


@translates("streamWindowedAggregateV1")
def stream_windowed_aggregate_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    (source,) = sources
    calls = _calls(context, raw, source)
    window = fields.window(raw["windowExpression"])
    step = s.StreamWindowedAggregateV1(
        context=query_context(raw),
        source=source.step,
        aggregations=calls,
        window=window,
        internal_formats=fields.formats(raw["internalFormats"]),
    )
    info = s.WindowInfo(type=window.type, size_ms=None if window.type == "SESSION" else window.size_ms)
    return _aggregated(raw, source, step, calls, info)


@translates("tableSuppressV1")
def table_suppress_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    """``EMIT FINAL`` before ksqlDB 0.28: Kafka Streams' suppress buffer after the windowed
    aggregate's projection, qtt's own :class:`~qtt.plan.ir.suppress_steps.TableSuppressV1` (its
    rule differs from the aggregate's emit-on-window-close of later releases)."""
    (source,) = sources
    refinement = (raw.get("refinementInfo") or {}).get("outputRefinement")
    if refinement != "FINAL":
        raise Untranslatable("tableSuppressV1", f"output refinement {refinement}")
    window = _window_below(source.step)
    step = ss.TableSuppressV1(
        context=query_context(raw),
        source=source.step,
        window=window,
        internal_formats=fields.formats(raw["internalFormats"]),
    )
    return dataclasses.replace(source, step=step)


def _window_below(step: s.ExecutionStep) -> s.WindowExpression:
    if isinstance(step, s.StreamWindowedAggregateV1):
        return step.window
    if isinstance(step, (s.TableSelectV1, s.TableFilterV1, s.TableFilterV2)):
        return _window_below(step.source)
    raise Untranslatable("tableSuppressV1", f"over {type(step).type_tag}, not a windowed aggregation")
