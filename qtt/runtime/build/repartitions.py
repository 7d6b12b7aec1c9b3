"""Re-keying a stream, and the repartition topics a join writes for its re-keyed inputs.

Kafka Streams sends a stream that was re-keyed ahead of a join through a repartition topic
named after the join (``<queryId>-Join-left-repartition``, ``-Join-right-repartition`` for a
stream-stream join, ``-Join-repartition`` for a stream-table one), dropping the records whose
new key is null. A :class:`~qtt.plan.ir.steps.StreamSelectKeyV2` records that topic: its rows run
as one more branch of the replay's sink query (no state, no micro-batch of its own), each with
its key and value as JSON text, and the executor turns them into an internal topic
(:func:`topic_of`), ordered by micro-batch, then input record, then the order a stateful step
gave one input's rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt import sqltypes as t
from qtt.plan.ir import steps as s
from qtt.plan.ir.expressions import column_names
from qtt.plan.ir.schema import Column as SchemaColumn
from qtt.plan.ir.schema import LogicalSchema
from qtt.runtime.build.compiler import Compiler
from qtt.runtime.build.names import (
    NULL_KEY,
    ORDER,
    ROWPARTITION,
    ROWTIME,
    SEQ,
    SYSTEM_COLUMNS,
    TOMBSTONE,
    col,
    data_col,
    stored,
)
from qtt.runtime.jobs import APPENDED, InternalRecord, InternalTopic

# The fields of a repartition topic's rows in a replay's unioned sink (see execute.sink_rows).
TOPIC_FIELD, KEY_FIELD, VALUE_FIELD = "repartition", "key_json", "value_json"


@dataclass(frozen=True)
class Repartition:
    """A repartition topic of one query: rows of ``seq, order, timestamp, partition`` and the
    topic, key and value columns of :mod:`qtt.runtime.execute.sink_rows`."""

    topic: str
    df: DataFrame
    key_schema: str
    value_schema: str


def select_key(
    step: s.StreamSelectKeyV1 | s.StreamSelectKeyV2,
    source_df: DataFrame,
    source_schema: LogicalSchema,
    schema_of: Callable[[DataFrame, list[str], list[str]], LogicalSchema],
) -> tuple[DataFrame, LogicalSchema]:
    """The rows re-keyed by the step's key expressions; old key columns move to the value."""
    compile_ = Compiler()
    keys = [sel.alias for sel in step.key_expressions]
    old_keys = {c.name for c in source_schema.key}
    key_cols = []
    for sel in step.key_expressions:
        column = compile_(sel.expression)
        # ksqlDB evaluates a key expression on the old key when it reads only key columns;
        # otherwise on the value, which a tombstone does not have: its new key is null.
        if not column_names(sel.expression) <= old_keys:
            column = F.when(col(TOMBSTONE), F.lit(None)).otherwise(column)
        key_cols.append(column.alias(stored(sel.alias)))
    value_names = [c.name for c in source_schema.value] + [c.name for c in source_schema.key]
    values = [n for i, n in enumerate(value_names) if n not in keys and n not in value_names[:i]]
    system = [col(n) for n in SYSTEM_COLUMNS if n != NULL_KEY]
    # a stateful step's outputs of one input keep their order through the re-key
    system += [col(ORDER)] if ORDER in source_df.columns else []
    # PARTITION BY builds a new key from its expressions; only PARTITION BY NULL leaves none.
    null_key = F.lit(not keys).alias(NULL_KEY)
    df = source_df.select(*key_cols, *[col(v) for v in values], *system, null_key)
    return df, schema_of(df, keys, values)


def repartition(query_id: str, step: s.StreamSelectKeyV2, df: DataFrame, schema: LogicalSchema) -> Repartition:
    """The records the re-keyed rows ``df`` write to the step's repartition topic."""
    topic = f"{query_id}-{step.repartition_name}-repartition"
    keys = [data_col(df, c.name) for c in schema.key]
    written = df.where(F.coalesce(*keys).isNotNull())
    rows = written.select(
        col(SEQ).alias("seq"),
        # a re-keyed join result writes several records for one input, in the join's order
        (col(ORDER) if ORDER in df.columns else F.lit(0)).cast("int").alias("order"),
        col(ROWTIME).cast("long").alias("timestamp"),
        col(ROWPARTITION).cast("int").alias("partition"),
        F.lit(topic).alias(TOPIC_FIELD),
        _json_text(df, schema.key).alias(KEY_FIELD),
        _json_text(df, schema.value).alias(VALUE_FIELD),
    )
    return Repartition(
        topic=topic,
        df=rows,
        key_schema=_struct_text(schema.key),
        value_schema=_struct_text(schema.value),
    )


def written(row: Any) -> bool:
    """Whether a row of the sink query is a repartition's, not a sink's."""
    return TOPIC_FIELD in row.__fields__ and row[TOPIC_FIELD] is not None


def topic_of(repartition: Repartition, rows: Sequence[tuple[int, Any]]) -> InternalTopic:
    """The internal topic of ``repartition`` from its ``(batch, row)`` pairs, in the order of
    the input records that wrote them, then of the step that wrote several for one input."""
    mine = [item for item in rows if written(item[1]) and item[1][TOPIC_FIELD] == repartition.topic]
    ordered = sorted(mine, key=_position)
    records = [
        InternalRecord(
            key=json.loads(row[KEY_FIELD]),
            value=json.loads(row[VALUE_FIELD]),
            change=APPENDED,
            batch=batch,
            partition=row["partition"] or 0,
            timestamp=row["timestamp"],
        )
        for batch, row in ordered
    ]
    return InternalTopic(repartition.topic, repartition.key_schema, repartition.value_schema, records)


def _position(item: tuple[int, Any]) -> tuple[int, int, int]:
    return item[0], item[1]["seq"], item[1]["order"] or 0


def _struct_text(columns: Sequence[SchemaColumn]) -> str:
    return str(t.Struct(tuple(t.Field(c.name, c.type) for c in columns)))


def _json_text(df: DataFrame, columns: Sequence[SchemaColumn]) -> Column:
    """The columns as a JSON object, decimals as their exact text (as state values are)."""
    types = {f.name: f.dataType for f in df.schema.fields}
    fields = []
    for c in columns:
        column = data_col(df, c.name)
        dtype = types.get(stored(c.name)) or types[c.name]
        fields.append(_exact(column, dtype).alias(c.name))
    return F.to_json(F.struct(*fields)) if fields else F.lit("{}")


def _exact(column: Column, dtype: st.DataType) -> Column:
    if isinstance(dtype, st.DecimalType):
        return column.cast("string")
    if isinstance(dtype, st.ArrayType):
        return F.transform(column, lambda item: _exact(item, dtype.elementType))
    if isinstance(dtype, st.MapType):
        return F.transform_values(column, lambda _, item: _exact(item, dtype.valueType))
    if isinstance(dtype, st.StructType):
        inner = [_exact(column[f.name], f.dataType).alias(f.name) for f in dtype.fields]
        return F.when(column.isNull(), F.lit(None)).otherwise(F.struct(*inner))
    return column
