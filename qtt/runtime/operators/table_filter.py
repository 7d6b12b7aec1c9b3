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

from collections.abc import Sequence

from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.plan.ir import steps as s
from qtt.plan.ir.expressions import ColumnRef, Expression, substitute, walk
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
from qtt.runtime.operators.stateful import PreviousRowProcessor, PreviousRowSpec, state_name, struct


@builds(s.TableFilterV3)
def table_filter_v3(context: BuildContext, step: s.TableFilterV3, source: Built) -> Built:
    df = source.df
    keys = [stored(c.name) for c in source.schema.key]
    keys += [c for c in (WINDOW_START, WINDOW_END) if c in df.columns]
    types = {f.name: f.dataType for f in df.schema.fields}
    kept = [stored(c.name) for c in source.schema.value] + [c for c in PSEUDO_COLUMNS if c in types]
    kept = list(dict.fromkeys(kept))
    previous = [(previous_name(name), types[name]) for name in kept]
    ordered = [] if ORDER in types else [(ORDER, st.IntegerType())]
    fields = [(f.name, f.dataType) for f in df.schema.fields] + previous + [(HAD_PREVIOUS, st.BooleanType())] + ordered
    spec = PreviousRowSpec(
        state_name=state_name(step.context),
        state_schema=struct([(name, types[name]) for name in kept]),
        output=tuple(name for name, _ in fields),
    )
    out = context.stateful(df, keys, PreviousRowProcessor(spec), struct(fields))
    compile_ = Compiler()
    passes = ~col(TOMBSTONE) & F.coalesce(compile_(step.filter_expression), F.lit(False))
    earlier = _on_previous(step.filter_expression, set(kept))
    passed = col(HAD_PREVIOUS) & F.coalesce(compile_(earlier), F.lit(False))
    filtered = out.where(passes | passed).withColumn(TOMBSTONE, col(TOMBSTONE) | ~passes)
    return Built(filtered.drop(*[name for name, _ in previous], HAD_PREVIOUS), source.schema)


def _on_previous(expression: Expression, kept: set[str]) -> Expression:
    """``expression`` over the previous row: each column it keeps read from its previous_name."""
    refs: Sequence[ColumnRef] = [ref for ref in walk(expression) if isinstance(ref, ColumnRef)]
    earlier: dict[Expression, Expression] = {
        ref: ColumnRef(name=previous_name(stored(ref.name)), sql_type=ref.sql_type)
        for ref in refs
        if stored(ref.name) in kept
    }
    return substitute(expression, earlier)
