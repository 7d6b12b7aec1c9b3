"""The replay source's stream reader where pyspark has admission control (4.2 and later).

Spark asks for each micro-batch's end with a read limit; under ``Trigger.AvailableNow`` the
query stops by itself at the target, which a query of the restart scenario reads from its stop
file before each start.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from qtt.runtime.spark.source.slices import SlicedStreamReader, batch_ends, stop_target


class AdmittedStreamReader(SlicedStreamReader, SupportsTriggerAvailableNow):
    """Offsets are ``{"next": i}``: the index of the next record to serve."""

    def __init__(self, rows: list[list[Any]], ends: list[int], stop_file: str | None = None) -> None:
        self.rows = rows
        self.stop_file = stop_file
        self.batch_ends = batch_ends(rows, ends)
        self.largest_batch = max(
            (b - a for a, b in zip([0, *self.batch_ends], self.batch_ends, strict=False)), default=1
        )
        self.target = len(rows)

    def initialOffset(self) -> dict[str, int]:
        return {"next": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = stop_target(self.rows, self.stop_file)

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
