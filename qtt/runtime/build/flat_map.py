"""Table functions in Spark: each returns, per input row, the ARRAY of rows it emits.

ksqlDB's UDTFs (``io.confluent.ksql.function.udtf``) return a list per input row; the
flat-map step (:meth:`qtt.runtime.build.builder.PlanBuilder.stream_flat_map_v1`) zips the lists of
all the query's table functions and emits one row per position.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.plan.ir import expressions as e
from qtt.runtime.spark.spark_types import to_spark

#: ksqlDB's CUBE_EXPLODE fails on more input columns (2^N rows); qtt emits no row for them.
CUBE_MAX_COLUMNS = 20


def explode(call: e.Call, args: Sequence[Column]) -> Column:
    # Explode.java returns the list itself: a null list emits nothing, a null element a null.
    return args[0]


def cube_explode(call: e.Call, args: Sequence[Column]) -> Column:
    """Cube.java: every combination of the elements and nulls, a null element only once.

    Bit ``n - 1 - j`` of the mask ``0 .. 2^n - 1`` keeps element ``j``; masks that would keep
    a null element are skipped, as they repeat a row where that element is dropped.
    """
    array = args[0]
    n = F.size(array)
    masks = F.sequence(F.lit(0), F.call_function("shiftleft", F.lit(1), n) - 1)

    def keeps(mask: Column, j: Column) -> Column:
        return F.call_function("shiftright", mask, n - 1 - j).bitwiseAND(F.lit(1)) == 1

    indices = F.when(n == 0, F.array().cast("array<int>")).otherwise(F.sequence(F.lit(0), n - 1))
    canonical = F.filter(masks, lambda m: F.forall(indices, lambda j: F.get(array, j).isNotNull() | ~keeps(m, j)))
    rows = F.transform(
        canonical,
        lambda m: F.transform(array, lambda x, j: F.when(keeps(m, j), x)),
    )
    nothing = F.array().cast(st.ArrayType(to_spark(call.sql_type)))
    return F.when(array.isNull() | (n > CUBE_MAX_COLUMNS), nothing).otherwise(rows)


#: name -> the Spark implementation: the resolved call and its compiled arguments -> the rows.
IMPLEMENTATIONS: dict[str, Callable[[e.Call, Sequence[Column]], Column]] = {
    "EXPLODE": explode,
    "CUBE_EXPLODE": cube_explode,
}
