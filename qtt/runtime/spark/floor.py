"""Measure Spark's own floor on this machine: one query start, and one micro-batch.

The benchmark reports qtt's costs as ratios to these figures, so that a number means the
same thing on a laptop and on a slow CI runner.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from qtt.runtime.jobs import FORMAT_NAME, ReplayRecord, encode_options
from qtt.runtime.spark import lines


@dataclass(frozen=True)
class Floor:
    """Medians over the repetitions, in seconds."""

    query_start: float  # a trivial query over the replay source, start to stop, minus its batch
    micro_batch: float  # one more micro-batch of that query
    repetitions: int


def _trivial_query(session: SparkSession, batches: int, checkpoint: str) -> float:
    records = [
        ReplayRecord(job=0, seq=i, topic="t", partition=0, offset=i, timestamp=i, key=None, value=b"x")
        for i in range(batches)
    ]
    raw = session.readStream.format(FORMAT_NAME).options(**encode_options(records, range(1, batches + 1))).load()
    began = time.perf_counter()
    selected = raw.select(F.col("seq"), F.length("value").alias("n"))
    lines.run_to_end(selected.writeStream.foreachBatch(_collect).option("checkpointLocation", checkpoint))
    return time.perf_counter() - began


def measure(session: SparkSession, *, repetitions: int = 3, batches: int = 5) -> Floor:
    """Run a trivial query with 1 and with ``batches`` micro-batches, ``repetitions`` times."""
    root = tempfile.mkdtemp(prefix="qtt-floor-")
    try:
        _trivial_query(session, 1, f"{root}/warmup")  # JIT and Python workers, not measured
        one, many = [], []
        for i in range(repetitions):
            one.append(_trivial_query(session, 1, f"{root}/one{i}"))
            many.append(_trivial_query(session, batches, f"{root}/many{i}"))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    batch = max((statistics.median(many) - statistics.median(one)) / (batches - 1), 0.0)
    return Floor(query_start=max(statistics.median(one) - batch, 0.0), micro_batch=batch, repetitions=repetitions)


def _collect(df: DataFrame, _batch_id: int) -> None:
    df.collect()
