"""The relay between a staged replay's queries: Parquet folders, read by Spark's file source.

A staged replay (:mod:`qtt.runtime.staged`) runs its stateless steps and its stateful
operators as queries of their own, and hands each query's rows to the next through a folder:

- a stage's input is written one file per micro-batch (:func:`write_batches`) and read one
  file per micro-batch, in the order of the files' modification times, which the writer makes
  strictly increasing (Spark's file source orders new files by them);
- an operator's output is written as one file (:func:`write_rows`) and read in one
  micro-batch.

The rows stay Arrow from the query that wrote them to the file (``DataFrame.toArrow``), so
values keep their exact types and a map keeps the order of its entries (``collect()`` hands a
map to Python through a Java hash map, which loses it). The folders live next to the
checkpoints, which executors write and read anyway. Spark's file source is JVM-only: a Python
streaming source costs its query a Python process on the driver (about 0.4 s to start, each).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as st


def write_batches(folder: Path, batches: Sequence[pa.Table]) -> None:
    """One file per micro-batch, batch *k* the *k*-th file by modification time."""
    folder.mkdir(parents=True, exist_ok=True)
    first = int(time.time()) - len(batches)
    for index, table in enumerate(batches):
        path = folder / f"batch-{index:06d}.parquet"
        pq.write_table(table, path)
        os.utime(path, (first + index, first + index))


def write_rows(folder: Path, table: pa.Table) -> None:
    """``table``'s rows as one file (none when it has no rows: the relay serves no micro-batch)."""
    folder.mkdir(parents=True, exist_ok=True)
    if table.num_rows:
        pq.write_table(table, folder / "rows.parquet")


def relay_stream(session: SparkSession, schema: st.StructType, folder: Path, *, one_batch: bool) -> DataFrame:
    """The rows written to ``folder``, of ``schema``; ``one_batch``: all in one micro-batch, else
    one file per micro-batch. The folder is made now: Spark's file source wants it to exist."""
    folder.mkdir(parents=True, exist_ok=True)
    reader = session.readStream.schema(schema)
    if not one_batch:
        reader = reader.option("maxFilesPerTrigger", 1)
    return reader.parquet(str(folder))
