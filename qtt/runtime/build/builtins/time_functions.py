"""Spark implementations of ksqlDB's date, time and timestamp functions.

Registered with :func:`qtt.runtime.build.builtins.registry.implements`; the signatures are in
:mod:`qtt.plan.functions.time_signatures`. The session's time zone is UTC, ksqlDB's default zone in
its tests. A value ksqlDB's UDF fails on (text that does not parse, an unknown time zone)
is null, as ksqlDB logs the error and emits null.
"""

from __future__ import annotations

import datetime
import functools
import re
import zoneinfo
from collections.abc import Callable, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.errors import UnsupportedFeatureError
from qtt.plan.functions.signature_dsl import PATTERN_TOKEN
from qtt.plan.functions.time_signatures import (
    JAVA_OFFSET_ID,
    java_offset_zone_id,
    java_regions,
    java_zone_id_valid,
)
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.dates import formats_back, smart_day_text, without_day_name
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
#: the epoch milliseconds Spark's timestamps hold (microseconds in a long)
_LAST_MILLI = t.BIGINT_MAX // 1000


def _instant(millis: Column) -> Column:
    """The timestamp of epoch milliseconds: null beyond Spark's range (about 292,000 years),
    where ksqlDB's ``java.sql.Timestamp`` holds any long and Spark would fail the query."""
    return F.when(millis.between(-_LAST_MILLI, _LAST_MILLI), F.timestamp_millis(millis))


# Pattern letters that print or read a zone or an offset (outside quoted text).
_ZONE_LETTERS = re.compile(r"'(?:[^']|'')*'|([zZVXxO])")
# The zone-id letter (``VV``), whose field reads a region id, UTC/GMT/UT or an offset.
_ZONE_ID_LETTER = re.compile(r"'(?:[^']|'')*'|(V)")
# The localized offset letter, which Spark does not format.
_LOCALIZED_OFFSET = re.compile(r"'(?:[^']|'')*'|(O)")
# Pattern letters a TIME cannot format (java.time fails on them: the date and the zone).
_NOT_TIME_LETTERS = re.compile(r"'(?:[^']|'')*'|([GuyYDMLdQqwWEecFgzZVXxO])")
# Pattern letters of a date field.
_DATE_LETTERS = re.compile(r"'(?:[^']|'')*'|([GuyYDMLdQqwWEecFg])")


def _has_letter(pattern: str, letters: re.Pattern[str]) -> bool:
    return any(m.group(1) for m in letters.finditer(pattern))


def _zone(expr: e.Call, index: int, args: Sequence[Column]) -> str | Column | None:
    """The time zone argument at ``index``: "UTC" when absent, None when a null literal, the
    column when it is no literal (ksqlDB reads the zone of each row)."""
    if index >= len(expr.args):
        return "UTC"
    if not isinstance(expr.args[index], e.Literal):
        return args[index]
    value = constant(expr.args[index])
    return None if value is None else str(value)


def _zone_valid(zone: Column) -> Column:
    """Whether ``ZoneId.of`` accepts each row's zone (a region or an offset in range)."""
    return zone.isin(*sorted(java_regions())) | zone.rlike(JAVA_OFFSET_ID)


def _in_zones(zones: Sequence[str | Column | None], build: Callable[..., Column], null: t.SqlType) -> Column:
    """``build(*zones)`` where every zone is valid, null elsewhere: as ksqlDB fails the value of a
    zone ``ZoneId.of`` refuses. A zone column is given to ``build`` as ``UTC`` on the rows whose
    zone is invalid (Spark fails on them), whose result is then null."""
    if any(zone is None or (isinstance(zone, str) and not java_zone_id_valid(zone)) for zone in zones):
        return null_of(null)
    valid: Column | None = None
    safe: list[str | Column] = []
    for zone in zones:
        assert zone is not None
        if isinstance(zone, str):
            safe.append(zone)
            continue
        ok = _zone_valid(zone)
        valid = ok if valid is None else valid & ok
        safe.append(F.when(ok, zone).otherwise(F.lit("UTC")))
    built = build(*safe)
    return built if valid is None else F.when(valid, built)


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
    return _instant(args[0])


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


def _reads_case(pattern: str) -> bool:
    """Whether the pattern has text whose case matters: a text field or a quoted letter."""
    for match in PATTERN_TOKEN.finditer(pattern):
        text, letter = match.group(0), match.group(1)
        if letter is None and any(c.isalpha() for c in text):
            return True
        if letter is not None and (letter in "EaGzVXxZO" or (letter == "M" and len(text) >= 3)):
            return True
    return False


def java_strict(value: Column, parsed: Column, pattern: str) -> Column:
    """What ksqlDB's ``DateTimeFormatter.ofPattern`` parses of Spark's ``parsed``: java.time
    matches text fields and literals case-sensitively (``dec`` is not ``Dec``), reads a
    fraction of exactly its letters' digits and checks a day-of-week name against the date,
    where Spark ignores case, takes fewer digits and ignores the name. A parse whose text
    formats back to itself but for case is null; with a fraction or a day-of-week name, one
    that does not format back to itself at all."""
    if formats_back(pattern):
        return F.when(F.date_format(parsed, pattern) != value, F.lit(None)).otherwise(parsed)
    if not _reads_case(pattern):
        return parsed
    back = F.date_format(parsed, pattern)
    return F.when((back != value) & (F.lower(back) == F.lower(value)), F.lit(None)).otherwise(parsed)


def parse_timestamp(value: Column, pattern: str, zone: str | Column, function: str) -> Column:
    """ksqlDB's ``StringToTimestampParser``: missing fields default to 1970-01-01 00:00, a
    zone in the text wins over ``zone``, text that does not parse is null. Its SMART resolver
    reads the 30th of February as the 28th (see :func:`java_strict` for what it refuses)."""
    text, spark_pattern = without_day_name(value, pattern, function)
    local = java_strict(value, F.to_timestamp(text, spark_pattern), pattern)
    clamped = smart_day_text(value, pattern)
    if clamped is not None:
        local = F.coalesce(local, java_strict(clamped, F.to_timestamp(clamped, pattern), pattern))
    if _has_letter(pattern, _ZONE_ID_LETTER):
        local = F.when(_zone_id_case_differs(value), F.lit(None)).otherwise(local)
    if _has_letter(pattern, _ZONE_LETTERS) or (isinstance(zone, str) and zone == "UTC"):
        return local
    return _at_zone_from_1970(local, zone)


@functools.cache
def _zone_id_token() -> str:
    """A regex finding a zone id (a region, UTC, GMT, UT or Z) standing alone in a text."""
    ids = sorted(java_regions() | {"UT", "Z"}, key=len, reverse=True)
    return "(?<![A-Za-z])(?:" + "|".join(re.escape(i) for i in ids) + ")(?![A-Za-z])"


def _zone_id_case_differs(value: Column) -> Column:
    """Whether the text names a zone id only in another case than its own (``america/new_york``,
    ``utc``): Spark's parser ignores case, java.time's (ksqlDB's ``Locale.ROOT`` formatter) reads
    a ``VV`` field's id only as spelled, so ksqlDB fails the value."""
    token = _zone_id_token()
    return value.rlike("(?i)" + token) & ~value.rlike(token)


def _at_zone_from_1970(local: Column, zone: str | Column) -> Column:
    """The instant of the wall-clock time ``local`` in ``zone`` as ksqlDB's parser resolves it: it
    sets the parsed fields one by one on 1970-01-01T00:00 in the zone, and ``ZonedDateTime.with``
    keeps the offset it has when still valid. So a time a DST change repeats takes the offset
    the zone had at that time on the same day of 1970 when that is one of the two (Spark's
    ``to_utc_timestamp`` always takes the earlier); a skipped time moves forward by the gap."""
    earlier = F.to_utc_timestamp(local, zone)
    local_millis = F.unix_millis(local)
    of_day = F.pmod(local_millis, F.lit(_DAY_MILLIS))
    shadow = F.timestamp_millis((F.dayofyear(local) - 1).cast("bigint") * F.lit(_DAY_MILLIS) + of_day)
    offset_1970 = F.unix_millis(shadow) - F.unix_millis(F.to_utc_timestamp(shadow, zone))
    kept = F.timestamp_millis(local_millis - offset_1970)
    return F.when(F.from_utc_timestamp(kept, zone) == local, kept).otherwise(earlier)


def format_timestamp(value: Column, pattern: str, zone: str | Column, function: str) -> Column:
    """``timestamp.toInstant().atZone(zone).format(pattern)``."""
    if isinstance(zone, str) and zone == "UTC" and not _has_letter(pattern, _LOCALIZED_OFFSET):
        return F.date_format(value, pattern)
    local = F.from_utc_timestamp(value, zone)
    if not _has_letter(pattern, _ZONE_LETTERS):
        return F.date_format(local, pattern)
    # Spark prints the session's zone (UTC) for zone and offset letters, whatever the shift: qtt
    # prints those fields itself, from the zone's offset at the instant, and lets Spark format
    # the rest of the pattern in the zone's local time.
    offset = ((F.unix_millis(local) - F.unix_millis(value)) / F.lit(60_000)).cast("int")
    parts: list[Column] = []
    for text, is_zone in _pattern_parts(pattern, function):
        if is_zone:
            parts.append(_zone_field(text, offset, zone, value, function))
        elif text:
            parts.append(F.date_format(local, text))
    return F.when(value.isNull(), F.lit(None).cast("string")).otherwise(F.concat(*parts))


def _pattern_parts(pattern: str, function: str) -> list[tuple[str, bool]]:
    """The pattern cut into runs of one zone letter (True) and the text between them (False)."""
    if "[" in pattern or "]" in pattern:
        # an optional section around a zone field would need java.time's own printer
        raise UnsupportedFeatureError(f"{function} with a zone pattern letter inside an optional section")
    parts: list[tuple[str, bool]] = []
    rest = ""
    position = 0
    for match in _ZONE_LETTERS.finditer(pattern):
        if not match.group(1) or match.start() < position:
            continue
        rest += pattern[position : match.start()]
        end = match.end()
        while end < len(pattern) and pattern[end] == match.group(1):
            end += 1
        parts += [(rest, False), (pattern[match.start() : end], True)]
        rest, position = "", end
    parts.append((rest + pattern[position:], False))
    return parts


def _zone_field(letters: str, offset: Column, zone: str | Column, instant: Column, function: str) -> Column:
    """A zone or offset field as java.time's DateTimeFormatter prints it, at ``offset`` minutes."""
    letter, count = letters[0], len(letters)
    sign = F.when(offset < 0, F.lit("-")).otherwise(F.lit("+"))
    hours, minutes = F.abs(offset) / 60, F.abs(offset) % 60
    hh, mm = F.lpad(hours.cast("int").cast("string"), 2, "0"), F.lpad(minutes.cast("string"), 2, "0")
    short = F.concat(sign, hh, F.when(minutes != 0, mm).otherwise(F.lit("")))
    compact, colon = F.concat(sign, hh, mm), F.concat(sign, hh, F.lit(":"), mm)
    gmt = F.when(offset == 0, F.lit("GMT"))
    if letter in "Xx" and count <= 5:
        text = {1: short, 2: compact, 3: colon, 4: compact, 5: colon}[count]
        return F.when(offset == 0, F.lit("Z")).otherwise(text) if letter == "X" else text
    if letter == "Z" and count <= 5:
        if count == 4:
            return gmt.otherwise(F.concat(F.lit("GMT"), colon))
        return F.when(offset == 0, F.lit("Z")).otherwise(colon) if count == 5 else compact
    if letter == "O" and count in (1, 4):
        if count == 4:
            return gmt.otherwise(F.concat(F.lit("GMT"), colon))
        hour = hours.cast("int").cast("string")
        return gmt.otherwise(
            F.concat(F.lit("GMT"), sign, hour, F.when(minutes != 0, F.concat(F.lit(":"), mm)).otherwise(F.lit("")))
        )
    offset_id = java_offset_zone_id(zone) if isinstance(zone, str) else None
    if offset_id is not None and ((letter, count) == ("V", 2) or (letter == "z" and count <= 3)):
        return F.lit(offset_id)  # an offset zone prints its normalized id (GMT+5 is GMT+05:00)
    if letter == "V" and count == 2 and isinstance(zone, str):
        return F.lit(zone)
    if letter == "z" and count <= 3 and isinstance(zone, str):
        names = _short_zone_names(zone)
        if names is not None:
            chosen = F.lit(None).cast("string")
            for minutes_east, name in names.items():
                chosen = F.when(offset == minutes_east, F.lit(name)).otherwise(chosen)
            return chosen
    if not isinstance(zone, str):
        raise UnsupportedFeatureError(f"{function} with the pattern letters {letters!r} and a time zone column")
    raise UnsupportedFeatureError(f"{function} with the pattern letters {letters!r} and a time zone other than UTC")


@functools.cache
def _short_zone_names(zone: str) -> dict[int, str] | None:
    """The zone's short names by offset (minutes east), as tzdata names them, when each offset it
    used since 1970 has one alphabetic name; None otherwise (java.time's names may differ there)."""
    try:
        info = zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None
    names: dict[int, str] = {}
    moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    while moment.year < 2040:
        local = moment.astimezone(info)
        offset, name = local.utcoffset(), local.tzname()
        if offset is None or name is None or not name.isalpha():
            return None
        minutes_east = int(offset.total_seconds() // 60)
        if names.setdefault(minutes_east, name) != name:
            return None
        moment += datetime.timedelta(days=15)
    return names


def _parsed(expr: e.Call, args: Sequence[Column], millis: bool) -> Column:
    pattern, result = _pattern(expr), t.BIGINT if millis else t.TIMESTAMP
    if pattern is None:
        return null_of(result)

    def parse(zone: str | Column) -> Column:
        parsed = parse_timestamp(args[0], pattern, zone, expr.name)
        return F.unix_millis(parsed) if millis else parsed

    return _in_zones([_zone(expr, 2, args)], parse, result)


@implements("PARSE_TIMESTAMP")
def _parse_timestamp(expr: e.Call, args: Sequence[Column]) -> Column:
    return _parsed(expr, args, millis=False)


@implements("STRINGTOTIMESTAMP")
def _string_to_timestamp(expr: e.Call, args: Sequence[Column]) -> Column:
    return _parsed(expr, args, millis=True)


def _formatted(expr: e.Call, value: Column, args: Sequence[Column]) -> Column:
    pattern = _pattern(expr)
    if pattern is None:
        return null_of(t.STRING)
    return _in_zones([_zone(expr, 2, args)], lambda zone: format_timestamp(value, pattern, zone, expr.name), t.STRING)


@implements("FORMAT_TIMESTAMP")
def _format_timestamp(expr: e.Call, args: Sequence[Column]) -> Column:
    return _formatted(expr, args[0], args)


@implements("TIMESTAMPTOSTRING")
def _timestamp_to_string(expr: e.Call, args: Sequence[Column]) -> Column:
    return _formatted(expr, _instant(args[0]), args)


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
    parsed = F.call_function("try_to_time", args[0], F.lit(pattern))
    return time_millis(java_strict(args[0], parsed, pattern))


def time_millis(value: Column) -> Column:
    """A TIME cut to milliseconds, ksqlDB's precision (``java.sql.Time``)."""
    return F.call_function("time_trunc", F.lit("MILLISECOND"), value)


# ConvertTz takes a zone's offset from ``TimeZone.getTimeZone(ZoneId.of(zone))``, which on the JDKs
# ksqlDB runs on (8 to 17) knows a ``GMT+hh:mm`` id but not a ``UTC+``/``UT+`` one nor an offset
# with seconds, and takes GMT for them: their offset is zero.
_GMT_FALLBACK = r"^(?:(?:UTC|UT)[+-].*|(?:GMT)?[+-](?:\d{2}:\d{2}:(?!00)\d{2}|\d{4}(?!00)\d{2}))$"


def _time_zone(zone: str | Column) -> str | Column:
    """The zone ``java.util.TimeZone`` makes of a valid ZoneId: "UTC" where it falls back to GMT."""
    if isinstance(zone, str):
        return "UTC" if re.match(_GMT_FALLBACK, zone) else zone
    return F.when(zone.rlike(_GMT_FALLBACK), F.lit("UTC")).otherwise(zone)


@implements("CONVERT_TZ")
def _convert_tz(expr: e.Call, args: Sequence[Column]) -> Column:
    zones = [_zone(expr, 1, args), _zone(expr, 2, args)]

    def build(source: str | Column, target: str | Column) -> Column:
        return _shifted(expr, args, _time_zone(source), _time_zone(target))

    return _in_zones(zones, build, expr.sql_type)


def _shifted(expr: e.Call, args: Sequence[Column], source: str | Column, target: str | Column) -> Column:
    if expr.args[0].result_type == t.TIME:
        # ksqlDB's TIME overload takes the time's milliseconds of day for an instant of
        # 1970-01-01 (UTC), shifts by the zones' offsets at that instant, and wraps at midnight.
        of_day = (F.call_function("time_to_micros", args[0]) / F.lit(1000)).cast("bigint")
        instant = F.timestamp_millis(of_day)
        shift = F.unix_millis(F.from_utc_timestamp(instant, target)) - F.unix_millis(
            F.from_utc_timestamp(instant, source)
        )
        return F.call_function("time_from_millis", F.pmod(of_day + shift, F.lit(_DAY_MILLIS)))
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
    return _instant(F.unix_millis(args[2]) + _delta(expr, args, sign))


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
    nanos = F.least(F.greatest(args[1].cast("decimal(20,0)") * unit_nanos, F.lit(t.BIGINT_MIN)), F.lit(t.BIGINT_MAX))
    of_day = F.call_function("time_to_micros", args[2]).cast("decimal(20,0)") * F.lit(1000)
    shifted = of_day + nanos if expr.name == "TIMEADD" else of_day - nanos
    millis = F.floor(F.pmod(shifted, F.lit(_DAY_NANOS)) / F.lit(1_000_000))
    return F.call_function("time_from_millis", millis.cast("bigint"))
