"""The relay of staged replays: one-batch folders, and values that cross unchanged."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import types as st

from qtt.runtime.execute.relay import relay_stream, write_rows

pytestmark = pytest.mark.spark

ROWS = st.StructType([st.StructField("a", st.LongType()), st.StructField("b", st.StringType())])


def _table(*rows: tuple[int, str]) -> pa.Table:
    return pa.table({"a": pa.array([r[0] for r in rows], pa.int64()), "b": pa.array([r[1] for r in rows], pa.string())})


def _batches(df: DataFrame, checkpoint: Path) -> list[tuple[int, list[dict[str, Any]]]]:
    seen: list[tuple[int, list[dict[str, Any]]]] = []
    query = (
        df.writeStream.foreachBatch(lambda batch, batch_id: seen.append((batch_id, batch.toArrow().to_pylist())))
        .trigger(availableNow=True)
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    query.awaitTermination()
    return seen


def test_a_relay_reads_every_row_in_one_batch_and_an_empty_one_none_unless_kept(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_rows(tmp_path / "out", _table((1, "a"), (2, "b")))
    write_rows(tmp_path / "none", _table())
    write_rows(tmp_path / "kept", _table(), keep_empty=True)
    full = relay_stream(spark, ROWS, tmp_path / "out")
    assert _batches(full, tmp_path / "c1") == [(0, [{"a": 1, "b": "a"}, {"a": 2, "b": "b"}])]
    assert _batches(relay_stream(spark, ROWS, tmp_path / "none"), tmp_path / "c2") == []
    assert _batches(relay_stream(spark, ROWS, tmp_path / "kept"), tmp_path / "c3") == [(0, [])]


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
        "map_from_arrays(array('pear', 'apple', 'fig'), array(2L, 1L, 0L)) AS m", "d", "t", "day", "raw", "nested"
    )
    expected = before.toArrow()
    write_rows(tmp_path / "relay", expected)
    got = _batches(relay_stream(spark, row_type, tmp_path / "relay"), tmp_path / "checkpoint")
    assert len(got) == 1 and len(got[0][1]) == 1
    row, want = got[0][1][0], expected.to_pylist()[0]
    assert row["m"] == [("pear", 2), ("apple", 1), ("fig", 0)]  # a map keeps its entries' order
    for name in ("d", "t", "day", "raw"):
        assert row[name] == want[name], name
    x = [None if item is None else item["x"] for item in row["nested"]]
    assert str(x) == "[nan, -0.0, None]"
