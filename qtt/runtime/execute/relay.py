"""The relay between a staged replay's queries: Parquet folders, read by Spark's file source.

A staged replay (:mod:`qtt.runtime.execute.staged`) runs each stage and the sinks as queries of their
own, and hands what each slot's operator wrote to the later queries through a folder: one
file (:func:`write_rows`), read in one micro-batch (:func:`relay_stream`). The group's records
reach its queries the same way (:mod:`qtt.runtime.execute.group_source`).

The rows stay Arrow from the query that wrote them to the file (``DataFrame.toArrow``), so
values keep their exact types and a map keeps the order of its entries (``collect()`` hands a
map to Python through a Java hash map, which loses it). The folders live next to the
checkpoints, which executors write and read anyway. Spark's file source is JVM-only: a Python
streaming source costs its query a Python process on the driver (about 0.4 s to start, each).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as st


def write_rows(folder: Path, table: pa.Table, *, keep_empty: bool = False) -> None:
    """``table``'s rows as one file; none when it has no rows, unless ``keep_empty`` (a relay
    without a file serves no micro-batch, one with an empty file a micro-batch without rows)."""
    folder.mkdir(parents=True, exist_ok=True)
    if table.num_rows or keep_empty:
        pq.write_table(table, folder / "rows.parquet")


def relay_stream(session: SparkSession, schema: st.StructType, folder: Path) -> DataFrame:
    """The rows written to ``folder``, of ``schema``, in one micro-batch. The folder is made now:
    Spark's file source wants it to exist."""
    folder.mkdir(parents=True, exist_ok=True)
    return session.readStream.schema(schema).parquet(str(folder))
