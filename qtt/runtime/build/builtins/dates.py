"""Date functions: java.time patterns, and ``SimpleDateFormat`` where ksqlDB uses it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.errors import RuntimeBuildError
from qtt.plan.functions import scalar_signatures as fns
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.registry import constant, implements, null_of


def _days_since_epoch(value: Column) -> Column:
    return F.datediff(value, F.lit("1970-01-01").cast("date"))


def simple_date_parse(value: Column, pattern: str) -> Column:
    """``SimpleDateFormat.parse`` (lenient, as ksqlDB's PARSE_DATE runs it) of a date.

    Unlike java.time (and Spark), SimpleDateFormat reads a numeric field's digits whatever
    the letter count, unless another numeric field follows directly; it ignores text after
    the date; and its lenient calendar rolls over (month 13 is January of the next year).
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
        regex.append(f"([0-9]{{{len(text)}}})" if adjacent else "([0-9]+)")
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
    # java.time's LocalDate.parse: the whole text, strictly, as Spark's to_date.
    pattern = constant(expr.args[1])
    return null_of(t.INTEGER) if pattern is None else _days_since_epoch(F.to_date(args[0], str(pattern)))


@implements("FORMAT_DATE")
def _format_date(expr: e.Call, args: Sequence[Column]) -> Column:
    pattern = constant(expr.args[1])
    return null_of(t.STRING) if pattern is None else F.date_format(args[0], str(pattern))


@implements("DATETOSTRING")
def _date_to_string(expr: e.Call, args: Sequence[Column]) -> Column:
    pattern = constant(expr.args[1])
    if pattern is None:
        return null_of(t.STRING)
    return F.date_format(F.date_add(F.lit("1970-01-01").cast("date"), args[0]), str(pattern))
