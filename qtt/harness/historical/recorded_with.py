"""How a historical folder was recorded, where qtt's way of replaying changed since: a folder
replays the way it was recorded, so its golden stays right without an edit.

Each change names the first recording time (the ``<epoch-ms>`` of the folder's name) that has it.
"""

from __future__ import annotations

from dataclasses import replace

from qtt.harness.historical.plan_store import HistoricalFolder
from qtt.runtime.jobs import CAPTURE, ReplayMode

#: A staged group places each row in the micro-batch of the record that caused it. Before, it
#: placed it by the ``seq`` of that record, and a seq that spans micro-batches (the rows one
#: EXPLODE makes of an input, read record by record by a later query) put all its rows in the
#: last one: an internal topic records their micro-batch. The last folder placed that way was
#: recorded at 2026-12-06 13:06 UTC, the first placed per record at 14:28 UTC.
PER_RECORD_PLACEMENT_SINCE = 1796565600000  # 2026-12-06 14:00 UTC


def replay_mode(folder: HistoricalFolder) -> ReplayMode:
    """The mode a folder's plan replays with: state read back, rows placed as it was recorded."""
    return replace(CAPTURE, last_batch_of_seq=folder.epoch_ms < PER_RECORD_PLACEMENT_SINCE)
