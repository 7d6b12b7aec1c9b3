"""Scalar function signatures: the date and time section of the table.

Written in :mod:`qtt.plan.functions.signature_dsl`; :mod:`qtt.plan.functions.scalar_signatures` merges every
section into one table. Return types, null rules and errors follow ksqlDB's UDFs
(``io.confluent.ksql.function.udf.datetime``).

A time unit argument (``DAYS``, ``MILLISECONDS``) arrives as an interval-unit expression of
type STRING; patterns are java.time ``DateTimeFormatter`` patterns, checked by
:func:`qtt.plan.functions.signature_dsl.datetime_pattern_problem`; time zones are ``java.time.ZoneId``
IDs, checked by :func:`java_zone_id_valid`.
"""

from __future__ import annotations

import re
import zoneinfo
from functools import cache

from qtt import sqltypes as t
from qtt.plan.functions.signature_dsl import BIGINT, DATE, INT, STRING, fn, sig
from qtt.plan.functions.signature_matching import INTERVAL_UNIT, Function

TIME, TIMESTAMP = t.TIME, t.TIMESTAMP

# ksqlDB's ConvertTz takes a TIMESTAMP only; a TIME has no instant to shift.

FUNCTIONS: list[Function] = [
    fn("FROM_UNIXTIME", sig([BIGINT], TIMESTAMP)),
    fn("UNIX_TIMESTAMP", sig([], BIGINT), sig([TIMESTAMP], BIGINT)),
    fn("UNIX_DATE", sig([], INT), sig([DATE], INT)),
    fn("FROM_DAYS", sig([INT], DATE)),
    fn(
        "PARSE_TIMESTAMP",
        sig([STRING, STRING], TIMESTAMP),
        sig([STRING, STRING, STRING], TIMESTAMP),
        constant_args=[1],
        throws_on_input=True,
    ),
    fn(
        "FORMAT_TIMESTAMP",
        sig([TIMESTAMP, STRING], STRING),
        sig([TIMESTAMP, STRING, STRING], STRING),
        constant_args=[1],
        throws_on_input=True,
    ),
    fn(
        "STRINGTOTIMESTAMP",
        sig([STRING, STRING], BIGINT),
        sig([STRING, STRING, STRING], BIGINT),
        constant_args=[1],
        throws_on_input=True,
    ),
    fn(
        "TIMESTAMPTOSTRING",
        sig([BIGINT, STRING], STRING),
        sig([BIGINT, STRING, STRING], STRING),
        constant_args=[1],
        throws_on_input=True,
    ),
    fn(
        "CONVERT_TZ",
        # ksqlDB converts only timestamps (a TIME overload was proposed and declined); the runtime
        # still converts a TIME for the plans persisted while qtt planned one
        sig([TIMESTAMP, STRING, STRING], TIMESTAMP),
        constant_args=[1],
        throws_on_input=True,
    ),
    fn("FORMAT_TIME", sig([TIME, STRING], STRING), constant_args=[1], throws_on_input=True),
    fn("PARSE_TIME", sig([STRING, STRING], TIME), constant_args=[1], throws_on_input=True),
    fn("TIMESTAMPADD", sig([INTERVAL_UNIT, INT, TIMESTAMP], TIMESTAMP)),
    fn("TIMESTAMPSUB", sig([INTERVAL_UNIT, INT, TIMESTAMP], TIMESTAMP)),
    fn("DATEADD", sig([INTERVAL_UNIT, INT, DATE], DATE)),
    fn("DATESUB", sig([INTERVAL_UNIT, INT, DATE], DATE)),
    fn("TIMEADD", sig([INTERVAL_UNIT, INT, TIME], TIME)),
    fn("TIMESUB", sig([INTERVAL_UNIT, INT, TIME], TIME)),
]

#: Functions whose constant argument at this position is a java.time pattern.
PATTERN_ARGS: dict[str, int] = {
    "PARSE_TIMESTAMP": 1,
    "FORMAT_TIMESTAMP": 1,
    "STRINGTOTIMESTAMP": 1,
    "TIMESTAMPTOSTRING": 1,
    "FORMAT_TIME": 1,
    "PARSE_TIME": 1,
}

#: Functions that take a time-unit keyword as their first argument.
TIME_UNIT_FUNCTIONS = frozenset(["TIMESTAMPADD", "TIMESTAMPSUB", "DATEADD", "DATESUB", "TIMEADD", "TIMESUB"])

# java.time.ZoneOffset.of's forms: Z, +h, +hh, +hh:mm, +hhmm, +hh:mm:ss, +hhmmss.
_OFFSET = re.compile(r"[+-](\d{1,2}|\d{2}:?\d{2}|\d{2}:\d{2}:\d{2}|\d{6})")
_PREFIXED = re.compile(r"(UTC|GMT|UT)(" + _OFFSET.pattern + r")?")


# IANA names the JDK's tzdb.dat leaves out (ZoneId.of refuses them: EST, HST, MST and ROC are
# dropped as ambiguous, Factory is not compiled), and the system's link to its own zone.
_NOT_JAVA_REGIONS = frozenset(["EST", "HST", "MST", "ROC", "Factory", "localtime", "posixrules"])
# IDs the JDK's tzdb.dat keeps and IANA's tzdata dropped: the SystemV zones (fixed offsets, or US
# daylight saving time for the two-zone names), which ZoneId.of accepts and Spark's JVM runs.
_JDK_ONLY_REGIONS = frozenset(
    [
        "SystemV/AST4",
        "SystemV/AST4ADT",
        "SystemV/CST6",
        "SystemV/CST6CDT",
        "SystemV/EST5",
        "SystemV/EST5EDT",
        "SystemV/HST10",
        "SystemV/MST7",
        "SystemV/MST7MDT",
        "SystemV/PST8",
        "SystemV/PST8PDT",
        "SystemV/YST9",
        "SystemV/YST9YDT",
    ]
)


@cache
def java_regions() -> frozenset[str]:
    """The region IDs ``ZoneId.of`` accepts."""
    return (frozenset(zoneinfo.available_timezones()) - _NOT_JAVA_REGIONS) | _JDK_ONLY_REGIONS


def java_zone_id_valid(zone: str) -> bool:
    """Whether ``java.time.ZoneId.of(zone)`` accepts ``zone`` (ksqlDB fails the value if not).

    Offsets and ``UTC``/``GMT``/``UT`` prefixes follow ``ZoneId.of``; region IDs are those of
    the IANA database Python ships and the JDK's ``SystemV`` ones. Abbreviations such as ``PST``
    are not IDs (``ZoneId.of`` rejects them, unlike ``java.util.TimeZone``).
    """
    if zone == "Z" or _OFFSET.fullmatch(zone) or _PREFIXED.fullmatch(zone):
        return _offset_in_range(zone)
    return zone in java_regions()


# The IDs of offsets ZoneId.of accepts, ranges included (for a zone that is a column's value).
_HH, _MM = r"(?:0\d|1[0-7])", r"[0-5]\d"
_IN_RANGE = rf"[+-](?:\d|0\d|1[0-8]|{_HH}:?{_MM}|{_HH}:{_MM}:{_MM}|{_HH}{_MM}{_MM}|18:?00|18:00:00|180000)"
JAVA_OFFSET_ID = rf"^(?:Z|(?:UTC|GMT|UT)(?:{_IN_RANGE})?|{_IN_RANGE})$"


def java_offset_zone_id(zone: str) -> str | None:
    """``ZoneId.of(zone).getId()`` of a valid offset zone (``GMT+5`` is ``GMT+05:00``, ``+00:00``
    is ``Z``, ``UTC+00:00`` is ``UTC``); None for a region."""
    match = _PREFIXED.fullmatch(zone)
    prefix, offset = (match.group(1), match.group(2) or "") if match else ("", zone)
    if zone != "Z" and not (match or _OFFSET.fullmatch(zone)):
        return None
    digits = re.sub(r"[^0-9]", "", offset)
    if len(digits) <= 2:
        digits = digits.zfill(2)
    hours, minutes, seconds = int(digits[:2] or 0), int(digits[2:4] or 0), int(digits[4:6] or 0)
    if hours == minutes == seconds == 0:
        return prefix or "Z"
    text = f"{offset[0]}{hours:02}:{minutes:02}" + (f":{seconds:02}" if seconds else "")
    return prefix + text


def _offset_in_range(zone: str) -> bool:
    """ZoneOffset.of's ranges: hours to 18, minutes and seconds to 59, at most 18:00 in all."""
    digits = re.sub(r"[^0-9]", "", zone)
    if not digits:
        return True
    if len(digits) <= 2:
        return int(digits) <= 18
    hours, minutes, seconds = int(digits[:2]), int(digits[2:4]), int(digits[4:6] or 0)
    return minutes <= 59 and seconds <= 59 and hours * 3600 + minutes * 60 + seconds <= 18 * 3600
