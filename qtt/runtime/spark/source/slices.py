"""What every reader of the replay source shares: a micro-batch's records as one partition,
the micro-batch boundaries, and where a start of the query stops."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from qtt.runtime.jobs import decode_row
from qtt.runtime.spark.workers.worker_memory import freeze_once


class Slice(InputPartition):
    """A micro-batch's records, read as one partition."""

    def __init__(self, rows: list[list[Any]]) -> None:
        super().__init__(len(rows))
        self.rows = rows


def batch_ends(rows: Sequence[Any], ends: Sequence[int]) -> list[int]:
    """Every micro-batch's end offset, in order, the last one the end of ``rows``."""
    return sorted(set(ends) | {len(rows)}) if rows else []


def stop_target(rows: Sequence[Any], stop_file: str | None) -> int:
    """The offset a start of the query stops at: the stop file's, if there is one, else the end."""
    if stop_file and Path(stop_file).is_file():
        return min(len(rows), int(Path(stop_file).read_text(encoding="utf-8")))
    return len(rows)


def read_slice(partition: InputPartition) -> Iterator[tuple[Any, ...]]:
    assert isinstance(partition, Slice)
    freeze_once("source")
    for row in partition.rows:
        yield decode_row(row)


class SlicedStreamReader(DataSourceStreamReader):
    """What both stream readers do the same way: a micro-batch's rows are one partition, read
    back decoded; nothing to commit."""

    rows: list[list[Any]]

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        if end["next"] <= start["next"]:
            return []
        return [Slice(self.rows[start["next"] : end["next"]])]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        return read_slice(partition)

    def commit(self, end: dict[str, int]) -> None:
        pass
