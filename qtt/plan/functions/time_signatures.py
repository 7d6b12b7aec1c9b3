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
from qtt.plan.functions.signature_matching import Function

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
        constant_args=[1, 2],
    ),
    fn(
        "FORMAT_TIMESTAMP",
        sig([TIMESTAMP, STRING], STRING),
        sig([TIMESTAMP, STRING, STRING], STRING),
        constant_args=[1, 2],
    ),
    fn(
        "STRINGTOTIMESTAMP",
        sig([STRING, STRING], BIGINT),
        sig([STRING, STRING, STRING], BIGINT),
        constant_args=[1, 2],
    ),
    fn(
        "TIMESTAMPTOSTRING",
        sig([BIGINT, STRING], STRING),
        sig([BIGINT, STRING, STRING], STRING),
        constant_args=[1, 2],
    ),
    fn(
        "CONVERT_TZ",
        # ksqlDB converts only timestamps (a TIME overload was proposed and declined); the runtime
        # still converts a TIME for the plans persisted while qtt planned one
        sig([TIMESTAMP, STRING, STRING], TIMESTAMP),
        constant_args=[1, 2],
    ),
    fn("FORMAT_TIME", sig([TIME, STRING], STRING), constant_args=[1]),
    fn("PARSE_TIME", sig([STRING, STRING], TIME), constant_args=[1]),
    fn("TIMESTAMPADD", sig([STRING, INT, TIMESTAMP], TIMESTAMP)),
    fn("TIMESTAMPSUB", sig([STRING, INT, TIMESTAMP], TIMESTAMP)),
    fn("DATEADD", sig([STRING, INT, DATE], DATE)),
    fn("DATESUB", sig([STRING, INT, DATE], DATE)),
    fn("TIMEADD", sig([STRING, INT, TIME], TIME)),
    fn("TIMESUB", sig([STRING, INT, TIME], TIME)),
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


@cache
def _regions() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def java_zone_id_valid(zone: str) -> bool:
    """Whether ``java.time.ZoneId.of(zone)`` accepts ``zone`` (ksqlDB fails the value if not).

    Offsets and ``UTC``/``GMT``/``UT`` prefixes follow ``ZoneId.of``; region IDs are those of
    the IANA database Python ships. Abbreviations such as ``PST`` are not IDs (``ZoneId.of``
    rejects them, unlike ``java.util.TimeZone``).
    """
    if zone == "Z" or _OFFSET.fullmatch(zone) or _PREFIXED.fullmatch(zone):
        return _offset_in_range(zone)
    return zone in _regions()


def _offset_in_range(zone: str) -> bool:
    digits = re.sub(r"[^0-9]", "", zone)
    if not digits:
        return True
    hours = int(digits[:2]) if len(digits) != 1 and len(digits) != 3 else int(digits[:1])
    return hours <= 18
