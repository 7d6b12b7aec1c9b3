"""Java's arithmetic, ordering and equality for plain Python values, as ksqlDB's UDAFs use them.

INTEGER and BIGINT arithmetic wraps around, doubles compare as ``Double.compareTo`` (-0.0 <
0.0, NaN largest), strings as UTF-16 code units, bytes as signed bytes, and ``equals`` holds
NaN equal to itself but -0.0 apart from 0.0. This module must not import pyspark: the
aggregators use it in tests without a JVM.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from collections.abc import Callable, Mapping
from typing import Any

from qtt import sqltypes as t
from qtt.serde.java_numbers import java_double

#: BigDecimal arithmetic is exact; 100 digits hold every sum of DECIMAL(38) values.
DECIMAL_CONTEXT = decimal.Context(prec=100)


def wrap32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def wrap64(value: int) -> int:
    return (value + 2**63) % 2**64 - 2**63


def wrapper(type_: t.SqlType) -> Callable[[Any], Any]:
    if type_.base == "INTEGER":
        return wrap32
    if type_.base == "BIGINT":
        return wrap64
    return lambda v: v


def _double_key(value: float) -> tuple[int, float, float]:
    # Double.compareTo: NaN above everything, -0.0 below 0.0.
    if math.isnan(value):
        return (1, 0.0, 0.0)
    return (0, value, math.copysign(1.0, value))


def _string_key(value: str) -> bytes:
    # String.compareTo compares UTF-16 code units; big-endian UTF-16 bytes sort the same way.
    return value.encode("utf-16-be", "surrogatepass")


def _bytes_key(value: bytes | bytearray) -> bytes:
    # ByteBuffer.compareTo compares signed bytes.
    return bytes(b ^ 0x80 for b in value)


def sort_key(type_: t.SqlType) -> Callable[[Any], Any]:
    """A key whose Python order is Java's ``compareTo`` order for values of ``type_``."""
    if type_.base == "DOUBLE":
        return lambda v: _double_key(float(v))
    if type_.base == "STRING":
        return _string_key
    if type_.base == "BYTES":
        return _bytes_key
    return lambda v: v


def canon(value: Any) -> Any:
    """A hashable stand-in with Java's ``equals``: NaN equals NaN, -0.0 differs from 0.0."""
    if isinstance(value, float):
        return ("d", struct.pack(">d", math.nan if math.isnan(value) else value))
    if isinstance(value, bytes | bytearray):
        return ("b", bytes(value))
    if isinstance(value, Mapping):
        return ("m", frozenset((canon(k), canon(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("l", tuple(canon(v) for v in value))
    if isinstance(value, decimal.Decimal):
        # BigDecimal.equals compares the scale too.
        return ("n", value.as_tuple())
    return value


def hashed_form(type_: t.SqlType) -> Callable[[Any], Any]:
    """What ksqlDB's COUNT_DISTINCT tells apart in values of ``type_``: its HyperLogLog hashes
    numbers and strings themselves but anything else as Java's ``toString`` (stream-lib's
    ``MurmurHash.hash(Object)``), where a ``ByteBuffer`` shows its length only, a
    ``java.sql.Time`` whole seconds only, a ``List`` its elements' text without quotes
    (``['a, b']`` and ``['a', 'b']`` both print ``[a, b]``) and a Connect ``Struct`` its
    non-null fields (``Struct{A=1,B=x}``)."""
    if isinstance(type_, t.Array | t.Struct | t.Map) or type_.base in ("BYTES", "TIME"):
        text = _java_text(type_)
        return lambda v: ("s", text(v))
    return canon


def _java_text(type_: t.SqlType) -> Callable[[Any], str]:
    """``toString()`` of the Java value ksqlDB holds for a non-null value of ``type_``."""
    if isinstance(type_, t.Array):
        element = _java_text(type_.element)
        return lambda v: "[" + ", ".join("null" if x is None else element(x) for x in v) + "]"
    if isinstance(type_, t.Struct):
        named = [(f.name, _java_text(f.type)) for f in type_.fields]
        return lambda v: (
            "Struct{"
            + ",".join(f"{n}={f(x)}" for (n, f), x in zip(named, _fields(v), strict=True) if x is not None)
            + "}"
        )
    if isinstance(type_, t.Map):
        key, value = _java_text(type_.key), _java_text(type_.value)
        # A HashMap prints in its hash order; sorting the entries keeps equal maps equal.
        return lambda v: (
            "{" + ", ".join(sorted(f"{key(k)}={'null' if x is None else value(x)}" for k, x in dict(v).items())) + "}"
        )
    if type_.base == "BYTES":
        return lambda v: f"java.nio.HeapByteBuffer[pos=0 lim={len(v)} cap={len(v)}]"
    if type_.base == "TIME":
        return lambda v: (
            v.replace(microsecond=0).isoformat()
            if isinstance(v, datetime.time)
            else str(datetime.timedelta(seconds=int(v) // 1000)).zfill(8)
        )
    if type_.base == "DOUBLE":
        return lambda v: java_double(float(v))
    if type_.base == "BOOLEAN":
        return lambda v: "true" if v else "false"
    return str


def _fields(value: Any) -> tuple[Any, ...]:
    return tuple(value.values()) if isinstance(value, Mapping) else tuple(value)


def coercer(type_: t.SqlType) -> Callable[[Any], Any]:
    """Convert a column value to the (possibly widened) parameter type of the aggregate."""
    if type_.base == "DOUBLE":
        return lambda v: None if v is None else float(v)
    if type_.base in ("INTEGER", "BIGINT"):
        return lambda v: None if v is None else int(v)
    return lambda v: v


def quantizer(type_: t.SqlType) -> Callable[[Any], Any]:
    if isinstance(type_, t.Decimal):
        exponent = decimal.Decimal(1).scaleb(-type_.scale)
        return lambda v: None if v is None else decimal.Decimal(v).quantize(exponent, context=DECIMAL_CONTEXT)
    return lambda v: v
