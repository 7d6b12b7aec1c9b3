"""Conversions between JSON-like Python values and typed column values.

Typed values are what Spark rows hold: bool, int, float, Decimal, str, bytes, date, list,
dict and tuples (for structs, in field order). JSON-like values are what ``simplejson``
reads with ``use_decimal=True``: numbers with a fraction arrive as Decimal, so no digit of
a DECIMAL column is lost.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
from collections.abc import Mapping
from typing import Any

from qtt import sqltypes as t
from qtt.errors import SerdeError

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def _fail(value: Any, type_: t.SqlType, path: str) -> SerdeError:
    kind = type(value).__name__
    where = f" at {path}" if path else ""
    return SerdeError(f"Can't convert type. sourceType: {kind}, requiredType: {type_}{where}, value: {value!r}")


def from_json(value: Any, type_: t.SqlType, path: str = "") -> Any:
    """Coerce a JSON value into a typed value, as ksqlDB's JSON deserializer does."""
    if value is None:
        return None
    base = type_.base
    if base == "BOOLEAN":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise _fail(value, type_, path)
    if base in ("INTEGER", "BIGINT"):
        lo, hi = (INT_MIN, INT_MAX) if base == "INTEGER" else (LONG_MIN, LONG_MAX)
        if isinstance(value, bool):
            raise _fail(value, type_, path)
        if isinstance(value, int):
            result = value
        elif isinstance(value, float | decimal.Decimal):
            result = int(value)
        elif isinstance(value, str):
            try:
                result = int(value.strip())
            except ValueError:
                raise _fail(value, type_, path) from None
        else:
            raise _fail(value, type_, path)
        if not lo <= result <= hi:
            raise _fail(value, type_, path)
        return result
    if base == "DOUBLE":
        if isinstance(value, bool):
            raise _fail(value, type_, path)
        if isinstance(value, int | float | decimal.Decimal):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                raise _fail(value, type_, path) from None
        raise _fail(value, type_, path)
    if base == "DECIMAL":
        assert isinstance(type_, t.Decimal)
        if isinstance(value, bool):
            raise _fail(value, type_, path)
        try:
            number = decimal.Decimal(str(value)) if not isinstance(value, decimal.Decimal) else value
        except decimal.InvalidOperation:
            raise _fail(value, type_, path) from None
        return fit_decimal(number, type_, path)
    if base == "STRING":
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | decimal.Decimal | float):
            return str(value)
        return dumps(value)
    if base == "BYTES":
        if isinstance(value, str):
            try:
                return base64.b64decode(value, validate=True)
            except ValueError:
                raise _fail(value, type_, path) from None
        raise _fail(value, type_, path)
    if base == "TIMESTAMP":
        if isinstance(value, int) and not isinstance(value, bool):
            return EPOCH + dt.timedelta(milliseconds=value)
        raise _fail(value, type_, path)
    if base == "DATE":
        if isinstance(value, int) and not isinstance(value, bool):
            return EPOCH_DATE + dt.timedelta(days=value)
        raise _fail(value, type_, path)
    if base == "TIME":
        if isinstance(value, int) and not isinstance(value, bool):
            return (dt.datetime.min + dt.timedelta(milliseconds=value)).time()
        raise _fail(value, type_, path)
    if isinstance(type_, t.Array):
        if not isinstance(value, list):
            raise _fail(value, type_, path)
        return [from_json(v, type_.element, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(type_, t.Map):
        if not isinstance(value, Mapping):
            raise _fail(value, type_, path)
        return {
            from_json(k, type_.key, path): from_json(v, type_.value, f"{path}.{k}")
            for k, v in value.items()
        }
    if isinstance(type_, t.Struct):
        if not isinstance(value, Mapping):
            raise _fail(value, type_, path)
        return struct_from_mapping(value, type_, path)
    raise _fail(value, type_, path)  # pragma: no cover - every base type is handled above


def struct_from_mapping(value: Mapping[str, Any], type_: t.Struct, path: str = "") -> tuple[Any, ...]:
    """Match JSON object fields to struct fields, case-insensitively as ksqlDB does."""
    lookup = field_lookup(value)
    return tuple(
        from_json(lookup.get(f.name.upper()), f.type, f"{path}.{f.name}") for f in type_.fields
    )


def field_lookup(value: Mapping[str, Any]) -> dict[str, Any]:
    """Upper-cased field name -> value; an exact-case match wins over a case-folded one."""
    folded: dict[str, Any] = {}
    for k, v in value.items():
        folded.setdefault(str(k).upper(), v)
    for k, v in value.items():
        if str(k).upper() == str(k):
            folded[str(k)] = v
    return folded


def fit_decimal(number: decimal.Decimal, type_: t.Decimal, path: str = "") -> decimal.Decimal:
    """Rescale to the declared scale; reject values with too many digits."""
    if not number.is_finite():
        raise _fail(number, type_, path)
    quantum = decimal.Decimal(1).scaleb(-type_.scale)
    with decimal.localcontext() as ctx:
        ctx.prec = max(type_.precision + 10, 50)
        scaled = number.quantize(quantum, rounding=decimal.ROUND_HALF_UP)
    digits = len(scaled.as_tuple().digits) if scaled != 0 else 0
    integer_digits = max(digits - type_.scale, 0)
    if integer_digits > type_.precision - type_.scale:
        msg = f"Cannot fit decimal '{number}' into DECIMAL({type_.precision}, {type_.scale}) without rounding."
        raise SerdeError(msg + (f" at {path}" if path else ""))
    return scaled


def to_json(value: Any, type_: t.SqlType) -> Any:
    """A typed value as JSON-ready Python (Decimal stays Decimal for exact output)."""
    if value is None:
        return None
    if isinstance(type_, t.Array):
        return [to_json(v, type_.element) for v in value]
    if isinstance(type_, t.Map):
        return {str(to_json(k, type_.key)): to_json(v, type_.value) for k, v in value.items()}
    if isinstance(type_, t.Struct):
        values = struct_values(value, type_)
        return {f.name: to_json(v, f.type) for f, v in zip(type_.fields, values, strict=True)}
    base = type_.base
    if base == "BYTES":
        return base64.b64encode(bytes(value)).decode("ascii")
    if base == "TIMESTAMP":
        return timestamp_millis(value)
    if base == "DATE":
        return (value - EPOCH_DATE).days
    if base == "TIME":
        return time_millis(value)
    if base == "DOUBLE":
        return float(value)
    return value


def struct_values(value: Any, type_: t.Struct) -> tuple[Any, ...]:
    """Field values of a struct held as a tuple, a Row or a mapping."""
    if isinstance(value, Mapping):
        return tuple(value.get(f.name) for f in type_.fields)
    if hasattr(value, "asDict") and hasattr(value, "__fields__"):  # a pyspark Row
        d = value.asDict(recursive=False)
        return tuple(d.get(f.name) for f in type_.fields)
    return tuple(value)


def timestamp_millis(value: dt.datetime) -> int:
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    delta = value - EPOCH
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


def time_millis(value: dt.time) -> int:
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000


def java_double(value: float) -> str:
    """``Double.toString`` as Java prints it: ``1.0``, ``1.0E10``, ``1.0E-5``, ``NaN``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:
        text = repr(value)
        if "e" in text or "E" in text:  # repr chose exponent form for a value Java prints plainly
            text = format(decimal.Decimal(text), "f")
        return text if "." in text else text + ".0"
    shortest = decimal.Decimal(repr(value)).normalize()
    if len(shortest.as_tuple().digits) == 1:
        # Java prints two digits in scientific notation: the two closest to the exact binary
        # value (Double.MIN_VALUE is 4.9E-324, where the shortest text would be 5E-324).
        shortest = decimal.Decimal(format(decimal.Decimal(value), ".1e")).normalize()
    sign, digit_tuple, exp = shortest.as_tuple()
    d = "".join(map(str, digit_tuple))
    exp10 = exp + len(d) - 1  # type: ignore[operator]
    mantissa = d[0] + "." + (d[1:] or "0")
    return ("-" if sign else "") + f"{mantissa}E{exp10}"


def java_decimal(value: decimal.Decimal) -> str:
    """``BigDecimal.toPlainString``."""
    return format(value, "f")


def dumps(value: Any) -> str:
    """Compact JSON text as Jackson writes it, with exact decimals.

    Jackson quotes non-finite doubles ("NaN", "Infinity", "-Infinity"), so qtt does too.
    """
    import simplejson

    return simplejson.dumps(_quote_non_finite(value), use_decimal=True, separators=(",", ":"), ensure_ascii=False)


def _quote_non_finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _quote_non_finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_quote_non_finite(v) for v in value]
    return value


def loads(text: str | bytes) -> Any:
    """Parse JSON text keeping fractional numbers exact (as Decimal)."""
    import simplejson

    return simplejson.loads(text, use_decimal=True)
