"""The replay source's stream reader on pyspark 4.1, which has no admission control.

Spark asks a Python streaming source for its latest offset with nothing else, once per
micro-batch it plans, and the query runs under the default trigger until nothing new is
available (:func:`qtt.runtime.spark.lines.run_to_end`). So each call steps one micro-batch
boundary further: the batches are the ones the harness chose, as on later lines. A query that
starts from a checkpoint (a restart, a restored checkpoint) starts stepping where its offset
log's last micro-batch ended.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qtt.runtime.spark.source.slices import SlicedStreamReader, batch_ends, stop_target


class SteppedStreamReader(SlicedStreamReader):
    """Offsets are ``{"next": i}``: the index of the next record to serve."""

    def __init__(
        self, rows: list[list[Any]], ends: list[int], stop_file: str | None = None, checkpoint: str | None = None
    ) -> None:
        self.rows = rows
        self.stop_file = stop_file
        self.batch_ends = batch_ends(rows, ends)
        self.position = logged_position(checkpoint)

    def initialOffset(self) -> dict[str, int]:
        return {"next": 0}

    def latestOffset(self) -> dict[str, int]:  # type: ignore[override]  # pyspark 4.1: no arguments
        target = stop_target(self.rows, self.stop_file)
        step = next((b for b in self.batch_ends if b > self.position), self.position)
        self.position = max(self.position, min(step, target))
        return {"next": self.position}


def logged_position(checkpoint: str | None) -> int:
    """Where the last micro-batch in ``checkpoint``'s offset log ended (0 without one).

    An offset log entry is ``v1``, the batch's metadata, then one line per source; a replay
    query reads one source, this one.
    """
    offsets = Path(checkpoint) / "offsets" if checkpoint else None
    if offsets is None or not offsets.is_dir():
        return 0
    batches = [int(entry.name) for entry in offsets.iterdir() if entry.name.isdigit()]
    if not batches:
        return 0
    logged = (offsets / str(max(batches))).read_text(encoding="utf-8").splitlines()
    return int(json.loads(logged[2])["next"])
