"""A group's records as one Parquet file, every source step's records decoded ahead.

A group's one-micro-batch queries (a staged group's stage inputs and sinks, a stateless
group's sinks) read its records from a file of the relay (:mod:`qtt.runtime.execute.relay`). Each
replay's source step decodes its topic's records with a Python UDF: in a union of 64 replays
that is 64 Python runners per query, each sent its own pickled decoder, about 0.1 s apiece.
Here every source step of every replay in the group decodes its records in **one** UDF, in one
Spark batch job run while the group's plans are built, and the file holds each step's decoded
fields as columns of their own; a replay's source step reads its columns
(:meth:`DecodedColumns.struct`) instead of running its UDF.

The records take the per-step UDF's road to Spark (the same decoder, and the UDF's return
path: pickled rows, Spark's conversion of each field), then travel as Arrow to the file, which
keeps every value's type and a map's entry order. What the decoder of a step cannot build (a
schema the registry lacks, say) leaves that step to its own UDF, which fails in its query as
it always has: that replay's verdict stays its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.plan.ir import steps as s
from qtt.runtime.build import serde_udfs
from qtt.runtime.build.names import UNDECODED, col
from qtt.runtime.build.serde_udfs import DecodedColumns
from qtt.runtime.build.windowed_keys import source_window
from qtt.runtime.execute.relay import relay_stream, write_rows
from qtt.runtime.jobs import SCHEMA, Job, batch_major, source_row
from qtt.runtime.operators.wide import ColumnPool
from qtt.runtime.spark import infrastructure, lines


@dataclass(frozen=True)
class GroupSource:
    """The group's records in one micro-batch, and per job: source step context -> its decoded columns."""

    df: DataFrame
    decoded: dict[int, dict[str, DecodedColumns]]
    #: the records come from a file of the relay (not the Python replay source): the sinks' rows
    #: reach the driver as a whole, which encodes them (:mod:`qtt.runtime.build.sink_builder`)
    file: bool = True


@dataclass(frozen=True)
class _Decoding:
    """One source step of one job: the records it decodes, how, and where its fields go."""

    job: int
    context: str
    topic: str
    #: a windowed source's window: its records' keys are Spark's ``source_window`` of theirs
    window: s.WindowInfo | None
    decode: Callable[[Any, Any], tuple[Any, ...]]
    type: st.StructType

    def _parts(self) -> tuple[st.StructType, st.StructType]:
        key, value = self.type[serde_udfs.KEY_FIELD].dataType, self.type[serde_udfs.VALUE_FIELD].dataType
        assert isinstance(key, st.StructType) and isinstance(value, st.StructType)
        return key, value

    def field_types(self) -> list[st.DataType]:
        """Its fields' types, flat: error, tombstone, null key, each key column, each value column."""
        key, value = self._parts()
        return [
            st.StringType(),
            st.BooleanType(),
            st.BooleanType(),
            *[f.dataType for f in key.fields],
            *[f.dataType for f in value.fields],
        ]

    def columns(self, names: Sequence[str]) -> DecodedColumns:
        """Its decoded columns, its flat fields held by the columns ``names``."""
        key, value = self._parts()
        keys = names[3 : 3 + len(key.fields)]
        values = names[3 + len(key.fields) :]
        return DecodedColumns(
            error=names[0],
            tombstone=names[1],
            null_key=names[2],
            key=tuple(zip([f.name for f in key.fields], keys, strict=True)),
            value=tuple(zip([f.name for f in value.fields], values, strict=True)),
        )


def group_source(session: SparkSession, jobs: Sequence[Job], checkpoint: str) -> GroupSource:
    """The jobs' records in one micro-batch, in the replay source's order, read from a file of
    the relay, with every source step's records decoded ahead where its decoder builds.

    Decoded fields share columns by data type, as a wide operator's slots do
    (:class:`qtt.runtime.operators.wide.ColumnPool`): a job's *n*-th field of a type is the *n*-th column
    of that type, and a record fills only its own job's. Runs one Spark job (the decoding); a
    failure of Spark's own is raised, any other leaves every step to its UDF.
    """
    records, _ = batch_major(jobs)
    schema = st.StructType.fromDDL(SCHEMA)
    assert isinstance(schema, st.StructType)
    rows = [dict(zip(schema.names, source_row(record), strict=True)) for record in records]
    for row in rows:
        row["headers"] = [{"key": k, "value": v} for k, v in row["headers"]]
    folder = Path(f"{checkpoint}-relay-source")
    write_rows(folder, pa.Table.from_pylist(rows, schema=lines.arrow_schema(schema)))
    decodings = _decodings(jobs)
    if not rows or not decodings:
        return GroupSource(relay_stream(session, schema, folder), {})
    pool = ColumnPool("decoded")
    placed: list[tuple[_Decoding, tuple[str, ...]]] = []
    for job in jobs:
        mine = [d for d in decodings if d.job == job.job_id]
        taken = iter(pool.take([t for d in mine for t in d.field_types()]))
        placed += [(d, tuple(next(taken) for _ in d.field_types())) for d in mine]
    try:
        table, undecoded = _decode(session, schema, folder, placed, pool.fields)
    except (PySparkException, Py4JJavaError) as e:
        if infrastructure.is_infrastructure(e):
            raise
        return GroupSource(relay_stream(session, schema, folder), {})
    decoded_folder = Path(f"{checkpoint}-relay-decoded")
    write_rows(decoded_folder, table.drop_columns([UNDECODED]))
    by_job: dict[int, dict[str, DecodedColumns]] = {}
    for index, (d, names) in enumerate(placed):
        if index not in undecoded:
            by_job.setdefault(d.job, {})[d.context] = d.columns(names)
    wide = st.StructType([*schema.fields, *pool.fields])
    return GroupSource(relay_stream(session, wide, decoded_folder), by_job)


def _decodings(jobs: Sequence[Job]) -> list[_Decoding]:
    out: list[_Decoding] = []
    for job in jobs:
        seen: set[str] = set()
        for step in s.walk_steps(job.query.physical_plan):
            if not isinstance(step, s.SourceStep) or step.context in seen:
                continue
            seen.add(step.context)
            schema = step.source_schema
            window = step.formats.window
            out.append(
                _Decoding(
                    job=job.job_id,
                    context=step.context,
                    topic=step.topic,
                    window=window,
                    decode=serde_udfs.decoder(
                        step.formats, schema.key, schema.value, topic=step.topic, registry=job.registry
                    ),
                    type=serde_udfs.decoded_type(schema.key, schema.value),
                )
            )
    return out


def _decode(
    session: SparkSession,
    schema: st.StructType,
    folder: Path,
    placed: Sequence[tuple[_Decoding, tuple[str, ...]]],
    fields: Sequence[st.StructField],
) -> tuple[pa.Table, set[int]]:
    """Every record decoded by each of its job's steps that read its topic, in one UDF: the
    source's columns, then the pooled fields; and the steps whose decoder raised."""
    position = {f.name: index for index, f in enumerate(fields)}
    # a windowed key's own bytes, by Spark's own reading of them: one argument per kind of window
    windows = {d.window.type == "SESSION": d.window for d, _ in placed if d.window is not None}
    kinds = list(windows)
    mine: dict[tuple[int, str], list[tuple[int, tuple[int, ...], int, Callable[[Any, Any], tuple[Any, ...]]]]] = {}
    for index, (d, names) in enumerate(placed):
        where = tuple(position[name] for name in names)
        key_argument = 0 if d.window is None else 1 + kinds.index(d.window.type == "SESSION")
        mine.setdefault((d.job, d.topic), []).append((index, where, key_argument, d.decode))
    width = len(fields)

    def run(job, topic, value, *keys):  # no annotations: PySpark would read an eval type from them
        out: list[Any] = [None] * (width + 1)
        raised = []
        for index, where, key_argument, decode in mine.get((job, topic), ()):
            try:
                error, tombstone, null_key, key_row, value_row = decode(keys[key_argument], value)
                if error is None:
                    flat = (error, tombstone, null_key, *key_row, *value_row)
                else:  # a record that does not decode has no fields (its source step drops it)
                    flat = (error, tombstone, null_key, *[None] * (len(where) - 3))
                if len(flat) != len(where):
                    raise ValueError(f"{len(flat)} fields decoded where {len(where)} were expected")
            except Exception:  # its decoder does not build, or does not fit: the step keeps its own UDF
                raised.append(index)
                continue
            for at, item in zip(where, flat, strict=True):
                out[at] = item
        out[width] = raised
        return tuple(out)

    wide_type = st.StructType([*fields, st.StructField(UNDECODED, st.ArrayType(st.IntegerType()))])
    read = session.read.schema(schema).parquet(str(folder))
    keys = [col("key"), *[source_window(col("key"), windows[kind])[0] for kind in kinds]]
    wide = F.udf(run, wide_type, useArrow=True)(col("job"), col("topic"), col("value"), *keys)
    flat = read.select(*[col(name) for name in schema.names], wide.alias("wide")).select(
        *[col(name) for name in schema.names],
        *[col("wide").getField(f.name).alias(f.name) for f in wide_type.fields],
    )
    table = flat.toArrow()
    undecoded = {index for indices in table[UNDECODED].to_pylist() for index in indices or ()}
    return table, undecoded
