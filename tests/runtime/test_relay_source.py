"""The relay source of staged replays: serving order, Arrow values, and a round trip through Spark."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path

import pytest
from pyspark.sql import types as st

from qtt.runtime.relay_source import RelayRow, RelaySource, arrow_rows, from_arrow, relay_stream, write_relay

RELAY = st.StructType([st.StructField("a", st.LongType()), st.StructField("b", st.StringType())])


def _batches(tmp_path: Path, relayed: list[RelayRow], *, one_batch: bool) -> list[list[tuple]]:  # type: ignore[type-arg]
    path = tmp_path / "relay.pickle"
    write_relay(path, relayed)
    source = RelaySource({"schema": RELAY.json(), "relay": str(path), "one_batch": "true" if one_batch else "false"})
    reader = source.streamReader(None)
    offset, seen = reader.initialOffset(), []
    while (end := reader.latestOffset(offset, reader.getDefaultReadLimit())) != offset:
        seen.append([row for p in reader.partitions(offset, end) for row in reader.read(p)])
        offset = end
    return seen


def test_micro_batch_k_serves_the_rows_of_batch_k_in_their_order(tmp_path: Path) -> None:
    relayed = [RelayRow(2, (1, "c")), RelayRow(0, (2, "a")), RelayRow(2, (3, "d")), RelayRow(1, (4, "b"))]
    assert _batches(tmp_path, relayed, one_batch=False) == [[(2, "a")], [(4, "b")], [(1, "c"), (3, "d")]]


def test_a_relay_in_one_batch_serves_every_row_at_once(tmp_path: Path) -> None:
    relayed = [RelayRow(1, (1, "b")), RelayRow(0, (2, "a"))]
    assert _batches(tmp_path, relayed, one_batch=True) == [[(2, "a"), (1, "b")]]
    assert _batches(tmp_path, [], one_batch=True) == []


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
        RelayRow(0, tuple(from_arrow(row[f.name], f.dataType) for f in row_type.fields)) for row in arrow_rows(before)
    ]
    write_relay(tmp_path / "relay.pickle", relayed)
    after = relay_stream(spark, row_type, tmp_path / "relay.pickle", one_batch=True)
    got: list = []  # type: ignore[type-arg]
    query = (
        after.writeStream.foreachBatch(lambda df, _: got.extend(arrow_rows(df)))
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
