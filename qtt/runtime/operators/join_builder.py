"""The join steps' one builder: both inputs, keyed by the join key, unioned into one operator.

Each input's rows carry their side (:data:`~qtt.runtime.build.names.JOIN_SIDE`) and the join key,
under the join's key column name; the union is grouped by the key and runs through
:class:`qtt.runtime.operators.joins.JoinProcessor`, which keeps each table side's rows (state
``<context>-Reduce`` after the source's context, as ksqlDB's ``KafkaTopic_Right-Reduce``
store; a side that is itself a join keeps ``<join context>-Materialize``).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.errors import RuntimeBuildError
from qtt.plan.ir import join_steps as js
from qtt.plan.ir import steps as s
from qtt.runtime.build.context import BuildContext, Built, builds, key_bytes
from qtt.runtime.build.names import (
    HAD_PREVIOUS,
    JOIN_SIDE,
    KEY_BYTES,
    ORDER,
    ROWOFFSET,
    ROWPARTITION,
    ROWTIME,
    SEQ,
    TOMBSTONE,
    WINDOW_END,
    WINDOW_START,
    col,
    data_col,
    group_column,
    previous_name,
    spark_safe,
)

if TYPE_CHECKING:
    from qtt.runtime.operators.grace_joins import GraceJoinProcessor

#: the system columns a join carries from the row that caused each output
CARRIED = (ROWTIME, ROWPARTITION, ROWOFFSET, SEQ, TOMBSTONE)


def build_join(context: BuildContext, step: js.JoinStep, left: Built, right: Built) -> tuple[DataFrame, list[str]]:
    """The joined rows (key ``step.key_col_name``, then each side's columns) and their value
    column names."""
    from qtt.runtime.operators.joins import LEFT, RIGHT, JoinProcessor, JoinSpec
    from qtt.runtime.operators.stateful import state_name, struct

    # the operator sees stand-ins for names PySpark cannot look up; the output gets them back
    original = {spark_safe(n): n for n in _names(step, left, right)}
    original.update({previous_name(safe): previous_name(name) for safe, name in list(original.items())})
    key_name = spark_safe(step.key_col_name)
    # windowed sources join on their key and window: its start, and for sessions its end too
    windowed = WINDOW_START in left.df.columns and WINDOW_START in right.df.columns
    bounds = [WINDOW_START, WINDOW_END] if windowed else []
    sides = []
    for which, built in ((LEFT, left), (RIGHT, right)):
        keys = [c.name for c in built.schema.key]
        if len(keys) != 1:
            raise KeyError(f"one key column on each side of {step.context}, not {keys}")
        (key,) = keys
        # a side's key column named like the join's key is the join key itself, not a column of the side
        names = ([key] if key != step.key_col_name else []) + [c.name for c in built.schema.value]
        columns = [spark_safe(c) for c in names]
        order = col(ORDER) if ORDER in built.df.columns else F.lit(0)
        rows = built.df.where(data_col(built.df, key).isNotNull()).select(
            data_col(built.df, key).alias(key_name),
            F.lit(which).alias(JOIN_SIDE),
            *[data_col(built.df, c).alias(spark_safe(c)) for c in names],
            *[col(c) for c in (*CARRIED, *bounds)],
            order.cast("int").alias(ORDER),
        )
        sides.append((columns, rows))
    (left_columns, left_rows), (right_columns, right_rows) = sides
    clash = set(left_columns) & set(right_columns) | {key_name} & set(left_columns + right_columns)
    if clash:
        msg = f"{step.type_tag} at {step.context}: both sides have columns {sorted(clash)}"
        raise RuntimeBuildError(msg)
    union = left_rows.unionByName(right_rows, allowMissingColumns=True)
    types = {f.name: f.dataType for f in union.schema.fields}
    key_type = types[key_name]
    if isinstance(step, js.StreamStreamJoinV2):
        output = _output_schema(key_name, key_type, types, left_columns + right_columns, [])
        key_column = dataclasses.replace(left.schema.key[0], name=key_name)
        keyed = union.withColumn(KEY_BYTES, key_bytes(context, step.internal_formats, [key_column]))
        processor = _grace_processor(step, key_name, types, (left_columns, right_columns))
        joined = context.stateful(keyed, [ROWPARTITION], processor, output)
        return restored(joined, original), [original[c] for c in (*left_columns, *right_columns)]
    table_table = isinstance(step, js.TableTableJoinV1)
    window = _left_window(step) if isinstance(step, js.StreamStreamJoinV1) else None
    if window is not None:  # Kafka Streams' store names for a join named after its context
        states: tuple[str | None, str | None] = (
            f"{state_name(step.context)}-this-join-store",
            f"{state_name(step.context)}-other-join-store",
        )
    else:
        states = (side_state(step.left_source) if table_table else None, side_state(step.right_source))
    spec = JoinSpec(
        table_table=table_table,
        join_type=step.join_type,
        key_name=key_name,
        key_type=key_type,
        columns=(tuple(left_columns), tuple(right_columns)),
        states=states,
        stored=(
            struct([(c, types[c]) for c in left_columns] + [(ROWTIME, st.LongType())]),
            struct([(c, types[c]) for c in right_columns] + [(ROWTIME, st.LongType())]),
        ),
        emit_previous=context.emits_previous(step),
        window=window,
        windowed=windowed,
    )
    previous = (
        [(previous_name(c), types[c]) for c in (*left_columns, *right_columns)] + [(HAD_PREVIOUS, st.BooleanType())]
        if spec.emit_previous
        else []
    )
    output = _output_schema(
        key_name, key_type, types, left_columns + right_columns, [(b, st.LongType()) for b in bounds] + previous
    )
    keyed, grouping = grouped(union, [(key_name, key_type)])  # the state's key: the internal topics' key
    joined = context.stateful(keyed, [*grouping, *_window_keys(step, bounds)], JoinProcessor(spec), output)
    return restored(joined, original), [original[c] for c in (*left_columns, *right_columns)]


def _names(step: js.JoinStep, left: Built, right: Built) -> list[str]:
    """Every data column name the join's output holds (its key and both sides' columns)."""
    return [step.key_col_name] + [c.name for built in (left, right) for c in (*built.schema.key, *built.schema.value)]


def grouped(df: DataFrame, columns: list[tuple[str, st.DataType]]) -> tuple[DataFrame, list[str]]:
    """``df`` and the columns that group it by ``columns``: as the aggregate does, a column of a
    type Spark cannot key state by is grouped by its JSON text."""
    grouping = []
    for name, type_ in columns:
        if isinstance(type_, (st.StructType, st.ArrayType, st.MapType)):
            df, name = df.withColumn(group_column(name), F.to_json(col(name))), group_column(name)
        grouping.append(name)
    return df, grouping


def restored(df: DataFrame, original: dict[str, str]) -> DataFrame:
    """``df`` with each stand-in column named as it was (see :func:`qtt.runtime.build.names.spark_safe`)."""
    if all(safe == name for safe, name in original.items()):
        return df
    return df.select(*[col(c).alias(original.get(c, c)) for c in df.columns])


def _output_schema(
    key_name: str,
    key_type: st.DataType,
    types: dict[str, st.DataType],
    columns: list[str],
    previous: list[tuple[str, st.DataType]],
) -> st.StructType:
    """A join's output rows: the key, both sides' columns, the system columns."""
    from qtt.runtime.operators.joins import OUTPUT_SYSTEM
    from qtt.runtime.operators.stateful import struct

    return struct([(key_name, key_type)] + [(c, types[c]) for c in columns] + list(OUTPUT_SYSTEM) + previous)


def _grace_processor(
    step: js.StreamStreamJoinV2,
    key_name: str,
    types: dict[str, st.DataType],
    columns: tuple[list[str], list[str]],
) -> GraceJoinProcessor:
    """The operator of a stream-stream join with a grace period, keyed by source partition."""
    from qtt.runtime.operators.grace_joins import GraceJoinProcessor, GraceJoinSpec
    from qtt.runtime.operators.stateful import state_name

    name = state_name(step.context)
    outer = f"{name}-outer-shared-join-store" if step.join_type != "INNER" else None
    spec = GraceJoinSpec(
        join_type=step.join_type,
        key_name=key_name,
        columns=(tuple(columns[0]), tuple(columns[1])),
        types=tuple((c, types[c]) for c in (key_name, *columns[0], *columns[1])),
        states=(f"{name}-this-join-store", f"{name}-other-join-store", outer),
        before_ms=_left_window(step)[0],
        after_ms=_left_window(step)[1],
        grace_ms=step.grace_ms,
    )
    return GraceJoinProcessor(spec)


def _left_window(step: js.StreamStreamJoinV1 | js.StreamStreamJoinV2) -> tuple[int, int]:
    """How far before and after a left row a right row may lie. ksqlDB runs a ``RIGHT`` join as
    the right stream's left join with the same ``JoinWindows``: there the bounds are the right
    row's, so a left row sees them swapped."""
    if step.join_type == "RIGHT":
        return step.after_ms, step.before_ms
    return step.before_ms, step.after_ms


def _window_keys(step: js.JoinStep, bounds: list[str]) -> list[str]:
    """What of a row's window joins it: a time window's start (Kafka Streams' windowed key bytes
    hold the start only, so a hopping and a tumbling window starting together meet), a session's
    start and end."""
    if not bounds:
        return []
    source = step.left_source
    while not isinstance(source, s.SourceStep):
        source = source.sources()[0]
    window = source.formats.window
    assert window is not None, f"{step.context}: windowed rows from a source without windows"
    return bounds if window.type == "SESSION" else bounds[:1]


def side_state(step: s.ExecutionStep) -> str:
    """The state variable holding a join side's rows, named after where they come from."""
    from qtt.runtime.operators.stateful import state_name

    while not isinstance(step, (s.SourceStep, js.JoinStep)):
        (step,) = step.sources()
    if isinstance(step, s.SourceStep):
        return state_name(step.context).removesuffix("-Source") + "-Reduce"
    return f"{state_name(step.context)}-Materialize"


def _built(context: BuildContext, step: js.JoinStep, left: Built, right: Built) -> Built:
    df, values = build_join(context, step, left, right)
    return Built(df, context.schema_of(df, [step.key_col_name], values))


for _step_class in (js.StreamTableJoinV1, js.StreamStreamJoinV1, js.StreamStreamJoinV2, js.TableTableJoinV1):
    builds(_step_class)(_built)
