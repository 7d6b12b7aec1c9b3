"""The replay source's admission control (pure Python: no JVM).

Admission control for Python streaming sources arrived in pyspark 4.2; on 4.1 those tests are
skipped, and the stepping reader that stands in for it is tested in ``test_spark_lines.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from qtt.runtime.jobs import ReplayRecord, encode_options
from qtt.runtime.spark.source.replay_source import ReplaySource


def _limits() -> Any:
    return pytest.importorskip("pyspark.sql.streaming.datasource", reason="admission control needs pyspark 4.2")


def _reader(count: int, ends: list[int]):  # type: ignore[no-untyped-def]
    records = [
        ReplayRecord(job=0, seq=i, topic="t", partition=0, offset=i, timestamp=i, key=b"k", value=None)
        for i in range(count)
    ]
    return ReplaySource(encode_options(records, ends)).streamReader(None)


def test_batches_follow_the_boundaries() -> None:
    _limits()
    reader = _reader(5, [2, 3, 5])
    offset = reader.initialOffset()
    seen = []
    while True:
        end = reader.latestOffset(offset, reader.getDefaultReadLimit())
        if end == offset:
            break
        seen.append([row[1] for p in reader.partitions(offset, end) for row in reader.read(p)])
        offset = end
    assert seen == [[0, 1], [2], [3, 4]]


def test_read_all_available_ignores_boundaries() -> None:
    reader = _reader(4, [1, 2, 3, 4])
    assert reader.latestOffset({"next": 0}, _limits().ReadAllAvailable()) == {"next": 4}


def test_max_rows_limit_is_respected() -> None:
    reader = _reader(4, [4])
    assert reader.latestOffset({"next": 0}, _limits().ReadMaxRows(1)) == {"next": 1}


def test_bytes_and_nulls_survive_the_options() -> None:
    reader = _reader(1, [1])
    (row,) = list(reader.read(reader.partitions({"next": 0}, {"next": 1})[0]))
    assert row[6] == b"k" and row[7] is None
