"""Header columns of a source, read from the record's Kafka headers (ksqlDB's rules).

``HEADERS`` is every header of the record in order, as ``ARRAY<STRUCT<KEY, VALUE>>`` (an
empty array when the record has none); ``HEADER('k')`` is the value of the last header
with key ``k``, or null.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt.plan.ir.schema import HEADERS, LogicalSchema
from qtt.runtime.spark.jvm_functions import per_session


def header_columns(schema: LogicalSchema, headers: Column) -> list[Column]:
    """One Spark column per header column of ``schema``, from the replay rows' ``headers``."""
    records = F.coalesce(headers, _no_headers())
    columns = []
    for column in schema.headers:
        if column.namespace == HEADERS:
            value = F.transform(records, lambda h: F.struct(h["key"].alias("KEY"), h["value"].alias("VALUE")))
        else:
            matching = F.filter(records, _has_key(column.header_key))
            # F.get is null past the end, so a key the record lacks reads as null.
            value = F.get(matching, F.size(matching) - 1)["value"]
        columns.append(value.alias(column.name))
    return columns


@per_session(maxsize=1)
def _no_headers() -> Column:
    return F.array().cast("array<struct<key:string,value:binary>>")


def _has_key(key: str | None) -> Callable[[Column], Column]:
    return lambda header: header["key"] == F.lit(key)
