"""The sink step: a query's rows as Kafka records (key and value bytes, timestamp, partition).

A query on its own encodes them in Spark, with Python UDFs. In a group that reads its records
from a file of the relay (:mod:`qtt.runtime.execute.group_source`), each of the 64 replays' sinks would
cost the group's sink query Python runners of its own, so there the sink hands its rows' typed
key and value columns to the driver instead, with the :class:`SinkEncoding` that turns each row
into bytes once the query ran: the same serializers and partitioner, given the values that the
UDFs would be given. ``collect()`` and a UDF's input convert Spark's values alike, but for maps:
``collect()`` loses their entry order, so a sink with a map anywhere in its columns keeps its UDFs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.plan.ir import steps as s
from qtt.runtime.build import serde_udfs
from qtt.runtime.build.names import (
    NULL_KEY,
    ORDER,
    ROWPARTITION,
    ROWTIME,
    SEQ,
    TOMBSTONE,
    WINDOW_END,
    WINDOW_START,
    WINDOW_SUFFIX,
    col,
    data_col,
    sink_field,
)
from qtt.runtime.build.timeformat import timestamp_millis
from qtt.runtime.build.windowed_keys import INNER_KEY, window_suffix, windowed_key
from qtt.runtime.spark.spark_types import to_spark

if TYPE_CHECKING:
    from qtt.plan.ir.schema import LogicalSchema
    from qtt.serde.registry.schema_registry import RegistrySnapshot


@dataclass(frozen=True)
class SinkEncoding:
    """How the driver turns a sink's typed row into a record's key, value and partition."""

    #: the key's serializer (None: the sink writes no key columns)
    key: Callable[[Any], bytes | None] | None
    value: Callable[[Any], bytes | None]
    #: the sink's columns holding the key's and the value's columns, in order, and their types
    key_columns: tuple[str, ...]
    value_columns: tuple[str, ...]
    types: tuple[st.DataType, ...]
    window: s.WindowInfo | None
    #: Kafka's partitioner over ``partitions``; None: the input record's partition
    partitions: int | None

    def record(self, row: Mapping[str, Any]) -> tuple[bytes | None, bytes | None, int | None]:
        """``row``'s key bytes, value bytes and partition, as the UDFs of :func:`build_sink` make them."""
        key = None
        if self.key is not None and not row[NULL_KEY]:
            key = self.key(tuple(row[c] for c in self.key_columns))
        value = None if row[TOMBSTONE] else self.value(tuple(row[c] for c in self.value_columns))
        inner = key
        if self.window is not None:  # Kafka Streams' windowed key, partitioned by the key alone
            suffix = row[WINDOW_SUFFIX]
            key = None if suffix is None else bytes(inner or b"") + bytes(suffix)
        if self.partitions is None:
            return key, value, row["partition"]
        return key, value, serde_udfs.partitioner(self.partitions)(inner, row["partition"])


@dataclass
class SinkOutput:
    """What the sink step produces: rows of (seq, timestamp, partition, key, value), or, with
    ``encoding``, of the typed columns the driver encodes them from."""

    df: DataFrame
    topic: str
    encoding: SinkEncoding | None = None


def build_sink(
    source: DataFrame,
    schema: LogicalSchema,
    step: s.SinkStep,
    partitions: int | None,
    *,
    registry: RegistrySnapshot | None,
    encode_after: bool,
) -> SinkOutput:
    """The sink of ``source`` (rows of ``schema``); ``partitions``: route by key over that many
    partitions (None: each record to its input's partition); ``encode_after``: leave the
    encoding to the driver (:class:`SinkEncoding`)."""
    formats = step.formats
    timestamp = col(ROWTIME)
    rows = source
    if step.timestamp_column is not None:
        column = schema.find(step.timestamp_column.column)
        if column is None:
            raise KeyError(step.timestamp_column.column)
        extracted = timestamp_millis(data_col(rows, column.name), column.type, step.timestamp_column.format)
        timestamp = F.when(col(TOMBSTONE), col(ROWTIME)).otherwise(extracted.cast("long"))
        # a record whose new timestamp is missing or negative cannot be written; ksqlDB drops it
        rows = rows.where(timestamp.isNotNull() & (timestamp >= 0))
    if formats.window is not None and WINDOW_START not in rows.columns:
        raise KeyError(WINDOW_START)
    head = [col(SEQ).alias("seq"), timestamp.cast("long").alias("timestamp"), col(ROWPARTITION).alias("partition")]
    order = [col(ORDER).alias("order")] if ORDER in rows.columns else []
    if encode_after and not any(_has_map(to_spark(c.type)) for c in (*schema.key, *schema.value)):
        suffix = [window_suffix(formats.window).alias(WINDOW_SUFFIX)] if formats.window is not None else []
        return _typed(rows, schema, step, [*head, *order, *suffix], partitions, registry)
    tail = [*order, *([col(WINDOW_START), col(WINDOW_END)] if formats.window is not None else [])]
    serde: dict[str, Any] = {"topic": step.topic, "registry": registry}
    key_struct = F.struct(*[data_col(source, c.name) for c in schema.key]) if schema.key else F.lit(None)
    value_struct = F.struct(*[data_col(source, c.name) for c in schema.value])
    key_bytes = (
        F.when(col(NULL_KEY), F.lit(None).cast("binary")).otherwise(
            serde_udfs.encode(
                formats.key_format, formats.key_features, schema.key, is_key=True, row=key_struct, **serde
            )
        )
        if schema.key
        else F.lit(None).cast("binary")
    )
    value_bytes = F.when(col(TOMBSTONE), F.lit(None).cast("binary")).otherwise(
        serde_udfs.encode(
            formats.value_format, formats.value_features, schema.value, is_key=False, row=value_struct, **serde
        )
    )
    encoded = rows.select(*head, key_bytes.alias("key"), value_bytes.alias("value"), *tail)
    route = _route(partitions)
    if formats.window is not None:
        encoded = encoded.withColumn(INNER_KEY, col("key")).withColumn(
            "key", windowed_key(col("key"), encoded, formats.window)
        )
        routed = encoded.withColumn("partition", route(col(INNER_KEY), col("partition")))
        out = routed.drop(INNER_KEY, WINDOW_START, WINDOW_END)
    else:
        out = encoded.withColumn("partition", route(col("key"), col("partition")))
    return SinkOutput(out, step.topic)


def _typed(
    rows: DataFrame,
    schema: LogicalSchema,
    step: s.SinkStep,
    common: Sequence[Column],
    partitions: int | None,
    registry: RegistrySnapshot | None,
) -> SinkOutput:
    formats = step.formats
    keys = tuple(sink_field("k", index) for index in range(len(schema.key)))
    values = tuple(sink_field("v", index) for index in range(len(schema.value)))
    out = rows.select(
        *common,
        col(NULL_KEY),
        col(TOMBSTONE),
        *[data_col(rows, c.name, named=False).alias(name) for c, name in zip(schema.key, keys, strict=True)],
        *[data_col(rows, c.name, named=False).alias(name) for c, name in zip(schema.value, values, strict=True)],
    )
    types = {f.name: f.dataType for f in out.schema.fields}
    serde: dict[str, Any] = {"topic": step.topic, "registry": registry}
    encoding = SinkEncoding(
        key=serde_udfs.encoder(formats.key_format, formats.key_features, schema.key, is_key=True, **serde)
        if schema.key
        else None,
        value=serde_udfs.encoder(formats.value_format, formats.value_features, schema.value, is_key=False, **serde),
        key_columns=keys,
        value_columns=values,
        types=tuple(types[name] for name in (*keys, *values)),
        window=formats.window,
        partitions=partitions,
    )
    return SinkOutput(out, step.topic, encoding)


def _has_map(data_type: st.DataType) -> bool:
    """Whether a value of ``data_type`` can hold a map: ``collect()`` hands a map over through a
    Java hash map, which loses the entry order that a UDF's input keeps, so such a sink keeps
    its UDFs."""
    if isinstance(data_type, st.MapType):
        return True
    if isinstance(data_type, st.ArrayType):
        return _has_map(data_type.elementType)
    if isinstance(data_type, st.StructType):
        return any(_has_map(f.dataType) for f in data_type.fields)
    return False


def _route(partitions: int | None) -> Callable[[Column, Column], Column]:
    if partitions is None:  # V1 writes each record to the partition of the input record that caused it
        return lambda key, partition: partition
    return lambda key, partition: serde_udfs.kafka_partition(key, partition, partitions)
