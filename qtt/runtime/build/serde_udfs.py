"""Formats inside Spark: Python UDFs around :mod:`qtt.serde` (de)serializers.

Decoding never raises inside Spark: a record whose bytes do not match is flagged with an
error message, logged to the processing log and skipped, as ksqlDB does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.errors import SerdeError
from qtt.hashable import hashable
from qtt.plan.ir.schema import Column as SchemaColumn
from qtt.plan.ir.steps import FormatInfo, Formats
from qtt.runtime.build.names import col
from qtt.runtime.spark.jvm_functions import per_session
from qtt.runtime.spark.spark_types import struct_of
from qtt.runtime.spark.workers.worker_memory import freeze_once
from qtt.serde import SerdeColumn, get_format
from qtt.serde.registry.schema_registry import RegistrySnapshot, subject_for

#: serde UDFs kept for reuse: one is made (pickled, registered in the JVM) per distinct
#: format, schema, topic and registry, however many plans use it
UDFS_KEPT = 512
if TYPE_CHECKING:
    from pyspark.sql._typing import UserDefinedFunctionLike

# The fields of the struct that decode() returns.
ERROR_FIELD, TOMBSTONE_FIELD, NULL_KEY_FIELD, KEY_FIELD, VALUE_FIELD = "error", "tombstone", "null_key", "key", "value"


def _serde_columns(columns: Sequence[SchemaColumn]) -> list[SerdeColumn]:
    return [SerdeColumn(c.name, c.type) for c in columns]


def _failed(part: str, error: Exception) -> tuple[str, bool, bool, None, None]:
    """decode()'s result for a record whose ``part`` ("key" or "value") does not decode."""
    text = error.message if isinstance(error, SerdeError) else f"{type(error).__name__}: {error}"
    return (f"Error deserializing {part}: {text}", False, False, None, None)


def decode(
    formats: Formats,
    key_columns: Sequence[SchemaColumn],
    value_columns: Sequence[SchemaColumn],
    key: Column,
    value: Column,
    *,
    topic: str = "",
    registry: RegistrySnapshot | None = None,
) -> Column:
    """A struct column ``{error, tombstone, key: {...}, value: {...}}`` decoded from raw bytes."""
    topic, registry = topic_scope(topic, registry, formats.key_format, formats.value_format)
    return _decode_udf(formats, tuple(key_columns), tuple(value_columns), topic, registry)(key, value)


def topic_scope(
    topic: str, registry: RegistrySnapshot | None, *formats: FormatInfo
) -> tuple[str, RegistrySnapshot | None]:
    """The topic and registry a serde UDF of ``formats`` is made for: none where no format reads
    them, so that one UDF serves every topic."""
    if any(get_format(info.format).reads_topic for info in formats):
        return topic, registry
    return "", None


@per_session(maxsize=UDFS_KEPT, key=lambda *args: hashable(args))
def _decode_udf(
    formats: Formats,
    key_columns: tuple[SchemaColumn, ...],
    value_columns: tuple[SchemaColumn, ...],
    topic: str,
    registry: RegistrySnapshot | None,
) -> UserDefinedFunctionLike:
    run = decoder(formats, key_columns, value_columns, topic=topic, registry=registry)
    return F.udf(run, decoded_type(key_columns, value_columns), useArrow=True)


def decoded_type(key_columns: Sequence[SchemaColumn], value_columns: Sequence[SchemaColumn]) -> st.StructType:
    """The struct that :func:`decoder` returns for a record, as a Spark type."""
    return st.StructType(
        [
            st.StructField(ERROR_FIELD, st.StringType()),
            st.StructField(TOMBSTONE_FIELD, st.BooleanType()),
            st.StructField(NULL_KEY_FIELD, st.BooleanType()),
            st.StructField(KEY_FIELD, struct_of([(c.name, c.type) for c in key_columns])),
            st.StructField(VALUE_FIELD, struct_of([(c.name, c.type) for c in value_columns])),
        ]
    )


def decoder(
    formats: Formats,
    key_columns: Sequence[SchemaColumn],
    value_columns: Sequence[SchemaColumn],
    *,
    topic: str = "",
    registry: RegistrySnapshot | None = None,
) -> Callable[[Any, Any], tuple[Any, ...]]:
    """``run(key_bytes, value_bytes)``: a record's ``(error, tombstone, null_key, key, value)``.

    Picklable; each copy builds its deserializers once, on first use (in each Python worker).
    """
    key_cols, value_cols = _serde_columns(key_columns), _serde_columns(value_columns)
    key_format, value_format = formats.key_format, formats.value_format
    key_features, value_features = (
        frozenset(formats.key_features),
        frozenset(formats.value_features),
    )
    key_props, value_props = dict(key_format.properties), dict(value_format.properties)
    key_name, value_name = key_format.format, value_format.format
    key_subject, value_subject = subject_for(topic, is_key=True), subject_for(topic, is_key=False)

    built: dict[str, Any] = {}

    # No annotations on UDF bodies: PySpark would try to read an eval type from them.
    def run(key_bytes, value_bytes):
        if not built:
            freeze_once("serde")
            built["key"] = get_format(key_name).deserializer(
                key_cols,
                is_key=True,
                properties=key_props,
                features=key_features,
                topic=topic,
                registry=registry,
                subject=key_subject,
            )
            built["value"] = get_format(value_name).deserializer(
                value_cols,
                is_key=False,
                properties=value_props,
                features=value_features,
                topic=topic,
                registry=registry,
                subject=value_subject,
            )
        key_des, value_des = built["key"], built["value"]
        key_row = None
        # A stream without key columns ignores whatever its records' keys hold.
        if key_cols and key_bytes is not None:
            try:
                key_row = key_des(bytes(key_bytes))
            except Exception as e:  # a format bug must not crash the query either
                return _failed("key", e)
        try:
            value_row = value_des(bytes(value_bytes) if value_bytes is not None else None)
        except Exception as e:
            return _failed("value", e)
        null_key = key_row is None
        if key_row is None or len(key_row) != len(key_cols):
            key_row = (None,) * len(key_cols)
        tombstone = value_row is None
        return (
            None,
            tombstone,
            null_key,
            key_row,
            value_row if value_row is not None else (None,) * len(value_cols),
        )

    return run


def encode(
    info: FormatInfo,
    features: Sequence[str],
    columns: Sequence[SchemaColumn],
    *,
    is_key: bool,
    row: Column,
    topic: str = "",
    registry: RegistrySnapshot | None = None,
) -> Column:
    """A binary column: ``row`` (a struct of ``columns``) serialized with ``info``."""
    topic, registry = topic_scope(topic, registry, info)
    return _encode_udf(info, tuple(features), tuple(columns), is_key, topic, registry)(row)


@per_session(maxsize=UDFS_KEPT, key=lambda *args: hashable(args))
def _encode_udf(
    info: FormatInfo,
    features: tuple[str, ...],
    columns: tuple[SchemaColumn, ...],
    is_key: bool,
    topic: str,
    registry: RegistrySnapshot | None,
) -> UserDefinedFunctionLike:
    run = encoder(info, features, columns, is_key=is_key, topic=topic, registry=registry)
    return F.udf(run, st.BinaryType(), useArrow=True)


def encoder(
    info: FormatInfo,
    features: Sequence[str],
    columns: Sequence[SchemaColumn],
    *,
    is_key: bool,
    topic: str = "",
    registry: RegistrySnapshot | None = None,
) -> Callable[[Any], bytes | None]:
    """``run(row)``: the bytes of ``row`` (a struct of ``columns``, or None); picklable, each
    copy builds its serializer once, on first use."""
    serde_cols = _serde_columns(columns)
    name, properties, feature_set = info.format, dict(info.properties), frozenset(features)
    built: list[Any] = []
    subject = subject_for(topic, is_key=is_key)  # named here, on the driver, where schemas are registered

    def run(value):
        if not built:
            freeze_once("serde")
            built.append(
                get_format(name).serializer(
                    serde_cols,
                    is_key=is_key,
                    properties=properties,
                    features=feature_set,
                    topic=topic,
                    registry=registry,
                    subject=subject,
                )
            )
        if value is None:
            return None
        return built[0](tuple(value))

    return run


def kafka_partition(key: Column, fallback: Column, partitions: int) -> Column:
    """The partition Kafka's default partitioner picks for each key (an int column)."""
    if partitions <= 1:
        return F.lit(0)
    route = partitioner(partitions)

    def run(key_bytes, fallback_partition):  # Spark reads type hints as a pandas UDF request
        return route(key_bytes, fallback_partition)

    return F.udf(run, st.IntegerType(), useArrow=True)(key, fallback)


def partitioner(partitions: int) -> Callable[[Any, int | None], int]:
    """``route(key_bytes, fallback)``: the partition of a record of ``partitions`` (Kafka's default
    partitioner; a null key takes ``fallback``)."""
    from qtt.topics.partitioner import partition_for

    def route(key_bytes: Any, fallback: int | None) -> int:
        if partitions <= 1:
            return 0
        data = bytes(key_bytes) if key_bytes is not None else None
        return partition_for(data, partitions, fallback=fallback or 0)

    return route


@dataclass(frozen=True)
class DecodedColumns:
    """Where the group's source holds one source step's decoded records, field by field."""

    error: str
    tombstone: str
    null_key: str
    #: each key column: its name, and the source column holding it
    key: tuple[tuple[str, str], ...]
    value: tuple[tuple[str, str], ...]

    def struct(self) -> Column:
        """The record as :func:`qtt.runtime.build.decode` returns it."""
        return F.struct(
            col(self.error).alias(ERROR_FIELD),
            col(self.tombstone).alias(TOMBSTONE_FIELD),
            col(self.null_key).alias(NULL_KEY_FIELD),
            F.struct(*[col(source).alias(name) for name, source in self.key]).alias(KEY_FIELD),
            F.struct(*[col(source).alias(name) for name, source in self.value]).alias(VALUE_FIELD),
        )
