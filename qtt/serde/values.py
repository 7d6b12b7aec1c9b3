"""Conversions between JSON-like Python values and typed column values.

Typed values are what Spark rows hold: bool, int, float, Decimal, str, bytes, date, list,
dict and tuples (for structs, in field order). JSON-like values are what ``simplejson``
reads with ``use_decimal=True``: numbers with a fraction arrive as Decimal, so no digit of
a DECIMAL column is lost.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import decimal
import math
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from qtt import sqltypes as t
from qtt.errors import SerdeError
from qtt.serde.excerpt import excerpt
from qtt.serde.java_numbers import (
    java_big_decimal,
    java_decimal_excerpt,
    java_double,
    java_long_value,
    java_narrow,
    java_parse_double,
    java_parse_int,
    java_parse_long,
)

_N = TypeVar("_N")

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)


class BigInteger(decimal.Decimal):
    """A JSON integer too long for ``int()`` (over 4,300 digits): Jackson's ``BigIntegerNode``.

    A Decimal, so that every coercion handles it in time bounded by its digits.
    """


_JSON_KIND = {
    bool: "BooleanNode",
    int: "IntNode",
    float: "DoubleNode",
    decimal.Decimal: "DecimalNode",
    BigInteger: "BigIntegerNode",
    str: "TextNode",
    list: "ArrayNode",
    dict: "ObjectNode",
}


def _where(path: str) -> str:
    """ksqlDB's ``, path: $.A.B`` suffix; map keys come from the input, so it is an excerpt."""
    return f", path: {excerpt(path)}" if path else ""


def connect_type_text(type_: t.SqlType) -> str:
    """``type_`` as ksqlDB's JSON deserializer names an ARRAY, MAP or STRUCT it cannot read: its
    ``SqlSchemaFormatter`` prints the Connect schema, so INTEGER is ``INT``, STRING is
    ``VARCHAR``, and no field name is quoted (``STRUCT<A INT, b VARCHAR>``)."""
    if isinstance(type_, t.Array):
        return f"ARRAY<{connect_type_text(type_.element)}>"
    if isinstance(type_, t.Map):
        return f"MAP<{connect_type_text(type_.key)}, {connect_type_text(type_.value)}>"
    if isinstance(type_, t.Struct):
        fields = ", ".join(f"{f.name} {connect_type_text(f.type)}" for f in type_.fields)
        return f"STRUCT<{fields or ' '}>"
    return _CONNECT_NAMES.get(type_.base, str(type_))


_CONNECT_NAMES = {"INTEGER": "INT", "STRING": "VARCHAR"}


def required_type_text(type_: t.SqlType) -> str:
    """The ``requiredType`` of ksqlDB's JSON conversion errors: a primitive by its SQL type name
    (``JsonSerdeUtils``), an ARRAY, MAP or STRUCT by :func:`connect_type_text`."""
    return connect_type_text(type_) if t.is_structured(type_) else str(type_)


def from_json_failure(value: Any, type_: t.SqlType, path: str = "") -> SerdeError:
    """The error for a JSON value that cannot become ``type_``."""
    kind = _JSON_KIND.get(type(value), type(value).__name__)
    return SerdeError(
        f"Can't convert type. sourceType: {kind}, requiredType: {required_type_text(type_)}{_where(path)}"
    )


def _fail_string(type_: t.SqlType, path: str) -> SerdeError:
    return SerdeError(f"Can't coerce string to type. targetType: {type_.base}{_where(path)}")


def from_json(value: Any, type_: t.SqlType, path: str = "") -> Any:
    """Coerce a parsed JSON value into a typed value, as ksqlDB's JSON deserializer does.

    The rules are ksqlDB's ``JsonSerdeUtils``: BOOLEAN only from a JSON boolean; numbers
    narrow the way Java does; strings parse with Java's number parsers; a STRING column
    takes the text of any value (objects as JSON, arrays as ``[a, b]``).
    """
    if value is None:
        return None
    base = type_.base
    if base == "BOOLEAN":
        if isinstance(value, bool):
            return value
        raise from_json_failure(value, type_, path)
    if base in ("INTEGER", "BIGINT"):
        return _json_whole(value, type_, path, 32 if base == "INTEGER" else 64)
    if base == "DOUBLE":
        return _json_number(value, type_, path, from_number=double_value, from_text=java_parse_double)
    if base == "DECIMAL":
        assert isinstance(type_, t.Decimal)
        if isinstance(value, int) and not isinstance(value, bool):
            number = decimal.Decimal(value)
        elif isinstance(value, decimal.Decimal | float):
            number = decimal.Decimal(str(value)) if isinstance(value, float) else value
        elif isinstance(value, str):
            try:
                number = java_big_decimal(value)
            except ValueError as e:
                raise SerdeError(f"{e}{_where(path)}") from None
        else:
            raise from_json_failure(value, type_, path)
        return fit_decimal(number, type_, path)
    if base == "STRING":
        return json_text(value)
    if base == "BYTES":
        if isinstance(value, str):
            try:
                return jackson_base64(value)
            except ValueError:
                msg = f"Value is not a valid Base64 encoded string: {excerpt(value)}"
                raise SerdeError(msg + _where(path)) from None
        raise from_json_failure(value, type_, path)
    if base in ("TIMESTAMP", "DATE", "TIME"):
        millis = _json_whole(value, type_, path, 64)
        if base == "TIMESTAMP":
            return _in_range(EPOCH, millis, "milliseconds", _TIMESTAMP_MILLIS, path)
        if base == "DATE":
            return _in_range(EPOCH_DATE, millis, "days", _DATE_DAYS, path)
        if millis == 86_400_000:
            # SerdeUtils.returnTimeOrThrow lets the end of the day through (`time <= 86400000`)
            msg = "86400000 milliseconds is a TIME of 24:00, which qtt (and Spark) cannot hold; ksqlDB accepts it"
            raise SerdeError(msg + _where(path))
        if not 0 <= millis < 86_400_000:
            msg = "Time values must use number of milliseconds greater than 0 and less than 86400000."
            raise SerdeError(msg + _where(path))
        return (dt.datetime.min + dt.timedelta(milliseconds=millis)).time()
    if isinstance(type_, t.Array):
        if not isinstance(value, list):
            raise from_json_failure(value, type_, path)
        return [from_json(v, type_.element, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(type_, t.Map):
        if not isinstance(value, Mapping):
            raise from_json_failure(value, type_, path)
        return {
            from_json(k, type_.key, f"{path}.{k}.key"): from_json(v, type_.value, f"{path}.{k}.value")
            for k, v in value.items()
        }
    if isinstance(type_, t.Struct):
        if not isinstance(value, Mapping):
            raise from_json_failure(value, type_, path)
        return struct_from_mapping(value, type_, path)
    raise from_json_failure(value, type_, path)  # pragma: no cover - every base type is handled above


_BASE64_PLAIN = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_BASE64_GROUP = re.compile(r"[\x00- ]*([A-Za-z0-9+/]{2}(?:==|[A-Za-z0-9+/]=|[A-Za-z0-9+/]{2}))")
_BASE64_TAIL = re.compile(r"[\x00- ]*")


def jackson_base64(text: str) -> bytes:
    """Jackson's ``TextNode.binaryValue()`` (its default Base64 variant), as ksqlDB reads JSON BYTES.

    Padding is required, but each 4-character group may follow white space (any character up
    to U+0020), and a group ended by padding may be followed by more groups.

    Raises:
        ValueError: the text is not such Base64.
    """
    if _BASE64_PLAIN.fullmatch(text):
        return base64.b64decode(text)
    out, i = bytearray(), 0
    while (tail := _BASE64_TAIL.match(text, i)) is not None and tail.end() < len(text):
        group = _BASE64_GROUP.match(text, i)
        if group is None:
            msg = f"not Jackson's Base64 at offset {i}"
            raise ValueError(msg)
        out += base64.b64decode(group.group(1))
        i = group.end()
    return bytes(out)


# What Python's datetime can hold (years 1 to 9999); Java's Timestamp and Date hold any long.
_TIMESTAMP_MILLIS = (
    (dt.datetime.min - EPOCH) // dt.timedelta(milliseconds=1),
    (dt.datetime.max - EPOCH) // dt.timedelta(milliseconds=1),
)
_DATE_DAYS = ((dt.date.min - EPOCH_DATE).days, (dt.date.max - EPOCH_DATE).days)


def _in_range(epoch: Any, count: int, unit: str, bounds: tuple[int, int], path: str) -> Any:
    """``epoch`` plus ``count`` units, or the error for a count past year 9999 (or before year 1)."""
    low, high = bounds
    if not low <= count <= high:
        msg = (
            f"{count} {unit} from 1970-01-01 is outside the years 1 to 9999 that qtt (and Spark) can hold; "
            f"ksqlDB accepts it{_where(path)}"
        )
        raise SerdeError(msg)
    return epoch + dt.timedelta(**{unit: count})


def double_value(number: int | float | decimal.Decimal) -> float:
    """A number as Java's ``Number.doubleValue()`` gives it: the nearest double, and past the
    double range infinity of its sign (Jackson holds a long JSON integer as a ``BigInteger``,
    whose ``doubleValue()`` does not fail, where Python's ``float()`` of an int does)."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def _finite(value: float | decimal.Decimal) -> bool:
    return value.is_finite() if isinstance(value, decimal.Decimal) else math.isfinite(value)


def _json_whole(value: Any, type_: t.SqlType, path: str, bits: int) -> int:
    """A JSON value as a Java integer of ``bits`` bits; a number narrows, a string must fit.

    A decimal narrows as ``BigDecimal.longValue()`` does, in time bounded by its digits
    (:func:`~qtt.serde.java_numbers.java_long_value`), however large its exponent.
    """

    def from_number(number: int | float | decimal.Decimal) -> int:
        if isinstance(number, float | decimal.Decimal) and not _finite(number):
            raise from_json_failure(value, type_, path)
        if isinstance(number, decimal.Decimal):
            return java_narrow(java_long_value(number), bits)
        return java_narrow(int(number), bits)

    from_text = java_parse_int if bits == 32 else java_parse_long
    return _json_number(value, type_, path, from_number=from_number, from_text=from_text)


def _json_number(
    value: Any,
    type_: t.SqlType,
    path: str,
    *,
    from_number: Callable[[int | float | decimal.Decimal], _N],
    from_text: Callable[[str], _N],
) -> _N:
    """ksqlDB's numeric coercion: from a JSON number or a string Java can parse, never a boolean."""
    if isinstance(value, bool):
        raise from_json_failure(value, type_, path)
    if isinstance(value, int | float | decimal.Decimal):
        return from_number(value)
    if isinstance(value, str):
        try:
            return from_text(value)
        except ValueError:
            raise _fail_string(type_, path) from None
    raise from_json_failure(value, type_, path)


def json_text(value: Any) -> str:
    """The text a JSON value gives a STRING column (Jackson's ``asText``; objects as JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, int | decimal.Decimal):
        return str(value)
    if isinstance(value, Mapping):
        return dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join("null" if v is None else json_text(v) for v in value) + "]"
    return str(value)


def struct_from_mapping(value: Mapping[str, Any], type_: t.Struct, path: str = "") -> tuple[Any, ...]:
    """Match JSON object fields to struct fields as ksqlDB does (see :func:`field_value`)."""
    upper = upper_case_keys(value)
    return tuple(from_json(field_value(value, upper, f.name), f.type, f"{path}.{f.name}") for f in type_.fields)


def row_from_json(document: Any, columns: Sequence[Any], *, wrapped: bool = True) -> tuple[Any, ...]:
    """A row of typed values from a JSON-like document, as ksqlDB's JSON-family readers coerce it:
    a bare value for one unwrapped column, else an object whose fields match the columns by
    name, then case-insensitively (a missing field is null). ``columns`` have ``name`` and
    ``type``. Raises :class:`SerdeError` naming the JSON path of what does not fit."""
    if not wrapped:
        return (from_json(document, columns[0].type, "$"),)
    if not isinstance(document, Mapping):
        row_type = t.Struct(tuple(t.Field(c.name, c.type) for c in columns))
        raise from_json_failure(document, row_type, "$")
    upper = upper_case_keys(document)
    return tuple(from_json(field_value(document, upper, c.name), c.type, f"$.{c.name}") for c in columns)


def upper_case_keys(value: Mapping[str, Any]) -> dict[str, Any]:
    """Upper-cased field name -> value; of two names that fold together, the last wins."""
    return {str(k).upper(): v for k, v in value.items()}


def field_value(value: Mapping[str, Any], upper: Mapping[str, Any], name: str) -> Any:
    """The exact-case field ``name``, else the field whose upper-cased name is ``name``.

    An unquoted column name is upper case and so matches any spelling; a quoted one with
    lower-case letters matches only itself. An exact-case field that is null is still the
    field (Jackson's ``get`` gives a ``NullNode``): ``{"A": null, "a": 1}`` reads A as null.
    """
    return value[name] if name in value else upper.get(name)


def fit_decimal(number: decimal.Decimal, type_: t.Decimal, path: str = "") -> decimal.Decimal:
    """ksqlDB's ``DecimalUtil.ensureFit``: pad to the declared scale, never round or overflow.

    Exact comparisons and digit checks only, no context arithmetic: ``abs()`` of
    ``1E+999999999`` overflows Python's default context, and the messages quote
    :func:`~qtt.serde.java_numbers.java_decimal_excerpt`, never the written-out number.
    """
    where = _where(path)
    if not number.is_finite():
        raise SerdeError(f"Cannot fit decimal '{number}' into DECIMAL({type_.precision}, {type_.scale}){where}")
    digits = type_.precision - type_.scale
    if number.copy_abs() >= decimal.Decimal(1).scaleb(digits):
        msg = (
            f"Numeric field overflow: A field with precision {type_.precision} and scale "
            f"{type_.scale} must "
            f"round to an absolute value less than 10^{digits}. Got {java_decimal_excerpt(number)}"
        )
        raise SerdeError(msg + where)
    _, number_digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)
    dropped = -exponent - type_.scale
    # setScale(scale, UNNECESSARY): only zeros may go
    if dropped > 0 and any(number_digits[-dropped:]):
        msg = (
            f"Cannot fit decimal '{java_decimal_excerpt(number)}' into DECIMAL({type_.precision}, "
            f"{type_.scale}) "
            f"without rounding. (Requires {len(number_digits)},{-exponent})"
        )
        raise SerdeError(msg + where)
    # |number| < 10^digits and no digit past the scale: the result has at most `precision` digits
    exact = decimal.Context(prec=type_.precision + 1, traps=[decimal.Inexact, decimal.InvalidOperation])
    return number.quantize(decimal.Decimal(1).scaleb(-type_.scale), context=exact)


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


class _JavaNumber(decimal.Decimal):
    """A double that ``simplejson`` writes with Java's ``Double.toString`` text (``1.0E10``)."""

    _text: str

    def __new__(cls, value: float) -> _JavaNumber:
        number = super().__new__(cls, repr(value))
        number._text = java_double(value)
        return number

    def __str__(self) -> str:
        return self._text

    __repr__ = __str__


def dumps(value: Any) -> str:
    """Compact JSON text as Jackson writes it: exact decimals, doubles as Java prints them.

    Jackson quotes non-finite doubles ("NaN", "Infinity", "-Infinity"), so qtt does too.
    """
    import simplejson

    return simplejson.dumps(_jackson(value), use_decimal=True, separators=(",", ":"), ensure_ascii=False)


def _jackson(value: Any) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return _JavaNumber(value)
    if isinstance(value, dict):
        return {k: _jackson(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jackson(v) for v in value]
    return value


def loads(text: str | bytes) -> Any:
    """Parse JSON text keeping fractional numbers exact (as Decimal).

    Raises:
        ValueError: the text is not JSON, or holds an integer of more than 4,300 digits (more
            than Python converts, and far more than any SQL type holds).
    """
    import simplejson

    def integer(digits: str) -> int:
        if len(digits) > 4_300:
            msg = f"an integer of {len(digits):,} digits ({digits[:20]}...); qtt reads at most 4,300 digits"
            raise ValueError(msg)
        return int(digits)

    def number(text: str) -> decimal.Decimal:
        try:
            return decimal.Decimal(text)
        except decimal.InvalidOperation:  # an exponent beyond what Decimal holds (1e9223372036854775808)
            msg = f"the number {text[:40]} is out of range"
            raise ValueError(msg) from None

    return simplejson.loads(text, parse_float=number, parse_int=integer)


#: JSON nesting that records may use: Jackson's default ``StreamReadConstraints.maxNestingDepth``.
MAX_NESTING = 1000
# Stack frames one level of nesting may take: the parser, json_text and dumps each recurse.
_FRAMES_PER_LEVEL = 3


@contextlib.contextmanager
def deep_enough() -> Iterator[None]:
    """Let the JSON code below recurse through :data:`MAX_NESTING` levels, then restore the limit.

    Python's default limit (1000 frames, counted from the bottom of the stack) would stop
    short of Jackson's nesting depth. The limit is set from the current depth, not raised
    from the old limit: the C parser recurses on the C stack, so a limit raised elsewhere
    for other reasons must not let a record of a million brackets overflow it.
    """
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(_stack_depth() + MAX_NESTING * _FRAMES_PER_LEVEL + 100)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1  # type: ignore[assignment]
    return depth


def _reject_constant(name: str) -> Any:
    msg = f"Non-standard token '{name}': enable JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS to allow"
    raise ValueError(msg)


# well below Python's int/str conversion limit (4,300 digits)
_INT_DIGITS = 4000


def _json_int(text: str) -> int | decimal.Decimal:
    return int(text) if len(text) <= _INT_DIGITS else BigInteger(text)


def _json_decimal(text: str) -> decimal.Decimal:
    try:
        return java_big_decimal(text)
    except ValueError:
        # Jackson's message for a number BigDecimal cannot hold
        msg = f"Malformed numeric value ('{excerpt(text)}')"
        raise ValueError(msg) from None


def loads_strict(text: str | bytes) -> Any:
    """Parse the first JSON value in ``text`` as Jackson's ``ObjectMapper`` does by default.

    ``NaN`` and ``Infinity`` tokens are errors, and numbers are read as Jackson's nodes hold
    them, whatever their length or exponent. What follows the first value is not read
    (``FAIL_ON_TRAILING_TOKENS`` is off), except the character right after a number, which
    must be white space, and after ``true``, ``false`` or ``null``, which must not continue
    the word: ``{"a": 1} {"a": 2}`` and ``"x" junk`` read, ``1x`` and ``truex`` do not.

    Raises:
        ValueError: the text holds no JSON value, or its first one is not JSON (a
            :class:`UnicodeDecodeError` for malformed UTF-8 in it, a :class:`RecursionError`
            for nesting too deep for Python's stack).
    """
    import simplejson

    # surrogateescape keeps malformed UTF-8 after the first value from failing the record
    escaped = isinstance(text, bytes)
    decoded = text.decode("utf-8", errors="surrogateescape") if isinstance(text, bytes) else text
    # parse_float does what use_decimal=True would, with Java's limits on the scale
    decoder = simplejson.JSONDecoder(parse_constant=_reject_constant, parse_int=_json_int, parse_float=_json_decimal)
    try:
        value, end = decoder.raw_decode(decoded)
    except simplejson.JSONDecodeError as e:
        if escaped:
            _check_utf8(decoded, e.pos + 1)
        raise
    if escaped:
        # Jackson looks at the character after a number or a word, never after anything else
        _check_utf8(decoded, end if isinstance(value, str | list | dict) else end + 1)
    after = decoded[end : end + 1]
    if after and not _may_follow(value, after):
        msg = f"Unexpected character ({after!r}) right after the root-level value, at char {end}"
        raise ValueError(msg)
    return value


def _may_follow(value: Any, char: str) -> bool:
    """Whether Jackson reads a root value followed by ``char``: a number needs white space
    after it, ``true``/``false``/``null`` a character that is no Java identifier part."""
    if isinstance(value, bool) or value is None:
        return not (char.isalnum() or char in "_$" or ("a" + char).isidentifier() or "\x7f" <= char <= "\x9f")
    if isinstance(value, int | decimal.Decimal):
        return char in " \t\r\n"
    return True


# what surrogateescape decodes a malformed UTF-8 byte to
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _check_utf8(decoded: str, upto: int) -> None:
    """Raise the :class:`UnicodeDecodeError` of the first malformed byte before ``upto``."""
    if _ESCAPED_BYTE.search(decoded, 0, upto):
        decoded[:upto].encode("utf-8", errors="surrogateescape").decode("utf-8")
