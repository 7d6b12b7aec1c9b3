"""The aggregate steps' builders: group, aggregate in a stateful operator, emit per input.

A windowed aggregate (``window``) first passes its rows through the stream-time operator and
into their open windows (:mod:`qtt.runtime.operators.windows`), then groups by key and window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt import sqltypes as t
from qtt.plan.ir import steps as s
from qtt.plan.ir import suppress_steps as ss
from qtt.plan.ir.schema import WINDOWEND, WINDOWSTART, LogicalSchema
from qtt.runtime.build.compiler import Compiler
from qtt.runtime.build.context import PSEUDO_TYPES, BuildContext, Built, builds, key_bytes, untaken
from qtt.runtime.build.names import (
    HAD_PREVIOUS,
    KEY_BYTES,
    NULL_KEY,
    OP,
    ORDER,
    PSEUDO_COLUMNS,
    ROWPARTITION,
    ROWTIME,
    SEQ,
    TOMBSTONE,
    WINDOW_END,
    WINDOW_START,
    argument_column,
    col,
    group_column,
    previous_name,
)
from qtt.runtime.spark.spark_types import to_spark

if TYPE_CHECKING:
    from qtt.runtime.operators.stateful import AggregateProcessor, AggregateSpec


def build_aggregate(
    context: BuildContext,
    step: s.AggregateStep,
    source: Built,
    *,
    emit_once_per_input: bool = False,
    window: s.WindowExpression | None = None,
) -> tuple[DataFrame, LogicalSchema]:
    from qtt.plan.functions.aggregate_signatures import Aggregate
    from qtt.runtime.operators.stateful import AggregateProcessor, AggregateSpec, state_name, struct

    compile_ = Compiler()
    keys = [c.name for c in source.schema.key]
    # PySpark's transformWithState mishandles grouping keys that are not primitive: a struct
    # key shares one state among all its values, an array key fails to start. Such a key is
    # grouped by its JSON text instead, which is equal exactly when the values are.
    grouping = {
        c.name: F.to_json(col(c.name)).alias(group_column(c.name))
        for c in source.schema.key
        if isinstance(c.type, (t.Struct, t.Array, t.Map))
    }
    arguments, calls = [], []
    for i, call in enumerate(step.aggregations):
        names = []
        for j, arg in enumerate(call.args):
            names.append(argument_column(i, j))
            arguments.append(compile_(arg).alias(names[-1]))
        resolved = Aggregate(
            call.function, tuple(a.result_type for a in call.args), call.params, call.return_type, call.state_type
        )
        calls.append((resolved, call.alias, tuple(names)))
    op = col(OP) if OP in source.df.columns else F.lit(1)
    order = col(ORDER) if ORDER in source.df.columns else F.lit(0)
    # a key named like a pseudo column (GROUP BY ROWTIME) is that column
    pseudo = untaken(PSEUDO_COLUMNS, set(keys))
    df = source.df.select(
        *[col(k) for k in keys],
        *grouping.values(),
        *arguments,
        *[col(c) for c in pseudo],
        col(SEQ),
        op.cast("int").alias(OP),
        order.cast("int").alias(ORDER),
    )
    # A time-windowed aggregate groups by key and window, so the window bounds are key columns of
    # its state; a session-windowed one groups by key and keeps the key's sessions as its state.
    session = window is not None and window.type == "SESSION"
    state_keys = [*keys, WINDOWSTART, WINDOWEND] if window is not None and not session else keys
    bounds = [WINDOWSTART, WINDOWEND] if session else []
    if window is not None:
        df = _windowed(context, df, window, f"{state_name(step.context)}-StreamTime")
    types = {f.name: f.dataType for f in df.schema.fields} | {b: st.LongType() for b in bounds}
    spec = AggregateSpec(
        state_name=state_name(step.context),
        state_schema=struct(
            [(c.alias, to_spark(c.state_type)) for c in step.aggregations] + [(ROWTIME, st.LongType())]
        ),
        key_names=tuple(state_keys),
        calls=tuple(calls),
        emit_once_per_input=emit_once_per_input,
        emit_previous=context.emits_previous(step),
        arguments=struct([(name, types[name]) for _, _, names in calls for name in names]),
    )
    previous = (
        [(previous_name(c.alias), to_spark(c.return_type)) for c in step.aggregations]
        + [(HAD_PREVIOUS, st.BooleanType())]
        if spec.emit_previous
        else []
    )
    output = struct(
        [(k, types[k]) for k in [*state_keys, *bounds]]
        + [(c.alias, to_spark(c.return_type)) for c in step.aggregations]
        + [(c, PSEUDO_TYPES[c]) for c in pseudo]
        + [
            (SEQ, st.LongType()),
            (TOMBSTONE, st.BooleanType()),
            (NULL_KEY, st.BooleanType()),
            (ORDER, st.IntegerType()),
        ]
        + previous
    )
    group_names = [group_column(k) if k in grouping else k for k in state_keys]
    processor = AggregateProcessor(spec) if not session else _sessions(spec, step, window)
    out = context.stateful(df, group_names, processor, output)
    if window is not None:  # carried on next to the system columns, for the sink's windowed key
        out = out.withColumn(WINDOW_START, col(WINDOWSTART)).withColumn(WINDOW_END, col(WINDOWEND))
    if window is not None and window.emit_final:
        assert isinstance(step, s.StreamWindowedAggregateV1)
        out = _final(context, out, step, source, f"{state_name(step.context)}-Final")
    return out, context.schema_of(out, keys, [c.alias for c in step.aggregations])


def _windowed(context: BuildContext, df: DataFrame, window: s.WindowExpression, state: str) -> DataFrame:
    """``df``'s rows in their open windows: through the stream-time operator (keyed by source
    partition), then once per window (:func:`qtt.runtime.operators.windows.windowed_rows`)."""
    from qtt.runtime.operators.windows import stream_time_operator, windowed_rows

    processor, output = stream_time_operator(df, state)
    timed = context.stateful(df, [ROWPARTITION], processor, output)
    return timed if window.type == "SESSION" else windowed_rows(timed, window)


def _sessions(spec: AggregateSpec, step: s.AggregateStep, window: s.WindowExpression | None) -> AggregateProcessor:
    """The session-windowed aggregate operator; its state is the key's sessions."""
    from qtt.runtime.operators.stateful import struct
    from qtt.runtime.operators.windows import SessionAggregateProcessor, SessionSpec

    assert window is not None
    session = struct(
        [("start", st.LongType()), ("end", st.LongType())]
        + [(c.alias, to_spark(c.state_type)) for c in step.aggregations]
    )
    sessions = struct([("sessions", st.ArrayType(session))])
    return SessionAggregateProcessor(SessionSpec(spec, window.size_ms, window.grace_ms, window.retention_ms, sessions))


#: key formats whose bytes need the schema registry; their final windows are ordered by the key's JSON instead


def _final(
    context: BuildContext, out: DataFrame, step: s.StreamWindowedAggregateV1, source: Built, state: str
) -> DataFrame:
    """``EMIT FINAL``: the aggregate's rows held per partition until their window closes."""
    return _held_until_closed(context, out, step.internal_formats, source.schema, step.window, state)


def _held_until_closed(
    context: BuildContext,
    rows: DataFrame,
    formats: s.Formats,
    schema: LogicalSchema,
    window: s.WindowExpression,
    state: str,
    *,
    suppress: bool = False,
) -> DataFrame:
    """``rows`` of windows, each emitted once when it closes, by the window-final operator."""
    from qtt.runtime.operators.windows import FinalSpec, WindowFinalProcessor

    keyed = rows.withColumn(KEY_BYTES, key_bytes(context, formats, schema.key))
    processor = WindowFinalProcessor(FinalSpec(state, keyed.schema, window, suppress=suppress))
    return context.stateful(keyed, [ROWPARTITION], processor, keyed.schema).drop(KEY_BYTES)


@builds(ss.TableSuppressV1)
def table_suppress_v1(context: BuildContext, step: ss.TableSuppressV1, source: Built) -> Built:
    """Kafka Streams' suppress buffer over a windowed table's changes (ksqlDB before 0.28)."""
    from qtt.runtime.operators.stateful import state_name

    # a projection carries the window bounds for the sink's key, not as the pseudo columns
    bounded = source.df.withColumn(WINDOWSTART, col(WINDOW_START)).withColumn(WINDOWEND, col(WINDOW_END))
    state = state_name(step.context)
    held = _held_until_closed(context, bounded, step.internal_formats, source.schema, step.window, state, suppress=True)
    return Built(held.drop(WINDOWSTART, WINDOWEND), source.schema)


@builds(s.StreamAggregateV1)
def stream_aggregate_v1(context: BuildContext, step: s.StreamAggregateV1, source: Built) -> Built:
    return Built(*build_aggregate(context, step, source))


@builds(s.StreamWindowedAggregateV1)
def stream_windowed_aggregate_v1(context: BuildContext, step: s.StreamWindowedAggregateV1, source: Built) -> Built:
    return Built(*build_aggregate(context, step, source, window=step.window))


@builds(s.TableAggregateV1)
def table_aggregate_v1(context: BuildContext, step: s.TableAggregateV1, source: Built) -> Built:
    # the undo rows come from the table group-by's OP column
    return Built(*build_aggregate(context, step, source))


@builds(s.TableAggregateV2)
def table_aggregate_v2(context: BuildContext, step: s.TableAggregateV2, source: Built) -> Built:
    return Built(*build_aggregate(context, step, source, emit_once_per_input=True))


@builds(s.TableGroupByV1)
def table_group_by_v1(context: BuildContext, step: s.TableGroupByV1, source: Built) -> Built:
    from qtt.runtime.operators.stateful import GroupBySpec, TableGroupByProcessor, state_name, struct

    compile_ = Compiler()
    groups = [compile_(g.expression).alias(g.alias) for g in step.group_by_expressions]
    arguments = [compile_(a.expression).alias(a.alias) for a in step.argument_expressions]
    table_keys = [c.name for c in source.schema.key]
    # A grouping column named like a table key or a pseudo column is that very column
    # (GROUP BY ID, GROUP BY ROWTIME), so the one column serves as both.
    taken = {g.alias for g in step.group_by_expressions}
    pseudo = untaken(PSEUDO_COLUMNS, taken)
    df = source.df.select(
        *[col(k) for k in untaken(table_keys, taken)],
        *groups,
        *arguments,
        *[col(c) for c in pseudo],
        col(SEQ),
        col(TOMBSTONE),
        # one input may change several rows (a foreign-key join's right side): their order
        (col(ORDER) if ORDER in source.df.columns else F.lit(0)).cast("int").alias(ORDER),
    )
    columns = [g.alias for g in step.group_by_expressions] + [a.alias for a in step.argument_expressions]
    types = {f.name: f.dataType for f in df.schema.fields}
    spec = GroupBySpec(
        state_name=state_name(step.context),
        state_schema=struct([(c, types[c]) for c in columns]),
        columns=tuple(columns),
        group_columns=tuple(g.alias for g in step.group_by_expressions),
    )
    output = struct(
        [(c, types[c]) for c in columns]
        + [(c, PSEUDO_TYPES[c]) for c in pseudo]
        + [(SEQ, st.LongType()), (OP, st.IntegerType()), (ORDER, st.IntegerType())]
    )
    out = context.stateful(df, table_keys, TableGroupByProcessor(spec), output)
    keys = [g.alias for g in step.group_by_expressions]
    return Built(out, context.schema_of(out, keys, [a.alias for a in step.argument_expressions]))
