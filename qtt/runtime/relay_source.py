"""The source of a staged replay's later queries: rows an earlier query wrote, relayed.

A staged replay (:mod:`qtt.runtime.staged`) runs its stateless steps and its stateful
operators as queries of their own, and hands each query's rows to the next through this
source: a stage's operator reads its input rows micro-batch by micro-batch (each row tagged
with the replay's micro-batch it belongs to), and the stateless queries read an operator's
output rows all in one micro-batch.

Relay rows are kept as the Python values Spark handed back (the same conversion a stateful
processor's rows make), pickled in a file on the driver's disk: the driver-side reader reads it
when a query starts and ships the rows to executors inside the partitions, as the replay source
ships its records.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as st
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition

from qtt.runtime.replay_source import ReplayStreamReader

#: ``spark.readStream.format(RELAY_FORMAT)``
RELAY_FORMAT = "qtt_relay"


@dataclass(frozen=True)
class RelayRow:
    """One relayed row: the replay's micro-batch it belongs to, and its values in schema order."""

    batch: int
    values: tuple[Any, ...]


def arrow_rows(df: DataFrame) -> list[dict[str, Any]]:
    """``df``'s rows through Arrow, as the relay keeps them (:func:`from_arrow` reads a value).

    Not ``collect()``: it hands maps to Python through a Java hash map, which loses the order of
    their entries, and that order is part of what a query writes.
    """
    return df.toArrow().to_pylist()


def from_arrow(value: Any, spark_type: st.DataType) -> Any:
    """An Arrow value of ``spark_type`` as a Python data source yields it (maps as ordered dicts)."""
    if value is None:
        return None
    if isinstance(spark_type, st.MapType):
        return {from_arrow(k, spark_type.keyType): from_arrow(v, spark_type.valueType) for k, v in value}
    if isinstance(spark_type, st.StructType):
        return tuple(from_arrow(value[f.name], f.dataType) for f in spark_type.fields)
    if isinstance(spark_type, st.ArrayType):
        return [from_arrow(element, spark_type.elementType) for element in value]
    return value


def write_relay(path: Path, rows: Sequence[RelayRow]) -> None:
    """Write the rows a relay serves (its source reads the file when a query starts)."""
    path.write_bytes(pickle.dumps(list(rows), protocol=pickle.HIGHEST_PROTOCOL))


def relay_stream(session: SparkSession, schema: st.StructType, path: Path, *, one_batch: bool) -> DataFrame:
    """A stream of the rows in ``path`` (:func:`write_relay`), of ``schema``.

    ``one_batch``: every row in one micro-batch; else micro-batch *k* serves the rows of batch *k*
    (a batch without rows is not served: the writer gives each batch a row).
    """
    options = {"schema": schema.json(), "relay": str(path), "one_batch": json.dumps(one_batch)}
    return session.readStream.format(RELAY_FORMAT).schema(schema).options(**options).load()


def served(path: Path, *, one_batch: bool) -> tuple[list[tuple[Any, ...]], list[int]]:
    """The rows in serving order, and the micro-batch boundaries over them."""
    relayed: list[RelayRow] = pickle.loads(path.read_bytes()) if path.is_file() else []
    ordered = sorted(relayed, key=lambda row: row.batch)  # stable: a batch keeps its rows' order
    rows = [row.values for row in ordered]
    if one_batch:
        return rows, [len(rows)] if rows else []
    last = [index + 1 == len(ordered) or ordered[index + 1].batch != row.batch for index, row in enumerate(ordered)]
    return rows, [index + 1 for index, is_last in enumerate(last) if is_last]


class _Rows(InputPartition):
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        super().__init__(len(rows))
        self.rows = rows


class RelayStreamReader(ReplayStreamReader):
    """The replay source's reader (admission control, one micro-batch per batch) over relayed rows."""

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        if end["next"] <= start["next"]:
            return []
        return [_Rows(self.rows[start["next"] : end["next"]])]  # type: ignore[arg-type]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, _Rows)
        yield from partition.rows


class RelaySource(DataSource):
    """``spark.readStream.format("qtt_relay")``: see :func:`relay_stream`."""

    @classmethod
    def name(cls) -> str:
        return RELAY_FORMAT

    def schema(self) -> st.StructType:
        return st.StructType.fromJson(json.loads(self.options["schema"]))

    def reader(self, schema: Any) -> DataSourceReader:
        raise NotImplementedError("a staged replay is never a bounded batch query")

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        rows, ends = served(Path(self.options["relay"]), one_batch=json.loads(self.options["one_batch"]))
        return RelayStreamReader(rows, ends)  # type: ignore[arg-type]


def register(session: SparkSession) -> None:
    """Make ``format("qtt_relay")`` available in ``session``."""
    session.dataSource.register(RelaySource)
