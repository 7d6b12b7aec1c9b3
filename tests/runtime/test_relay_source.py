"""The relay source of staged replays: serving order, Arrow values, and a round trip through Spark."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path

import pytest
from pyspark.sql import types as st

from qtt.runtime.jobs import ReplayRecord, encode_options
from qtt.runtime.names import SLOT, STAGE
from qtt.runtime.relay_source import (
    REPLAY_FIELDS,
    RelayRow,
    RelaySource,
    arrow_rows,
    from_arrow,
    relay_schema,
    write_relay,
)

RELAY = st.StructType([st.StructField("a", st.LongType()), st.StructField("b", st.StringType())])


def _source(tmp_path: Path, relayed: list[RelayRow], count: int, ends: list[int]) -> RelaySource:
    records = [
        ReplayRecord(job=0, seq=i, topic="t", partition=0, offset=i, timestamp=i, key=b"k", value=None)
        for i in range(count)
    ]
    path = tmp_path / "relay.pickle"
    write_relay(path, relayed)
    options = {**encode_options(records, ends), "schema": relay_schema(RELAY).json(), "relay": str(path)}
    return RelaySource(options)


def _batches(source: RelaySource) -> list[list[tuple]]:  # type: ignore[type-arg]
    reader = source.streamReader(None)
    offset, seen = reader.initialOffset(), []
    while (end := reader.latestOffset(offset, reader.getDefaultReadLimit())) != offset:
        seen.append([row for p in reader.partitions(offset, end) for row in reader.read(p)])
        offset = end
    return seen


def test_each_batch_serves_its_records_then_what_earlier_stages_wrote_in_it(tmp_path: Path) -> None:
    relayed = [RelayRow(batch=1, stage=0, slot=3, offset=0, values=(7, "x")), RelayRow(0, 0, 4, 1, ("y",))]
    batches = _batches(_source(tmp_path, relayed, 3, [1, 3]))

    width = len(REPLAY_FIELDS.fields)
    assert [[row[1] for row in batch] for batch in batches] == [[0, None], [1, 2, None]]
    record, relay_row = batches[0]
    assert record[width:] == (-1, -1, None, None)  # a replay record: no stage, no slot
    assert relay_row[:width] == (None,) * width  # a relayed row: no job, so no plan reads it as a record
    assert relay_row[width:] == (0, 4, None, "y")
    assert batches[1][2][width:] == (0, 3, 7, "x")


def test_the_sinks_query_reads_everything_in_one_batch(tmp_path: Path) -> None:
    source = _source(tmp_path, [RelayRow(1, 0, 0, 0, (1, "a"))], 3, [1, 2, 3])
    write_relay(tmp_path / "relay.pickle", [RelayRow(1, 0, 0, 0, (1, "a"))], one_batch=True)
    assert [len(batch) for batch in _batches(source)] == [4]


def test_the_schema_is_the_replay_columns_then_stage_slot_and_relay_columns() -> None:
    names = relay_schema(RELAY).fieldNames()
    assert names == [*REPLAY_FIELDS.fieldNames(), STAGE, SLOT, "a", "b"]


def test_arrow_values_become_what_a_python_source_yields() -> None:
    nested = st.ArrayType(
        st.StructType(
            [st.StructField("m", st.MapType(st.StringType(), st.LongType())), st.StructField("n", st.LongType())]
        )
    )
    value = [{"m": [("pear", 2), ("apple", 1)], "n": 3}, None]
    converted = from_arrow(value, nested)
    assert converted == [({"pear": 2, "apple": 1}, 3), None]
    assert list(converted[0][0]) == ["pear", "apple"]  # a map keeps its entries' order


@pytest.mark.spark
def test_values_cross_the_relay_unchanged(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """What a stage's operator wrote reaches the next query as Spark values equal to it, maps in order."""
    row_type = st.StructType(
        [
            st.StructField("m", st.MapType(st.StringType(), st.LongType())),
            st.StructField("d", st.DecimalType(10, 3)),
            st.StructField("t", st.TimestampType()),
            st.StructField("day", st.DateType()),
            st.StructField("raw", st.BinaryType()),
            st.StructField("nested", st.ArrayType(st.StructType([st.StructField("x", st.DoubleType())]))),
        ]
    )
    written = (
        {"pear": 2, "apple": 1, "fig": 0},
        decimal.Decimal("12.345"),
        datetime.datetime(2026, 3, 29, 1, 30, 0, 123000),
        datetime.date(1969, 12, 31),
        b"\x00\xff",
        [(float("nan"),), (-0.0,), None],
    )
    before = spark.createDataFrame([written], row_type).selectExpr(
        "map_from_arrays(array('pear', 'apple', 'fig'), array(2L, 1L, 0L)) AS m",
        "d",
        "t",
        "day",
        "raw",
        "nested",
    )
    relayed = [
        RelayRow(0, 0, 0, 0, tuple(from_arrow(row[f.name], f.dataType) for f in row_type.fields))
        for row in arrow_rows(before)
    ]
    write_relay(tmp_path / "relay.pickle", relayed)
    records = [ReplayRecord(job=0, seq=0, topic="t", partition=0, offset=0, timestamp=0, key=None, value=None)]
    schema = relay_schema(row_type)
    options = {**encode_options(records, [1]), "schema": schema.json(), "relay": str(tmp_path / "relay.pickle")}
    after = spark.readStream.format("qtt_relay").schema(schema).options(**options).load().where(f"{SLOT} = 0")
    got: list = []  # type: ignore[type-arg]
    query = (
        after.select(*row_type.fieldNames())
        .writeStream.foreachBatch(lambda df, _: got.extend(arrow_rows(df)))
        .trigger(availableNow=True)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    query.awaitTermination()
    assert len(got) == 1
    expected = arrow_rows(before)[0]
    assert list(got[0]) == list(expected)
    assert got[0]["m"] == [("pear", 2), ("apple", 1), ("fig", 0)]
    for name in ("d", "t", "day", "raw"):
        assert got[0][name] == expected[name], name
    x = [None if item is None else item["x"] for item in got[0]["nested"]]
    assert str(x) == "[nan, -0.0, None]"
