"""A table filter judged against each key's previous row as well as the new one.

The step below sends the previous row along, as ``previous_name(column)`` columns and
``HAD_PREVIOUS`` (an aggregate for ``HAVING``, a table join, or ``tableFilterV3``'s own
operator). Kafka Streams' ``KTableFilter`` with old values: a row that passes is emitted as it
is; one that does not is a delete of its key only when the previous row passes the same
expression, and nothing otherwise.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from qtt.plan.ir.expressions import ColumnRef, Expression, substitute, walk
from qtt.runtime.build.compiler import Compiler
from qtt.runtime.build.names import HAD_PREVIOUS, TOMBSTONE, col, previous_name


def filter_against_previous(df: DataFrame, expression: Expression, passes: Column) -> DataFrame:
    """``df``'s rows that ``passes``, and a delete for each other row whose previous row passes
    ``expression`` (each column it reads taken from the previous row where ``df`` carries one)."""
    earlier: dict[Expression, Expression] = {
        ref: ColumnRef(name=previous_name(ref.name), sql_type=ref.sql_type)
        for ref in walk(expression)
        if isinstance(ref, ColumnRef) and previous_name(ref.name) in df.columns
    }
    passed = col(HAD_PREVIOUS) & F.coalesce(Compiler()(substitute(expression, earlier)), F.lit(False))
    return df.where(passes | passed).withColumn(TOMBSTONE, col(TOMBSTONE) | ~passes)
