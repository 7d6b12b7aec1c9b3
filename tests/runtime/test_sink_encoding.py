"""A sink that leaves its encoding to the driver writes the records its UDFs would write: same
key and value bytes (windowed keys included), partitions and timestamps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from qtt.plan.statements import plan_statements
from qtt.runtime.execute import executor
from qtt.runtime.jobs import Job, ReplayMode, ReplayRecord
from qtt.sql import parse_statements

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

STATEMENTS = """
CREATE STREAM READINGS (SENSOR STRING KEY, LEVEL INT, TAGS MAP<STRING, INT>)
  WITH (kafka_topic='readings', format='JSON', partitions=3);
CREATE STREAM SPREAD WITH (partitions=4) AS SELECT * FROM READINGS;
CREATE STREAM KEPT AS SELECT SENSOR, LEVEL * 2 AS DOUBLED FROM READINGS WHERE LEVEL > 1;
CREATE STREAM WITH_MAP AS SELECT * FROM READINGS WHERE LEVEL > 1;
CREATE TABLE PER_SECOND AS SELECT SENSOR, COUNT(*) AS N FROM READINGS WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY SENSOR;
CREATE TABLE VISITS AS SELECT SENSOR, MAX(LEVEL) AS TOP FROM READINGS WINDOW SESSION (5 SECONDS) GROUP BY SENSOR;
"""


def _record(seq: int, key: str | None, value: object) -> ReplayRecord:
    data = None if value is None else json.dumps(value).encode()
    return ReplayRecord(
        0, seq, "readings", seq % 3, seq, 1000 * seq, None if key is None else json.dumps(key).encode(), data
    )


RECORDS = (
    _record(0, "north", {"LEVEL": 1, "TAGS": {"zeta": 1, "alpha": 2}}),
    _record(1, "south", {"LEVEL": 5, "TAGS": None}),
    _record(2, None, {"LEVEL": 7, "TAGS": {"b": 3}}),
    _record(3, "north", {"LEVEL": 9, "TAGS": {}}),
    _record(4, "east", None),
    _record(5, "south", {"LEVEL": 2, "TAGS": {"x": 0, "a": 1}}),
)


@pytest.mark.usefixtures("no_active_streams")
def test_the_driver_encodes_a_sink_as_its_udfs_do(spark: SparkSession, tmp_path: Path) -> None:
    plan = plan_statements(parse_statements(STATEMENTS), {}).plan
    windowed = 0
    for query in plan.queries():
        job = Job(0, query, RECORDS, (len(RECORDS),), ReplayMode(bounded=True))
        raw = executor._replay_source(spark, [job], str(tmp_path / "checkpoint"))
        written = {}
        # a map's entry order does not survive collect(): a sink with one keeps its UDFs
        has_map = "SPREAD" in query.query_id or "WITH_MAP" in query.query_id
        for encode_after in (False, True):
            sink = executor._build(raw, job, encode_after=encode_after).sink
            assert sink is not None and (sink.encoding is not None) == (encode_after and not has_map)
            rows = [row.asDict() for row in sink.df.collect()]
            if sink.encoding is not None:
                for row in rows:
                    row["key"], row["value"], row["partition"] = sink.encoding.record(row)
            written[encode_after] = sorted(
                (row["seq"], row["timestamp"], row["partition"], _bytes(row["key"]), _bytes(row["value"]))
                for row in rows
            )
        assert written[True] == written[False], query.query_id
        assert written[True]
        windowed += query.query_id.startswith("CTAS")
    assert windowed == 2


def _bytes(data: bytes | bytearray | None) -> bytes | None:
    return None if data is None else bytes(data)
