"""The foreign-key join's builder: the left table's operator, then the join's, on the shared
stateful path (see :mod:`qtt.runtime.operators.fk_joins` for what they do).

The left rows, with their foreign key (``left_join_expression``) and their key's bytes in the
left table's key format, run through the left table's operator, keyed by the left key (state
``KafkaTopic_Left-Reduce``, as ksqlDB names the left table's store). What it asks of the join,
keyed by foreign key, is unioned with the right rows, keyed by their key, into the join's
operator (state ``KafkaTopic_Right-Reduce`` and ``<context>-subscriptions``: per foreign key,
the left rows that name it).
"""

from __future__ import annotations

import dataclasses

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.plan.ir import join_steps as js
from qtt.runtime.build.compiler import Compiler
from qtt.runtime.build.context import BuildContext, Built, builds, key_bytes
from qtt.runtime.build.names import (
    CURRENT,
    INSTRUCTION,
    JOIN_SIDE,
    KEY_BYTES,
    ORDER,
    ROWOFFSET,
    ROWPARTITION,
    ROWTIME,
    SEQ,
    TOMBSTONE,
    col,
    data_col,
    spark_safe,
)
from qtt.runtime.operators.join_builder import CARRIED, grouped, restored, side_state


def build_foreign_key_join(
    context: BuildContext, step: js.ForeignKeyTableTableJoinV1, left: Built, right: Built
) -> tuple[DataFrame, list[str], list[str]]:
    """The joined rows (key: the left key columns, then the left columns, the right key and the
    right columns), their key column names and their value column names."""
    from qtt.runtime.operators.fk_joins import (
        RIGHT,
        ForeignKeyJoinProcessor,
        ForeignKeyJoinSpec,
        LeftTableProcessor,
        LeftTableSpec,
    )
    from qtt.runtime.operators.joins import OUTPUT_SYSTEM
    from qtt.runtime.operators.stateful import state_name, struct

    left_keys = [c.name for c in left.schema.key]
    (right_key,) = [c.name for c in right.schema.key]
    left_values = [c.name for c in left.schema.value]
    right_values = [c.name for c in right.schema.value]
    original = {spark_safe(n): n for n in (*left_keys, *left_values, right_key, *right_values)}
    key_names, foreign_key = [spark_safe(k) for k in left_keys], spark_safe(right_key)
    left_columns = [spark_safe(c) for c in left_values]
    right_columns = [spark_safe(c) for c in right_values]
    order = col(ORDER) if ORDER in left.df.columns else F.lit(0)
    key_columns = [dataclasses.replace(c, name=spark_safe(c.name)) for c in left.schema.key]
    left_rows = (
        left.df.where(F.coalesce(*[data_col(left.df, k, named=False) for k in left_keys]).isNotNull())
        .select(
            *[data_col(left.df, k).alias(spark_safe(k)) for k in left_keys],
            Compiler()(step.left_join_expression).alias(foreign_key),
            *[data_col(left.df, c).alias(spark_safe(c)) for c in left_values],
            *[col(c) for c in CARRIED],
            order.cast("int").alias(ORDER),
        )
        .withColumn(KEY_BYTES, key_bytes(context, step.internal_formats, key_columns))
    )
    types = {f.name: f.dataType for f in left_rows.schema.fields}
    keys = [(name, types[name]) for name in key_names]
    left_stored = struct(
        [(c, types[c]) for c in (*left_columns, foreign_key)] + [(KEY_BYTES, st.BinaryType()), (ROWTIME, st.LongType())]
    )
    left_spec = LeftTableSpec(
        state=side_state(step.left_source),
        key_names=tuple(key_names),
        columns=tuple(left_columns),
        foreign_key=foreign_key,
        stored=left_stored,
        left_join=step.join_type == "LEFT",
    )
    asks_schema = struct(
        keys
        + [(f.name, f.dataType) for f in left_stored.fields]
        + [
            (INSTRUCTION, st.IntegerType()),
            (JOIN_SIDE, st.IntegerType()),
            (ROWPARTITION, st.IntegerType()),
            (ROWOFFSET, st.LongType()),
            (SEQ, st.LongType()),
            (TOMBSTONE, st.BooleanType()),
            (ORDER, st.IntegerType()),
        ]
    )
    keyed, grouping = grouped(left_rows, keys)
    asks = context.stateful(keyed, grouping, LeftTableProcessor(left_spec), asks_schema)
    right_order = col(ORDER) if ORDER in right.df.columns else F.lit(0)
    right_rows = right.df.where(data_col(right.df, right_key).isNotNull()).select(
        data_col(right.df, right_key).alias(foreign_key),
        F.lit(RIGHT).alias(JOIN_SIDE),
        *[data_col(right.df, c).alias(spark_safe(c)) for c in right_values],
        *[col(c) for c in CARRIED],
        right_order.cast("int").alias(ORDER),
    )
    union = asks.unionByName(right_rows, allowMissingColumns=True)
    types = {f.name: f.dataType for f in union.schema.fields}
    spec = ForeignKeyJoinSpec(
        join_type=step.join_type,
        keys=tuple(keys),
        foreign_key=foreign_key,
        foreign_key_type=types[foreign_key],
        left_columns=tuple(left_columns),
        right_columns=tuple(right_columns),
        states=(side_state(step.right_source), f"{state_name(step.context)}-subscriptions"),
        right_stored=struct([(c, types[c]) for c in right_columns] + [(ROWTIME, st.LongType())]),
        subscriber=struct(
            [(KEY_BYTES, st.BinaryType()), *keys]
            + [(c, types[c]) for c in left_columns]
            + [(ROWTIME, st.LongType()), (CURRENT, st.BooleanType())]
        ),
    )
    output = struct(keys + [(c, types[c]) for c in (*left_columns, foreign_key, *right_columns)] + list(OUTPUT_SYSTEM))
    keyed, grouping = grouped(union, [(foreign_key, types[foreign_key])])
    joined = context.stateful(keyed, grouping, ForeignKeyJoinProcessor(spec), output)
    values = [original[c] for c in (*left_columns, foreign_key, *right_columns)]
    return restored(joined, original), left_keys, values


@builds(js.ForeignKeyTableTableJoinV1)
def fk_table_table_join_v1(
    context: BuildContext, step: js.ForeignKeyTableTableJoinV1, left: Built, right: Built
) -> Built:
    df, keys, values = build_foreign_key_join(context, step, left, right)
    return Built(df, context.schema_of(df, keys, values))
