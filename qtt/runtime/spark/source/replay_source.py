"""The deterministic replay source: a Python streaming data source with admission control.

It serves a fixed list of records, shaped like Kafka source rows, in micro-batches whose
boundaries the harness chooses (one record per batch for stateful plans, everything at once
for stateless ones). The records travel inside the query's options, so executors need no
shared disk; their encoding is plain data, in :mod:`qtt.runtime.jobs`. Its stream reader is
:mod:`~qtt.runtime.spark.source.admitted_reader` where pyspark has admission control (4.2 and later),
else :mod:`~qtt.runtime.spark.source.stepped_reader` (see :mod:`qtt.runtime.spark.lines`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition

from qtt.runtime.jobs import FORMAT_NAME, SCHEMA, decode_options
from qtt.runtime.spark import lines
from qtt.runtime.spark.source.slices import Slice, read_slice


class ReplayBatchReader(DataSourceReader):
    """All records at once, for a bounded batch query (the batch scenario)."""

    def __init__(self, rows: list[list[Any]]) -> None:
        self.rows = rows

    def partitions(self) -> Sequence[InputPartition]:
        return [Slice(self.rows)]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        return read_slice(partition)


class ReplaySource(DataSource):
    """``spark.readStream.format("qtt_replay")``, or ``spark.read`` for a bounded batch query;
    see :func:`qtt.runtime.jobs.encode_options`."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> str:
        return SCHEMA

    def reader(self, schema: Any) -> DataSourceReader:
        return ReplayBatchReader(decode_options(self.options)[0])

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        rows, ends = decode_options(self.options)
        if lines.admission_control():
            from qtt.runtime.spark.source.admitted_reader import AdmittedStreamReader

            return AdmittedStreamReader(rows, ends, self.options.get("stop_file"))
        from qtt.runtime.spark.source.stepped_reader import SteppedStreamReader

        return SteppedStreamReader(rows, ends, self.options.get("stop_file"), self.options.get("checkpoint"))


def register(session: SparkSession) -> None:
    """Make ``format("qtt_replay")`` available in ``session``."""
    session.dataSource.register(ReplaySource)
