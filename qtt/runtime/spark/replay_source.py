"""The deterministic replay source: a Python streaming data source with admission control.

It serves a fixed list of records, shaped like Kafka source rows, in micro-batches whose
boundaries the harness chooses (one record per batch for stateful plans, everything at once
for stateless ones). The records travel inside the query's options, so executors need no
shared disk; their encoding is plain data, in :mod:`qtt.runtime.jobs`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from qtt.runtime.jobs import FORMAT_NAME, SCHEMA, decode_options, decode_row


class _Slice(InputPartition):
    def __init__(self, rows: list[list[Any]]) -> None:
        super().__init__(len(rows))
        self.rows = rows


class ReplayStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are ``{"next": i}``: the index of the next record to serve."""

    def __init__(self, rows: list[list[Any]], batch_ends: list[int], stop_file: str | None = None) -> None:
        self.rows = rows
        self.stop_file = stop_file
        self.batch_ends = sorted(set(batch_ends) | {len(rows)}) if rows else []
        self.largest_batch = max(
            (b - a for a, b in zip([0, *self.batch_ends], self.batch_ends, strict=False)), default=1
        )
        self.target = len(rows)

    def initialOffset(self) -> dict[str, int]:
        return {"next": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        # A query that is to stop early (the restart scenario) is told where before each start.
        self.target = len(self.rows)
        if self.stop_file and Path(self.stop_file).is_file():
            self.target = min(self.target, int(Path(self.stop_file).read_text(encoding="utf-8")))

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.largest_batch)

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        begin = start["next"]
        if isinstance(limit, ReadAllAvailable):
            return {"next": self.target}
        end = next((b for b in self.batch_ends if b > begin), begin)
        if isinstance(limit, ReadMaxRows):
            end = min(end, begin + limit.max_rows)
        return {"next": min(end, self.target)}

    def reportLatestOffset(self) -> dict[str, int]:
        return {"next": self.target}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        if end["next"] <= start["next"]:
            return []
        return [_Slice(self.rows[start["next"] : end["next"]])]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, _Slice)
        for row in partition.rows:
            yield decode_row(row)

    def commit(self, end: dict[str, int]) -> None:
        pass


class ReplayBatchReader(DataSourceReader):
    """All records at once, for a bounded batch query (the batch scenario)."""

    def __init__(self, rows: list[list[Any]]) -> None:
        self.rows = rows

    def partitions(self) -> Sequence[InputPartition]:
        return [_Slice(self.rows)]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, _Slice)
        for row in partition.rows:
            yield decode_row(row)


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
        return ReplayStreamReader(rows, ends, self.options.get("stop_file"))


def register(session: SparkSession) -> None:
    """Make ``format("qtt_replay")`` available in ``session``."""
    session.dataSource.register(ReplaySource)
