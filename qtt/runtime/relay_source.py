"""The source of a staged replay's queries: the replay records, and what earlier stages wrote.

A staged replay (:mod:`qtt.runtime.staged`) runs each stage of stateful operators as a query
of its own; the rows a stage's operator wrote are relayed to the later queries through this
source. Micro-batch *k* serves batch *k* of the replay records followed by the rows every
earlier stage wrote in its micro-batch *k*, so batch ids stay those of the replay.

Relay rows are kept as the Python values Spark handed back (the same conversion a stateful
processor's rows make), pickled in a file on the driver's disk: the driver-side reader reads it
when a query starts and ships the rows to executors inside the partitions, as it ships the
replay records.
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

from qtt.runtime.jobs import decode_options, decode_row
from qtt.runtime.names import SLOT, STAGE
from qtt.runtime.replay_source import ReplayStreamReader

#: ``spark.readStream.format(RELAY_FORMAT)``
RELAY_FORMAT = "qtt_relay"
#: next to the relay file, it makes the next query that starts read everything in one micro-batch
ONE_BATCH = ".one-batch"
#: the replay source's columns (:data:`qtt.runtime.jobs.SCHEMA`), built without a JVM
REPLAY_FIELDS = st.StructType(
    [
        st.StructField("job", st.IntegerType()),
        st.StructField("seq", st.LongType()),
        st.StructField("topic", st.StringType()),
        st.StructField("partition", st.IntegerType()),
        st.StructField("offset", st.LongType()),
        st.StructField("timestamp", st.LongType()),
        st.StructField("key", st.BinaryType()),
        st.StructField("value", st.BinaryType()),
        st.StructField(
            "headers",
            st.ArrayType(
                st.StructType([st.StructField("key", st.StringType()), st.StructField("value", st.BinaryType())])
            ),
        ),
    ]
)


@dataclass(frozen=True)
class RelayRow:
    """One row a stage's operator wrote: its micro-batch, stage, slot and output values.

    ``offset`` is where the slot's columns start among the relay columns.
    """

    batch: int
    stage: int
    slot: int
    offset: int
    values: tuple[Any, ...]


def relay_schema(relay_columns: st.StructType) -> st.StructType:
    """The source's rows: the replay source's columns, the stage and slot, the relay columns."""
    fields = [*REPLAY_FIELDS.fields, st.StructField(STAGE, st.IntegerType()), st.StructField(SLOT, st.IntegerType())]
    return st.StructType(fields + list(relay_columns.fields))


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


def write_relay(path: Path, rows: Sequence[RelayRow], *, one_batch: bool = False) -> None:
    """Write every relayed row so far (the source reads the file when a query starts);
    ``one_batch``: the next query serves every row in one micro-batch."""
    path.write_bytes(pickle.dumps(list(rows), protocol=pickle.HIGHEST_PROTOCOL))
    if one_batch:
        Path(str(path) + ONE_BATCH).touch()


def _combined(options: dict[str, str], replay_width: int, width: int) -> tuple[list[tuple[Any, ...]], list[int]]:
    """The rows in serving order, and the micro-batch boundaries over them."""
    records, ends = decode_options(options)
    path = Path(options["relay"])
    relayed: list[RelayRow] = pickle.loads(path.read_bytes()) if path.is_file() else []
    by_batch: dict[int, list[RelayRow]] = {}
    for row in relayed:
        by_batch.setdefault(row.batch, []).append(row)
    empty = (None,) * width
    rows: list[tuple[Any, ...]] = []
    combined_ends: list[int] = []
    for batch, (begin, end) in enumerate(zip([0, *ends], ends, strict=False)):
        rows += [(*decode_row(record), -1, -1, *empty) for record in records[begin:end]]
        for row in by_batch.get(batch, []):
            values = list(empty)
            values[row.offset : row.offset + len(row.values)] = row.values
            rows.append(((None,) * replay_width) + (row.stage, row.slot, *values))
        combined_ends.append(len(rows))
    if Path(options["relay"] + ONE_BATCH).is_file():  # the sinks' query: stateless, so one micro-batch
        combined_ends = [len(rows)]
    return rows, combined_ends


class _Rows(InputPartition):
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        super().__init__(len(rows))
        self.rows = rows


class RelayStreamReader(ReplayStreamReader):
    """The replay source's reader over rows that are already decoded."""

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        if end["next"] <= start["next"]:
            return []
        return [_Rows(self.rows[start["next"] : end["next"]])]  # type: ignore[arg-type]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, _Rows)
        yield from partition.rows


class RelaySource(DataSource):
    """``spark.readStream.format("qtt_relay")`` with the replay source's options, ``schema`` (the
    JSON of :func:`relay_schema`) and ``relay`` (the file :func:`write_relay` writes)."""

    @classmethod
    def name(cls) -> str:
        return RELAY_FORMAT

    def schema(self) -> st.StructType:
        return st.StructType.fromJson(json.loads(self.options["schema"]))

    def reader(self, schema: Any) -> DataSourceReader:
        raise NotImplementedError("a staged replay is never a bounded batch query")

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        names = self.schema().fieldNames()
        replay_width = names.index(STAGE)
        rows, ends = _combined(dict(self.options), replay_width, len(names) - replay_width - 2)
        return RelayStreamReader(rows, ends)  # type: ignore[arg-type]


def register(session: SparkSession) -> None:
    """Make ``format("qtt_relay")`` available in ``session``."""
    session.dataSource.register(RelaySource)
