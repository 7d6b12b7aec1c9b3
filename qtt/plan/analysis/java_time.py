"""java.time's reading of ksqlDB's timestamp text ``yyyy-MM-dd'T'HH:mm:ss.SSS`` and of an offset.

ksqlDB's ``PartialStringToTimestampParser`` completes a partial text to that pattern and reads it
with ``DateTimeFormatter.ofPattern`` (strict, case-sensitive, SMART resolver), and reads the
offset after the time with ``ZoneId.of``. This module does the same with their messages: the
index where the text stops matching, the field whose value is out of range, the offset's
format or range (``ZoneOffset.of``).
"""

from __future__ import annotations

import datetime

from qtt.sqltypes import BIGINT_MAX

_YEAR_MAX = 999_999_999
_MONTH_DAYS = {4: 30, 6: 30, 9: 30, 11: 30}

# The pattern: ("year",), a literal character, a two-digit field, or the three-digit fraction.
_FIELDS: list[str] = ["year", "-", "month", "-", "day", "T", "hour", ":", "minute", ":", "second", ".", "fraction"]


class _Stop(Exception):
    """The text stops matching the pattern at ``index``."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def local_millis(text: str) -> int:
    """The epoch milliseconds of ``text`` read in UTC.

    Raises:
        ValueError: the text does not parse, with ``DateTimeParseException``'s message.
    """
    shown = text[:64] + "..." if len(text) > 64 else text
    try:
        values, end = _parse(text)
    except _Stop as stop:
        raise ValueError(f"Text '{shown}' could not be parsed at index {stop.index}") from None
    if end < len(text):
        raise ValueError(f"Text '{shown}' could not be parsed, unparsed text found at index {end}")
    try:
        return _resolved_millis(values)
    except ValueError as error:
        raise ValueError(f"Text '{shown}' could not be parsed: {error}") from None


def _parse(text: str) -> tuple[dict[str, int], int]:
    values: dict[str, int] = {}
    position = 0
    for field in _FIELDS:
        if field == "year":
            values[field], position = _year(text, position)
        elif field == "fraction":
            values[field], position = _fraction(text, position)
        elif len(field) == 1:
            if position >= len(text) or text[position] != field:
                raise _Stop(position)
            position += 1
        else:
            values[field], position = _digits(text, position, 2, 2)
    return values, position


def _is_digit(char: str) -> bool:
    return "0" <= char <= "9"


def _digits(text: str, position: int, least: int, most: int) -> tuple[int, int]:
    """A number of ``least`` to ``most`` ASCII digits at ``position`` (a sign stops it)."""
    if position + least > len(text):
        raise _Stop(position)
    end = position
    while end < min(position + most, len(text)) and _is_digit(text[end]):
        end += 1
    if end < position + least:
        raise _Stop(position)
    value = int(text[position:end])
    while value > BIGINT_MAX:  # java.time reads one digit less rather than overflow
        end -= 1
        value = int(text[position:end])
    return value, end


def _year(text: str, position: int) -> tuple[int, int]:
    """``yyyy``: four to nineteen digits, a sign required beyond four (SignStyle.EXCEEDS_PAD)."""
    if position >= len(text):
        raise _Stop(position)
    sign = text[position] if text[position] in "+-" else ""
    start = position + len(sign)
    value, end = _digits(text, start, 4, 19)
    if sign == "-":
        if value == 0:
            raise _Stop(position)
        return -value, end
    if sign == "+" and end - start <= 4:
        raise _Stop(position)
    if not sign and end - start > 4:
        raise _Stop(start)
    return value, end


def _fraction(text: str, position: int) -> tuple[int, int]:
    """``SSS``: exactly three digits, as milliseconds."""
    digits = text[position : position + 3]
    if len(digits) < 3 or not all(_is_digit(c) for c in digits):
        raise _Stop(position)
    return int(digits), position + 3


def _check(name: str, shown_range: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise ValueError(f"Invalid value for {name} (valid values {shown_range}): {value}")
    return value


def _resolved_millis(values: dict[str, int]) -> int:
    """The SMART resolver: fields checked in java.time's order, a day past the month's end is the
    month's last day, ``24:00`` the next midnight."""
    # ValueRange.checkValidValue takes the largest maximum: YearOfEra goes to 10^9, Year does not
    _check("YearOfEra", f"1 - {_YEAR_MAX}/{_YEAR_MAX + 1}", values["year"], 1, _YEAR_MAX + 1)
    year = _check("Year", f"-{_YEAR_MAX} - {_YEAR_MAX}", values["year"], -_YEAR_MAX, _YEAR_MAX)
    month = _check("MonthOfYear", "1 - 12", values["month"], 1, 12)
    day = _check("DayOfMonth", "1 - 28/31", values["day"], 1, 31)
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    day = min(day, 29 if leap else 28) if month == 2 else min(day, _MONTH_DAYS.get(month, 31))
    minute = _check("MinuteOfHour", "0 - 59", values["minute"], 0, 59)
    hour, second, extra_days = values["hour"], values["second"], 0
    if hour == 24 and minute == 0 and second == 0 and values["fraction"] == 0:
        hour, extra_days = 0, 1
    else:
        _check("HourOfDay", "0 - 23", hour, 0, 23)
        _check("SecondOfMinute", "0 - 59", second, 0, 59)
    days = _epoch_day(year, month, day) + extra_days
    return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + values["fraction"]


def _epoch_day(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any positive year)."""
    cycles, year_in_cycle = divmod(year - 1, 400)  # 400 years are 146097 days
    base = datetime.date(year_in_cycle + 1, month, day).toordinal()
    return cycles * 146_097 + base - datetime.date(1970, 1, 1).toordinal()


# ZoneOffset.of's layouts by length: the positions of its two-digit numbers, and whether a colon
# must come before each.
_OFFSET_LAYOUTS: dict[int, tuple[tuple[int, bool], ...]] = {
    3: ((1, False),),
    5: ((1, False), (3, False)),
    6: ((1, False), (4, True)),
    7: ((1, False), (3, False), (5, False)),
    9: ((1, False), (4, True), (7, True)),
}


def zone_offset_seconds(offset_id: str) -> int:
    """``ZoneOffset.of(offset_id)`` in seconds east of UTC (``ZoneId.of`` of a text starting with
    a sign): ``+h``, ``+hh``, ``+hhmm``, ``+hh:mm``, ``+hhmmss``, ``+hh:mm:ss``, in range.

    Raises:
        ValueError: ``ZoneOffset.of``'s message.
    """
    if len(offset_id) == 2:
        offset_id = offset_id[0] + "0" + offset_id[1]
    layout = _OFFSET_LAYOUTS.get(len(offset_id))
    if layout is None:
        raise ValueError(f"Invalid ID for ZoneOffset, invalid format: {offset_id}")
    numbers = [_offset_number(offset_id, at, colon) for at, colon in layout] + [0, 0]
    if offset_id[0] not in "+-":
        raise ValueError(f"Invalid ID for ZoneOffset, plus/minus not found when expected: {offset_id}")
    sign = -1 if offset_id[0] == "-" else 1
    hours, minutes, seconds = (sign * n for n in numbers[:3])
    _check_offset(hours, minutes, seconds)
    return hours * 3600 + minutes * 60 + seconds


def _offset_number(offset_id: str, at: int, colon: bool) -> int:
    if colon and offset_id[at - 1] != ":":
        raise ValueError(f"Invalid ID for ZoneOffset, colon not found when expected: {offset_id}")
    if not (_is_digit(offset_id[at]) and _is_digit(offset_id[at + 1])):
        raise ValueError(f"Invalid ID for ZoneOffset, non numeric characters found: {offset_id}")
    return int(offset_id[at : at + 2])


def _check_offset(hours: int, minutes: int, seconds: int) -> None:
    """``ZoneOffset.validate``: hours to 18, minutes and seconds to 59, at most 18:00 in all."""
    if not -18 <= hours <= 18:
        raise ValueError(f"Zone offset hours not in valid range: value {hours} is not in the range -18 to 18")
    if not -59 <= minutes <= 59:
        raise ValueError(f"Zone offset minutes not in valid range: value {minutes} is not in the range -59 to 59")
    if not -59 <= seconds <= 59:
        raise ValueError(f"Zone offset seconds not in valid range: value {seconds} is not in the range -59 to 59")
    if abs(hours) == 18 and (minutes or seconds):
        raise ValueError("Zone offset not in valid range: -18:00 to +18:00")
