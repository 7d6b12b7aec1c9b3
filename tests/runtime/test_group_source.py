"""A group's source decodes every replay's source steps ahead, in one UDF, as each step's own
UDF would: same values, map entry order, errors, tombstones, null keys and windowed keys."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.plan.ir import steps as s
from qtt.plan.statements import plan_statements
from qtt.runtime.build import serde_udfs
from qtt.runtime.build.names import UNDECODED
from qtt.runtime.build.windowed_keys import source_window
from qtt.runtime.execute import group_source
from qtt.runtime.execute.relay import write_rows
from qtt.runtime.jobs import SCHEMA, Job, ReplayRecord, source_row
from qtt.runtime.spark import lines
from qtt.sql import parse_statements

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

STATEMENTS = """
CREATE STREAM READINGS (SENSOR STRING KEY, TAGS MAP<STRING, INT>, LEVEL DECIMAL(4, 2))
  WITH (kafka_topic='readings', format='JSON');
CREATE STREAM NOTES (TEXT STRING, SCORE INT) WITH (kafka_topic='notes', value_format='JSON');
CREATE STREAM TOTALS (SENSOR STRING KEY, N INT)
  WITH (kafka_topic='totals', format='JSON', window_type='Tumbling', window_size='1 SECOND');
CREATE STREAM READINGS_COPY AS SELECT * FROM READINGS;
CREATE STREAM NOTES_COPY AS SELECT * FROM NOTES;
CREATE STREAM TOTALS_COPY AS SELECT * FROM TOTALS;
"""


def _json(document: object) -> bytes:
    return json.dumps(document).encode()


# per topic: (key, value) as bytes; the maps' entries are not in key order on purpose
RECORDS = {
    "readings": [
        (_json("s1"), _json({"TAGS": {"zeta": 1, "alpha": 2, "mid": 3}, "LEVEL": 1.25})),
        (_json("s2"), b"not json"),
        (None, _json({"TAGS": None, "LEVEL": 99.5})),
        (_json("s3"), None),
    ],
    "notes": [(b"ignored", _json({"TEXT": "hello", "SCORE": 7})), (None, _json({"TEXT": None, "SCORE": "x"}))],
    "totals": [
        (_json("s1") + struct.pack(">q", 5000), _json({"N": 4})),
        (b"\x01", _json({"N": 5})),  # shorter than a window: kept whole
        (_json("s2") + struct.pack(">q", 1000), None),
    ],
}


def _jobs() -> list[Job]:
    plan = plan_statements(parse_statements(STATEMENTS), {}).plan
    jobs = []
    for job_id, query in enumerate(plan.queries()):
        topic = next(step.topic for step in s.walk_steps(query.physical_plan) if isinstance(step, s.SourceStep))
        records = tuple(
            ReplayRecord(job_id, seq, topic, 0, seq, 1000 + seq, key, value)
            for seq, (key, value) in enumerate(RECORDS[topic])
        )
        jobs.append(Job(job_id, query, records, (len(records),)))
    return jobs


def _arrow(df: DataFrame) -> list[dict[str, object]]:
    """The rows as Arrow has them (which keeps a map's entry order; collect() would not); a
    record that does not decode has only its error (its source step drops it)."""
    rows = df.toArrow().to_pylist()
    for row in rows:
        if row["d"]["error"] is not None:
            row["d"] = {"error": row["d"]["error"]}
    return rows


def test_each_source_step_reads_its_records_as_its_own_udf_decodes_them(spark: SparkSession, tmp_path: Path) -> None:
    jobs = _jobs()
    source = group_source.group_source(spark, jobs, str(tmp_path / "group"))

    decoded_schema = source.df.schema
    ahead = spark.read.schema(decoded_schema).parquet(str(tmp_path / "group-relay-decoded"))
    plain = spark.read.schema(st.StructType.fromDDL(SCHEMA)).parquet(str(tmp_path / "group-relay-source"))
    for job in jobs:
        (step,) = [x for x in s.walk_steps(job.query.physical_plan) if isinstance(x, s.SourceStep)]
        columns = source.decoded[job.job_id][step.context]
        schema = step.source_schema
        key = F.col("key")
        if step.formats.window is not None:
            key, _ = source_window(key, step.formats.window)
        udf = serde_udfs.decode(step.formats, schema.key, schema.value, key, F.col("value"), topic=step.topic)

        def mine(df: DataFrame, decoded: object, job: Job = job) -> list[dict[str, object]]:
            return _arrow(df.where(F.col("job") == job.job_id).select("seq", decoded.alias("d")).orderBy("seq"))  # type: ignore[attr-defined]

        expected = mine(plain, udf)
        assert mine(ahead, columns.struct()) == expected
        assert len(expected) == len(job.records)
    readings = _arrow(ahead.where(F.col("job") == 0).select(source.decoded[0]["KsqlTopic/Source"].struct().alias("d")))
    assert readings[0]["d"]["value"]["TAGS"] == [("zeta", 1), ("alpha", 2), ("mid", 3)]
    assert readings[1]["d"]["error"].startswith("Error deserializing value")
    # fields share the columns of their type: fewer columns than the jobs' fields together
    fields = sum(3 + len(c.key) + len(c.value) for mine in source.decoded.values() for c in mine.values())
    assert len(decoded_schema) - len(st.StructType.fromDDL(SCHEMA)) < fields


def test_a_step_whose_decoder_raises_keeps_its_own_udf(spark: SparkSession, tmp_path: Path) -> None:
    jobs = _jobs()[:2]
    good, bad = group_source._decodings(jobs)

    def broken(key: object, value: object) -> tuple[object, ...]:
        raise RuntimeError("no deserializer for this format")

    bad = group_source._Decoding(bad.job, bad.context, bad.topic, None, broken, bad.type)
    schema = st.StructType.fromDDL(SCHEMA)
    folder = tmp_path / "source"
    rows = [dict(zip(schema.names, source_row(r), strict=True)) for job in jobs for r in job.records]
    write_rows(folder, pa.Table.from_pylist(rows, schema=lines.arrow_schema(schema)))
    pool = group_source.ColumnPool("decoded")
    placed = [(d, pool.take(d.field_types())) for d in (good, bad)]
    table, undecoded = group_source._decode(spark, schema, folder, placed, pool.fields)

    assert undecoded == {1}
    assert UNDECODED in table.column_names
    assert table.num_rows == len(rows)
