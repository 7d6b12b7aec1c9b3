"""The deterministic replay source: a Python streaming data source with admission control.

It serves a fixed list of records, shaped like Kafka source rows, in micro-batches whose
boundaries the harness chooses (one record per batch for stateful plans, everything at once
for stateless ones). The records travel inside the query's options, so executors need no
shared disk.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

FORMAT_NAME = "qtt_replay"
SCHEMA = (
    "job INT, seq LONG, topic STRING, partition INT, offset LONG, timestamp LONG, key BINARY, value BINARY, "
    "headers ARRAY<STRUCT<key: STRING, value: BINARY>>"
)


@dataclass(frozen=True)
class ReplayRecord:
    """One record to replay; ``seq`` is its position in the case's input order.

    ``job`` tells apart the independent replays that share one streaming query.
    """

    job: int
    seq: int
    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def encode_options(records: Sequence[ReplayRecord], batch_ends: Sequence[int]) -> dict[str, str]:
    """The reader options that carry ``records`` and the micro-batch boundaries."""
    rows = [
        [
            r.job,
            r.seq,
            r.topic,
            r.partition,
            r.offset,
            r.timestamp,
            _b64(r.key),
            _b64(r.value),
            [[k, _b64(v)] for k, v in r.headers],
        ]
        for r in records
    ]
    return {"records": json.dumps(rows), "batch_ends": json.dumps(list(batch_ends))}


class _Slice(InputPartition):
    def __init__(self, rows: list[list[Any]]) -> None:
        super().__init__(len(rows))
        self.rows = rows


class ReplayStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are ``{"next": i}``: the index of the next record to serve."""

    def __init__(self, rows: list[list[Any]], batch_ends: list[int]) -> None:
        self.rows = rows
        self.batch_ends = sorted(set(batch_ends) | {len(rows)}) if rows else []
        self.largest_batch = max(
            (b - a for a, b in zip([0, *self.batch_ends], self.batch_ends, strict=False)), default=1
        )
        self.target = len(rows)

    def initialOffset(self) -> dict[str, int]:
        return {"next": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = len(self.rows)

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
        for job, seq, topic, part, offset, ts, key, value, headers in partition.rows:
            yield (job, seq, topic, part, offset, ts, _unb64(key), _unb64(value), [(k, _unb64(v)) for k, v in headers])

    def commit(self, end: dict[str, int]) -> None:
        pass


class ReplaySource(DataSource):
    """``spark.readStream.format("qtt_replay")``; see :func:`encode_options`."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        rows = json.loads(self.options.get("records", "[]"))
        batch_ends = json.loads(self.options.get("batch_ends", "[]"))
        return ReplayStreamReader(rows, batch_ends)


def register(session: SparkSession) -> None:
    session.dataSource.register(ReplaySource)
