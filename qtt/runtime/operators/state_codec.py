"""Values as a state store can hold them, and back.

PySpark's ``transformWithState`` value state cannot keep every SQL type as it is:

* ``TIME`` is refused outright (UNSUPPORTED_TIME_TYPE);
* a ``MAP`` inside an array or a struct is written as null, silently (a map that is a field
  of the state row itself is kept);
* what ``get`` returns is Spark's internal form (a ``DATE`` as days, a ``TIMESTAMP`` as
  microseconds), not the Python values that ``update`` took.

So a state's stored schema replaces ``TIME`` with ``BIGINT`` (microseconds since midnight) and
a nested ``MAP<K, V>`` with ``ARRAY<STRUCT<KEY K, VALUE V>>`` (entries in insertion order),
values are converted on the way in, and read values are turned back into Python values on
the way out. These stored forms are also what the internal topics show. A top-level map keeps
its form: plans persisted before this module existed recorded it that way.
"""

from __future__ import annotations

import datetime
from typing import Any

from pyspark.sql import types as st

_MICROS_PER_SECOND = 1_000_000
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_EPOCH_DATE = datetime.date(1970, 1, 1)


def storable(type_: st.DataType, *, nested: bool = True) -> st.DataType:
    """``type_`` with every type a state store cannot keep replaced by the one it is kept as.

    ``nested`` is False for a field of the state row itself.
    """
    if isinstance(type_, st.TimeType):
        return st.LongType()
    if isinstance(type_, st.ArrayType):
        return st.ArrayType(storable(type_.elementType), type_.containsNull)
    if isinstance(type_, st.MapType):
        if not nested:
            return st.MapType(storable(type_.keyType), storable(type_.valueType), type_.valueContainsNull)
        entry = st.StructType(
            [
                st.StructField("KEY", storable(type_.keyType), False),
                st.StructField("VALUE", storable(type_.valueType), type_.valueContainsNull),
            ]
        )
        return st.ArrayType(entry, False)
    if isinstance(type_, st.StructType):
        return st.StructType([st.StructField(f.name, storable(f.dataType), f.nullable) for f in type_.fields])
    return type_


def encode(value: Any, type_: st.DataType, *, nested: bool = True) -> Any:
    """A value of ``type_`` as its :func:`storable` type holds it."""
    if value is None:
        return None
    if isinstance(type_, st.TimeType):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * _MICROS_PER_SECOND + value.microsecond
    if isinstance(type_, st.ArrayType):
        return [encode(v, type_.elementType) for v in value]
    if isinstance(type_, st.MapType):
        # input rows carry a map as a dict or, through Arrow, as a list of (key, value) pairs
        entries = value.items() if isinstance(value, dict) else value
        pairs = [(encode(k, type_.keyType), encode(v, type_.valueType)) for k, v in entries]
        return pairs if nested else dict(pairs)
    if isinstance(type_, st.StructType):
        if isinstance(value, dict):
            value = [value.get(f.name) for f in type_.fields]
        return tuple(encode(v, f.dataType) for v, f in zip(value, type_.fields, strict=True))
    return value


def decode(value: Any, type_: st.DataType) -> Any:
    """The Python value of ``type_``, in one shape, for what the state store gave back.

    Input rows go through it too: they bring a struct as a dict or a Row and a map as a dict
    or a list of pairs, and Arrow, converting outputs back, wants all structs of a column
    alike. Structs come out as tuples, maps as dicts, timestamps aware in UTC.
    """
    if value is None:
        return None
    if isinstance(type_, st.TimeType) and isinstance(value, int):
        seconds, micros = divmod(int(value), _MICROS_PER_SECOND)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return datetime.time(hour, minute, second, micros)
    if isinstance(type_, st.ArrayType):
        return [decode(v, type_.elementType) for v in value]
    if isinstance(type_, st.MapType):
        entries = value.items() if isinstance(value, dict) else value
        return {decode(k, type_.keyType): decode(v, type_.valueType) for k, v in entries}
    if isinstance(type_, st.StructType):
        if isinstance(value, dict):
            value = [value.get(f.name) for f in type_.fields]
        return tuple(decode(v, f.dataType) for v, f in zip(value, type_.fields, strict=True))
    if isinstance(type_, st.DateType) and isinstance(value, int):
        return _EPOCH_DATE + datetime.timedelta(days=value)
    if isinstance(type_, st.TimestampType) and isinstance(value, int):
        # as rows bring them in: aware, in UTC (qtt's session time zone)
        return _EPOCH_UTC + datetime.timedelta(microseconds=value)
    if isinstance(type_, st.TimestampType) and isinstance(value, datetime.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=datetime.UTC)
    if isinstance(type_, st.TimestampNTZType) and isinstance(value, int):
        return _EPOCH + datetime.timedelta(microseconds=value)
    return value


def is_nested(type_: st.DataType) -> bool:
    """Whether values of ``type_`` can come in more than one shape (see :func:`decode`)."""
    return isinstance(type_, (st.ArrayType, st.MapType, st.StructType))


def _needs_codec(type_: st.DataType) -> bool:
    # nested values come back from the store in other shapes (a struct as a dict), so only
    # flat rows of plain values pass through untouched
    return isinstance(
        type_,
        (st.TimeType, st.MapType, st.DateType, st.TimestampType, st.TimestampNTZType, st.ArrayType, st.StructType),
    )


class StateCodec:
    """Converts one state variable's rows; the identity when its schema needs nothing."""

    def __init__(self, schema: st.StructType) -> None:
        self.schema = schema
        self.stored = st.StructType(
            [st.StructField(f.name, storable(f.dataType, nested=False), f.nullable) for f in schema.fields]
        )
        self.identity = not any(_needs_codec(f.dataType) for f in schema.fields)

    def encode(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        if self.identity:
            return row
        return tuple(encode(v, f.dataType, nested=False) for v, f in zip(row, self.schema.fields, strict=True))

    def decode(self, row: Any) -> tuple[Any, ...]:
        return tuple(row) if self.identity else decode(row, self.schema)

    def read(self, state: Any) -> tuple[Any, ...] | None:
        """The current key's row in value state ``state``, decoded; None when it holds none.

        One trip to the state server: ``get`` answers None for a key without a value, and
        ``exists`` would be a second trip (Spark's own ``exists`` reads the value too)."""
        stored = state.get()
        return None if stored is None else self.decode(stored)
