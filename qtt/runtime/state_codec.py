"""Values as a state store can hold them.

Spark's state stores refuse some SQL types (``TIME``: UNSUPPORTED_TIME_TYPE). A stored schema
replaces each such type with one they hold, and values are converted on the way in and out:
a ``TIME`` is kept as microseconds since midnight in a ``BIGINT``. Types that need nothing
pass through untouched, so most states are stored exactly as declared.
"""

from __future__ import annotations

import datetime
from typing import Any

from pyspark.sql import types as st

_MICROS_PER_SECOND = 1_000_000


def storable(type_: st.DataType) -> st.DataType:
    """``type_`` with every type a state store refuses replaced by the one it is kept as."""
    if isinstance(type_, st.TimeType):
        return st.LongType()
    if isinstance(type_, st.ArrayType):
        return st.ArrayType(storable(type_.elementType), type_.containsNull)
    if isinstance(type_, st.MapType):
        return st.MapType(storable(type_.keyType), storable(type_.valueType), type_.valueContainsNull)
    if isinstance(type_, st.StructType):
        return st.StructType([st.StructField(f.name, storable(f.dataType), f.nullable) for f in type_.fields])
    return type_


def encode(value: Any, type_: st.DataType) -> Any:
    """A value of ``type_`` as its :func:`storable` type holds it."""
    if value is None:
        return None
    if isinstance(type_, st.TimeType):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * _MICROS_PER_SECOND + value.microsecond
    if isinstance(type_, st.ArrayType):
        return [encode(v, type_.elementType) for v in value]
    if isinstance(type_, st.MapType):
        return {encode(k, type_.keyType): encode(v, type_.valueType) for k, v in value.items()}
    if isinstance(type_, st.StructType):
        if isinstance(value, dict):
            value = [value.get(f.name) for f in type_.fields]
        return tuple(encode(v, f.dataType) for v, f in zip(value, type_.fields, strict=True))
    return value


def decode(value: Any, type_: st.DataType) -> Any:
    """The inverse of :func:`encode`; structs come back as tuples."""
    if value is None:
        return None
    if isinstance(type_, st.TimeType):
        seconds, micros = divmod(int(value), _MICROS_PER_SECOND)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return datetime.time(hour, minute, second, micros)
    if isinstance(type_, st.ArrayType):
        return [decode(v, type_.elementType) for v in value]
    if isinstance(type_, st.MapType):
        return {decode(k, type_.keyType): decode(v, type_.valueType) for k, v in value.items()}
    if isinstance(type_, st.StructType):
        return tuple(decode(v, f.dataType) for v, f in zip(value, type_.fields, strict=True))
    return value


class StateCodec:
    """Converts one state variable's rows; the identity when its schema needs nothing."""

    def __init__(self, schema: st.StructType) -> None:
        self.schema = schema
        stored = storable(schema)
        assert isinstance(stored, st.StructType)
        self.stored: st.StructType = stored
        self.identity = self.stored == schema

    def encode(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        return row if self.identity else encode(row, self.schema)

    def decode(self, row: Any) -> tuple[Any, ...]:
        return tuple(row) if self.identity else decode(row, self.schema)
