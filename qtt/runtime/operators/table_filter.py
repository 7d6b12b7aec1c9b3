"""``tableFilterV3``: a table's WHERE that deletes a key only when its previous row passed.

A stateful operator keyed by the table's key keeps each key's previous source row (its value
and pseudo columns) and sends it along with every row, as ``previous_name(column)`` columns
and ``HAD_PREVIOUS``. The filter itself then runs in Spark, over the row and over the previous
row with the same compiled expression:

- the row passes: it is emitted as it is;
- it fails, or it is a delete: a delete of its key is emitted if the previous row passes;
  otherwise nothing (Kafka Streams' ``KTableFilter`` over a materialized source, KAFKA-10077).

The state is the source row, not whether it passed, so a ``CREATE OR REPLACE`` that changes the
expression judges the stored rows by the new one, as ksqlDB does with its materialized source.
"""

from __future__ import annotations

from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.plan.ir import steps as s
from qtt.runtime.build.compiler import Compiler
from qtt.runtime.build.context import BuildContext, Built, builds
from qtt.runtime.build.names import (
    HAD_PREVIOUS,
    ORDER,
    PSEUDO_COLUMNS,
    TOMBSTONE,
    WINDOW_END,
    WINDOW_START,
    col,
    previous_name,
    stored,
)
from qtt.runtime.build.previous_filter import filter_against_previous
from qtt.runtime.operators.stateful import PreviousRowProcessor, PreviousRowSpec, state_name, struct


@builds(s.TableFilterV3)
def table_filter_v3(context: BuildContext, step: s.TableFilterV3, source: Built) -> Built:
    df = source.df
    keys = [stored(c.name) for c in source.schema.key]
    keys += [c for c in (WINDOW_START, WINDOW_END) if c in df.columns]
    types = {f.name: f.dataType for f in df.schema.fields}
    # value columns never take a pseudo column's name (ksqlDB reserves them)
    kept = [c.name for c in source.schema.value] + [c for c in PSEUDO_COLUMNS if c in types]
    previous = [(previous_name(name), types[name]) for name in kept]
    ordered = [] if ORDER in types else [(ORDER, st.IntegerType())]
    fields = [(f.name, f.dataType) for f in df.schema.fields] + previous + [(HAD_PREVIOUS, st.BooleanType())] + ordered
    spec = PreviousRowSpec(
        state_name=state_name(step.context),
        state_schema=struct([(name, types[name]) for name in kept]),
        output=tuple(name for name, _ in fields),
    )
    out = context.stateful(df, keys, PreviousRowProcessor(spec), struct(fields))
    passes = ~col(TOMBSTONE) & F.coalesce(Compiler()(step.filter_expression), F.lit(False))
    filtered = filter_against_previous(out, step.filter_expression, passes)
    return Built(filtered.drop(*[name for name, _ in previous], HAD_PREVIOUS), source.schema)
