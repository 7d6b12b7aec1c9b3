"""Spark implementations of ksqlDB's date, time and timestamp functions.

Registered with :func:`qtt.runtime.build.builtins.registry.implements`; the signatures are in
:mod:`qtt.plan.functions.time_signatures`. The session's time zone is UTC, ksqlDB's default zone in
its tests. A value ksqlDB's UDF fails on (text that does not parse, an unknown time zone)
is null, as ksqlDB logs the error and emits null.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.errors import UnsupportedFeatureError
from qtt.plan.functions.time_signatures import java_zone_id_valid
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.registry import constant, implements, null_of

_UNIT_MILLIS = {
    "MILLISECOND": 1,
    "SECOND": 1000,
    "MINUTE": 60_000,
    "HOUR": 3_600_000,
    "DAY": 86_400_000,
}
_DAY_MILLIS = 86_400_000
_DAY_NANOS = _DAY_MILLIS * 1_000_000
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1

# Pattern letters that print or read a zone or an offset (outside quoted text).
_ZONE_LETTERS = re.compile(r"'(?:[^']|'')*'|([zZVXxO])")
# Pattern letters a TIME cannot format (java.time fails on them: the date and the zone).
_NOT_TIME_LETTERS = re.compile(r"'(?:[^']|'')*'|([GuyYDMLdQqwWEecFgzZVXxO])")
# Pattern letters of a date field.
_DATE_LETTERS = re.compile(r"'(?:[^']|'')*'|([GuyYDMLdQqwWEecFg])")


def _has_letter(pattern: str, letters: re.Pattern[str]) -> bool:
    return any(m.group(1) for m in letters.finditer(pattern))


def _zone(expr: e.Call, index: int) -> str | None:
    """The constant time zone argument at ``index``: "UTC" when absent, None when null."""
    if index >= len(expr.args):
        return "UTC"
    value = constant(expr.args[index])
    return None if value is None else str(value)


def _pattern(expr: e.Call) -> str | None:
    value = constant(expr.args[1])
    return None if value is None else str(value)


def _unit_millis(expr: e.Call) -> int:
    unit = expr.args[0]
    if not isinstance(unit, e.IntervalUnit):
        # ksqlDB's parameter is a java.util.concurrent.TimeUnit: only a unit keyword fits.
        msg = f"{expr.name} with a unit that is not a time-unit keyword"
        raise UnsupportedFeatureError(msg)
    return _UNIT_MILLIS[unit.unit]


# ---------------------------------------------------------------------------- epoch numbers


@implements("FROM_UNIXTIME")
def _from_unixtime(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.timestamp_millis(args[0])


@implements("UNIX_TIMESTAMP")
def _unix_timestamp(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.unix_millis(args[0] if args else F.current_timestamp())


@implements("UNIX_DATE")
def _unix_date(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.unix_date(args[0] if args else F.current_date())


@implements("FROM_DAYS")
def _from_days(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.date_from_unix_date(args[0])


# ---------------------------------------------------------------------------- parsing and formatting


def parse_timestamp(value: Column, pattern: str, zone: str) -> Column:
    """ksqlDB's ``StringToTimestampParser``: missing fields default to 1970-01-01 00:00, a
    zone in the text wins over ``zone``, text that does not parse is null."""
    local = F.to_timestamp(value, pattern)
    if _has_letter(pattern, _ZONE_LETTERS) or zone == "UTC":
        return local
    return F.to_utc_timestamp(local, zone)


def format_timestamp(value: Column, pattern: str, zone: str, function: str) -> Column:
    """``timestamp.toInstant().atZone(zone).format(pattern)``."""
    if zone == "UTC":
        return F.date_format(value, pattern)
    if _has_letter(pattern, _ZONE_LETTERS):
        # Spark prints the session's zone (UTC) for these letters, whatever the shift.
        msg = f"{function} with a zone or offset pattern letter and a time zone other than UTC"
        raise UnsupportedFeatureError(msg)
    return F.date_format(F.from_utc_timestamp(value, zone), pattern)


def _parsed(expr: e.Call, args: Sequence[Column]) -> Column | None:
    pattern, zone = _pattern(expr), _zone(expr, 2)
    if pattern is None or zone is None or not java_zone_id_valid(zone):
        return None
    return parse_timestamp(args[0], pattern, zone)


@implements("PARSE_TIMESTAMP")
def _parse_timestamp(expr: e.Call, args: Sequence[Column]) -> Column:
    parsed = _parsed(expr, args)
    return null_of(t.TIMESTAMP) if parsed is None else parsed


@implements("STRINGTOTIMESTAMP")
def _string_to_timestamp(expr: e.Call, args: Sequence[Column]) -> Column:
    parsed = _parsed(expr, args)
    return null_of(t.BIGINT) if parsed is None else F.unix_millis(parsed)


def _formatted(expr: e.Call, value: Column) -> Column:
    pattern, zone = _pattern(expr), _zone(expr, 2)
    if pattern is None or zone is None or not java_zone_id_valid(zone):
        return null_of(t.STRING)
    return format_timestamp(value, pattern, zone, expr.name)


@implements("FORMAT_TIMESTAMP")
def _format_timestamp(expr: e.Call, args: Sequence[Column]) -> Column:
    return _formatted(expr, args[0])


@implements("TIMESTAMPTOSTRING")
def _timestamp_to_string(expr: e.Call, args: Sequence[Column]) -> Column:
    return _formatted(expr, F.timestamp_millis(args[0]))


@implements("FORMAT_TIME")
def _format_time(expr: e.Call, args: Sequence[Column]) -> Column:
    pattern = _pattern(expr)
    if pattern is None or _has_letter(pattern, _NOT_TIME_LETTERS):
        # LocalTime.format fails on a date or zone field: ksqlDB emits null.
        return null_of(t.STRING)
    return F.date_format(args[0], pattern)


@implements("PARSE_TIME")
def _parse_time(expr: e.Call, args: Sequence[Column]) -> Column:
    pattern = _pattern(expr)
    if pattern is None or _has_letter(pattern, _DATE_LETTERS):
        # ParseTime fails a pattern with a date field, whether or not the text parses.
        return null_of(t.TIME)
    if _has_letter(pattern, _ZONE_LETTERS):
        msg = f"{expr.name} with a zone or offset pattern letter"
        raise UnsupportedFeatureError(msg)
    return time_millis(F.call_function("try_to_time", args[0], F.lit(pattern)))


def time_millis(value: Column) -> Column:
    """A TIME cut to milliseconds, ksqlDB's precision (``java.sql.Time``)."""
    return F.call_function("time_trunc", F.lit("MILLISECOND"), value)


@implements("CONVERT_TZ")
def _convert_tz(expr: e.Call, args: Sequence[Column]) -> Column:
    source, target = _zone(expr, 1), _zone(expr, 2)
    if source is None or target is None or not (java_zone_id_valid(source) and java_zone_id_valid(target)):
        return null_of(t.TIMESTAMP)
    # The instant plus the target's offset minus the source's, both offsets at that instant.
    millis = F.unix_millis(args[0])
    shift = F.unix_millis(F.from_utc_timestamp(args[0], target)) - F.unix_millis(F.from_utc_timestamp(args[0], source))
    return F.timestamp_millis(millis + shift)


# ---------------------------------------------------------------------------- adding time units


def _delta(expr: e.Call, args: Sequence[Column], sign: int) -> Column:
    return args[1].cast("bigint") * F.lit(sign * _unit_millis(expr))


@implements("TIMESTAMPADD", "TIMESTAMPSUB")
def _timestamp_add(expr: e.Call, args: Sequence[Column]) -> Column:
    sign = 1 if expr.name == "TIMESTAMPADD" else -1
    return F.timestamp_millis(F.unix_millis(args[2]) + _delta(expr, args, sign))


@implements("DATEADD", "DATESUB")
def _date_add(expr: e.Call, args: Sequence[Column]) -> Column:
    sign = 1 if expr.name == "DATEADD" else -1
    millis = F.unix_date(args[2]).cast("bigint") * F.lit(_DAY_MILLIS) + _delta(expr, args, sign)
    # TimeUnit.MILLISECONDS.toDays truncates toward zero, as Spark's div: an hour before
    # the epoch is still 1970-01-01.
    days = F.call_function("div", millis, F.lit(_DAY_MILLIS))
    return F.date_from_unix_date(days.cast("int"))


@implements("TIMEADD", "TIMESUB")
def _time_add(expr: e.Call, args: Sequence[Column]) -> Column:
    # TimeUnit.toNanos saturates at the long range, LocalTime.plus wraps around midnight, and
    # the result is cut to milliseconds; decimals hold the product without overflow.
    unit_nanos = F.lit(_unit_millis(expr) * 1_000_000).cast("decimal(20,0)")
    nanos = F.least(F.greatest(args[1].cast("decimal(20,0)") * unit_nanos, F.lit(_LONG_MIN)), F.lit(_LONG_MAX))
    of_day = F.call_function("time_to_micros", args[2]).cast("decimal(20,0)") * F.lit(1000)
    shifted = of_day + nanos if expr.name == "TIMEADD" else of_day - nanos
    millis = F.floor(F.pmod(shifted, F.lit(_DAY_NANOS)) / F.lit(1_000_000))
    return F.call_function("time_from_millis", millis.cast("bigint"))
