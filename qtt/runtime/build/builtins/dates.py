"""Date functions: java.time patterns, and ``SimpleDateFormat`` where ksqlDB uses it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.errors import RuntimeBuildError, UnsupportedFeatureError
from qtt.plan.functions import scalar_signatures as fns
from qtt.plan.functions.signature_dsl import PATTERN_TOKEN
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.registry import constant, implements, null_of

# A pattern letter outside quoted text.
_LETTER = re.compile(r"'(?:[^']|'')*'|([A-Za-z])")
# Letters of a time-of-day or zone field, which a LocalDate cannot format.
_NOT_DATE_LETTERS = frozenset("aHhKkmsSnNABzVvXxZO")


def _letters(pattern: str) -> set[str]:
    return {m.group(1) for m in _LETTER.finditer(pattern) if m.group(1)}


def _completes_a_date(pattern: str) -> bool:
    """Whether java.time resolves a ``LocalDate`` from the pattern's fields: a year with a month
    and a day of month, or with a day of year (Spark defaults the missing ones instead)."""
    letters = _letters(pattern)
    return bool(letters & {"y", "u"}) and ({"M", "d"} <= letters or "D" in letters)


_VARIABLE = r"\d+"


def _field_regex(letter: str, width: int) -> str | None:
    """What a java.time field of ``width`` letters reads, as a regex; None for a field the day
    clamp does not read (text, zones, offsets)."""
    if letter == "a" and width == 1:
        return "[AaPp][Mm]"
    if letter == "S" or (letter == "y" and width != 3):
        return rf"\d{{{width}}}" if width > 1 else _VARIABLE
    if letter in "yMdHhKkms" and width <= 2:
        return rf"\d{{{width}}}" if width == 2 else _VARIABLE
    return None


def smart_day_text(value: Column, pattern: str) -> Column | None:
    """The text with a day of month past its month's end (the 30th of February) made the month's
    last day, where Spark's strict parser fails: java.time's SMART resolver (ksqlDB's) reads a
    whole date so, and without a year ksqlDB's timestamp parser sets the day of 1970-01-01,
    then the month, which clamps the day alike. Null when no day needs that. None for a
    pattern this does not read: without one numeric month and day, with a text, zone or offset
    field, or with a variable-width field right before another (adjacent value parsing).
    """
    kinds: list[str] = []  # the field's letters, "" for literal text
    regexes: list[str] = []
    for match in PATTERN_TOKEN.finditer(pattern):
        text, letter = match.group(0), match.group(1)
        if letter is None:
            if text in "[]":
                return None
            literal = text[1:-1].replace("''", "'") if text.startswith("'") and text != "''" else text[:1]
            kinds.append("")
            regexes.append(re.escape(literal))
            continue
        regex = _field_regex(letter, len(text))
        if regex is None or (letter != "a" and regexes and regexes[-1] == _VARIABLE and kinds[-1]):
            return None
        kinds.append(text)
        regexes.append(regex)
    fields = [kind[0] for kind in kinds if kind]
    if fields.count("M") != 1 or fields.count("d") != 1 or fields.count("y") > 1:
        return None
    at = {kind[0]: index for index, kind in enumerate(kinds) if kind[:1] in ("y", "M", "d")}
    regex = "^" + "".join(f"({piece})" for piece in regexes) + "$"
    groups = [F.regexp_extract(value, regex, index + 1) for index in range(len(regexes))]
    year = groups[at["y"]].cast("int") if "y" in at else F.lit(1970)
    if "y" in at and kinds[at["y"]] == "yy":
        year = year + 2000  # java.time reads a two-letter year as 2000 to 2099
    month, day = groups[at["M"]].cast("int"), groups[at["d"]].cast("int")
    last = F.dayofmonth(F.last_day(F.make_date(year, month, F.lit(1))))
    groups[at["d"]] = last.cast("string")
    return F.when(month.between(1, 12) & day.between(29, 31) & (day > last), F.concat(*groups))


def formats_back(pattern: str) -> bool:
    """Whether every text java.time parses with the pattern is the pattern's own format of the
    value read (no zone or offset, no variable-width number, no optional section), and the
    pattern has what Spark reads more loosely: a fraction of two digits or more (Spark takes
    fewer digits) or a day-of-week name (Spark cannot parse one: see :func:`without_day_name`)."""
    runs = [(match.group(1), len(match.group(0))) for match in PATTERN_TOKEN.finditer(pattern) if match.group(1)]
    return (
        any((letter == "S" and width >= 2) or letter == "E" for letter, width in runs)
        and not any(letter in "zVXxZO" for letter, _ in runs)
        and not any(letter in "yMdHhKkms" and width == 1 for letter, width in runs)
        and not any(letter == "D" and width < 3 for letter, width in runs)
        and "[" not in "".join(m.group(0) for m in PATTERN_TOKEN.finditer(pattern) if not m.group(0).startswith("'"))
    )


_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def without_day_name(value: Column, pattern: str, function: str) -> tuple[Column, str]:
    """The text and pattern without a day-of-week name (``E``), which Spark refuses to parse
    (``DATETIME_PATTERN_RECOGNITION``); the caller checks the name by formatting the date back
    (:func:`formats_back`). Only a name that starts or ends the pattern is cut."""
    tokens = [match.group(0) for match in PATTERN_TOKEN.finditer(pattern)]
    names = [index for index, token in enumerate(tokens) if token[0] == "E"]
    if not names:
        return value, pattern
    index = names[0]
    if len(names) > 1 or index not in (0, len(tokens) - 1):
        msg = f"{function} with a day-of-week name (E) inside the pattern"
        raise UnsupportedFeatureError(msg)
    spelled = "|".join(name if len(tokens[index]) == 4 else name[:3] for name in _DAY_NAMES)
    regex = f"(?i)^(?:{spelled})" if index == 0 else f"(?i)(?:{spelled})$"
    return F.regexp_replace(value, regex, ""), "".join(tokens[:index] + tokens[index + 1 :])


def _days_since_epoch(value: Column) -> Column:
    return F.datediff(value, F.lit("1970-01-01").cast("date"))


def simple_date_parse(value: Column, pattern: str) -> Column:
    """``SimpleDateFormat.parse`` (lenient, as ksqlDB's PARSE_DATE runs it) of a date.

    Unlike java.time (and Spark), SimpleDateFormat reads a numeric field's digits whatever
    the letter count, after any whitespace, unless another numeric field follows directly
    (then at most the letter count of digits); it ignores text after the date; and its
    lenient calendar rolls over (month 13 is January of the next year).
    """
    tokens = fns.simple_date_fields(pattern)
    if tokens is None:  # pragma: no cover - the analyzer rejects these patterns
        msg = f"PARSE_DATE pattern {pattern!r} is not supported"
        raise RuntimeBuildError(msg)
    regex, groups = ["^"], []
    for position, (kind, text) in enumerate(tokens):
        if kind == "lit":
            regex.append(re.escape(text))
            continue
        adjacent = position + 1 < len(tokens) and tokens[position + 1][0] != "lit"
        regex.append(f"([0-9]{{1,{len(text)}}})" if adjacent else r"\s*([0-9]+)")
        groups.append(kind)
    parts = {kind: F.regexp_extract(value, "".join(regex), index + 1).cast("int") for index, kind in enumerate(groups)}
    year = parts.get("y", F.lit(1970))
    months = parts.get("M", F.lit(1)) - 1
    days = parts.get("d", F.lit(1)) - 1
    # regexp_extract gives "" (so null) when the text does not match.
    return F.date_add(F.add_months(F.make_date(year, F.lit(1), F.lit(1)), months), days)


@implements("PARSE_DATE")
def _parse_date(expr: e.Call, args: Sequence[Column]) -> Column:
    pattern = constant(expr.args[1])
    return null_of(t.DATE) if pattern is None else simple_date_parse(args[0], str(pattern))


@implements("STRINGTODATE")
def _string_to_date(expr: e.Call, args: Sequence[Column]) -> Column:
    # java.time's LocalDate.parse: the whole text, strictly, as Spark's to_date; a pattern
    # without a whole date (yyyy-MM) fails in ksqlDB where Spark defaults the day.
    pattern = constant(expr.args[1])
    if pattern is None or not _completes_a_date(str(pattern)):
        return null_of(t.INTEGER)
    text, spark_pattern = without_day_name(args[0], str(pattern), expr.name)
    parsed = F.to_date(text, spark_pattern)
    if formats_back(str(pattern)):
        # case-insensitively, as ksqlDB's parser
        parsed = F.when(F.lower(F.date_format(parsed, str(pattern))) == F.lower(args[0]), parsed)
    clamped = smart_day_text(args[0], str(pattern))
    if clamped is not None:
        parsed = F.coalesce(parsed, F.to_date(clamped, str(pattern)))
    return _days_since_epoch(parsed)


def _formatted_date(pattern: object, date: Column) -> Column:
    # LocalDate.format fails on a time or zone field, where Spark prints midnight UTC.
    if pattern is None or _letters(str(pattern)) & _NOT_DATE_LETTERS:
        return null_of(t.STRING)
    # Spark formats a date as a timestamp (microseconds in a long) and fails the query past
    # about 292,000 years, where java.time prints any year (+5881580): null there.
    in_range = F.abs(F.unix_date(date)) <= F.lit(_LAST_FORMATTED_DAY)
    return F.when(in_range, F.date_format(date, str(pattern)))


#: the last day from 1970 Spark formats (a day's microseconds must fit in a long)
_LAST_FORMATTED_DAY = t.BIGINT_MAX // 86_400_000_000


@implements("FORMAT_DATE")
def _format_date(expr: e.Call, args: Sequence[Column]) -> Column:
    return _formatted_date(constant(expr.args[1]), args[0])


@implements("DATETOSTRING")
def _date_to_string(expr: e.Call, args: Sequence[Column]) -> Column:
    return _formatted_date(constant(expr.args[1]), F.date_add(F.lit("1970-01-01").cast("date"), args[0]))
