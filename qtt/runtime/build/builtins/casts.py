"""CAST as ksqlDB's ``CastEvaluator`` runs it, and Java's text of a value.

A conversion that fails in Java (``CAST('1.5' AS INT)``) makes the expression null, where
Spark would truncate or fail the query.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.errors import RuntimeBuildError
from qtt.runtime.build.builtins.java import big_decimal
from qtt.runtime.build.builtins.registry import null_of
from qtt.runtime.build.builtins.strings import java_trim
from qtt.runtime.build.builtins.time_functions import time_millis
from qtt.runtime.spark.spark_types import to_spark
from qtt.serde.java_numbers import java_decimal_digits

_INTEGER_TEXT = r"^[+-]?[0-9]+$"
# What Java's Double.parseDouble accepts (without hexadecimal floating point).
_DOUBLE_TEXT = r"^[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?)$"
# What java.math.BigDecimal(String) accepts.
_DECIMAL_TEXT = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
# What java.time.LocalTime.parse accepts: HH:mm, HH:mm:ss, HH:mm:ss.fffffffff.
_TIME_TEXT = r"^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?$"
# A date as ksqlDB's timestamp and date parsers read it once completed: yyyy-MM-dd.
_FULL_DATE_TEXT = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
# HH:mm:ss.SSS; a SMART DateTimeFormatter also takes 24:00:00.000, the next midnight.
_TIME_OF_DAY_TEXT = r"^(([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}|24:00:00\.000)$"
# The offsets java.time.ZoneOffset.of reads: +h, +hh, +hhmm, +hh:mm, +hhmmss, +hh:mm:ss.
_OFFSET_TEXT = r"^[+-]([0-9]{1,2}|[0-9]{4}|[0-9]{2}:[0-9]{2}|[0-9]{6}|[0-9]{2}:[0-9]{2}:[0-9]{2})$"
# PartialStringToTimestampParser completes a partial time with this pattern's rest, letters as 0.
_TIME_ZEROS = "00:00:00.000"
#: ``ksql.cast.strings.preserve.nulls`` off: CAST to STRING is Java's ``String.valueOf``, a null the text ``null``
_NULL_AS_TEXT: ContextVar[bool] = ContextVar("qtt_cast_null_as_text", default=False)


@contextmanager
def nulls_cast_as_text(enabled: bool) -> Iterator[None]:
    """Build the casts of a query whose config turns ``ksql.cast.strings.preserve.nulls`` off."""
    token = _NULL_AS_TEXT.set(enabled)
    try:
        yield
    finally:
        _NULL_AS_TEXT.reset(token)


def cast(value: Column, source: t.SqlType, target: t.SqlType, *, in_lambda: bool = False) -> Column:
    """CAST with ksqlDB's semantics (its ``CastEvaluator``); a failed conversion is null.

    ``in_lambda``: the cast is part of a Spark lambda's body, which cannot call a Python UDF.
    """
    if source == target:
        return value
    spark_target = to_spark(target)
    if target == t.TIME:
        return _cast_to_time(value, source)
    if source == t.TIME and target == t.STRING:
        # LocalTime.ofSecondOfDay(millis / 1000).toString(): no seconds when they are zero.
        return F.when(F.second(value) == 0, F.date_format(value, "HH:mm")).otherwise(F.date_format(value, "HH:mm:ss"))
    if target == t.STRING:
        text = java_string(value, source, top_level=True)
        # CastEvaluator.castToString; decimals and timestamps (and TIME, above) cast on their own
        if _NULL_AS_TEXT.get() and source.base not in ("DECIMAL", "TIMESTAMP", "DATE"):
            return F.coalesce(text, F.lit("null"))
        return text
    if source == t.STRING:
        text = java_trim(value)
        if target.base in ("INTEGER", "BIGINT") or isinstance(target, t.Decimal):
            # Integer.parseInt and new BigDecimal(String) read any Unicode decimal digit ("٣" is 3)
            text = F.translate(text, *java_decimal_digits())
        if target.base in ("INTEGER", "BIGINT"):
            # Integer.parseInt: no fraction, no exponent; Spark's cast would truncate "1.5".
            return F.when(text.rlike(_INTEGER_TEXT), text.cast(spark_target))
        if target == t.DOUBLE:
            # SqlDoubles.parseDouble: Double.parseDouble, but a NaN or infinite result throws.
            number = F.regexp_replace(text, "[fFdD]$", "").cast("double")
            finite = ~F.isnan(number) & (F.abs(number) != F.lit(float("inf")))
            return F.when(text.rlike(_DOUBLE_TEXT) & finite, number)
        if isinstance(target, t.Decimal):
            return F.when(text.rlike(_DECIMAL_TEXT), text.cast(spark_target))
        if target == t.BOOLEAN:
            # ksqlDB's SqlBooleans: any prefix of "true" or "yes" is true, anything else false.
            lowered = F.lower(text)
            truthy = (F.length(lowered) > 0) & (F.lit("true").startswith(lowered) | F.lit("yes").startswith(lowered))
            return F.when(value.isNotNull(), truthy)
        if target == t.BYTES:
            return F.unbase64(text)
        if target == t.TIMESTAMP:
            return _text_to_timestamp(text)
        if target == t.DATE:
            return _text_to_date(text)
        return text.cast(spark_target)
    if source == t.DOUBLE and isinstance(target, t.Decimal) and not in_lambda:
        # DecimalUtil.cast rounds the double's exact binary value (2.675 is 2.67499...), where
        # Spark's cast rounds its shortest text; a Python UDF, which a Spark lambda cannot call.
        java = functools.partial(big_decimal.from_double, precision=target.precision, scale=target.scale)
        return F.udf(java, spark_target, useArrow=True)(value)
    if isinstance(source, t.Array) and isinstance(target, t.Array):
        src, dst = source.element, target.element
        converted = F.transform(value, lambda x: cast(x, src, dst, in_lambda=True))
        return F.when(~_gained_nulls(value, converted), converted)
    if isinstance(source, t.Map) and isinstance(target, t.Map):
        return _cast_map(value, source, target)
    if isinstance(source, t.Struct) and isinstance(target, t.Struct):
        return _cast_struct(value, source, target, in_lambda=in_lambda)
    return value.cast(spark_target)


def _cast_to_time(value: Column, source: t.SqlType) -> Column:
    if source == t.STRING:
        return parse_temporal(java_trim(value), t.TIME)
    return time_millis(value.cast(to_spark(t.TIME)))  # a TIMESTAMP's time of day in UTC


def parse_temporal(text: Column, target: t.SqlType) -> Column:
    """ksqlDB's ``SqlTimeTypes.parseTime`` / ``parseDate`` / ``parseTimestamp`` of ``text`` as
    it is (CAST trims first, a comparison with text does not); null where Java throws."""
    if target == t.TIME:
        # LocalTime.parse: ISO_LOCAL_TIME only, where Spark's cast also takes "1:00".
        return F.when(text.rlike(_TIME_TEXT), time_millis(text.cast(to_spark(t.TIME))))
    if target == t.DATE:
        return _text_to_date(text)
    return _text_to_timestamp(text)


def _complete_date(text: Column) -> Column:
    # PartialStringToTimestampParser.completeDate: a year or a year and month is the first day.
    return (
        F.when(text.rlike(r"^[0-9]{4}$"), F.concat(text, F.lit("-01-01")))
        .when(text.rlike(r"^[0-9]{4}-[0-9]{2}$"), F.concat(text, F.lit("-01")))
        .otherwise(text)
    )


def _complete_time(text: Column) -> Column:
    # PartialStringToTimestampParser.completeTime: "05:3" is "05:30:00.000", quirk included.
    length = F.length(text)
    return F.when(length >= len(_TIME_ZEROS), text).otherwise(
        F.concat(text, F.lit(_TIME_ZEROS).substr(length + 1, F.lit(len(_TIME_ZEROS))))
    )


def _text_to_date(text: Column) -> Column:
    """SqlTimeTypes.parseDate: a completed date that ``LocalDate.parse`` (STRICT) reads."""
    date = _complete_date(text)
    day = F.make_date(date.substr(1, 4).cast("int"), date.substr(6, 2).cast("int"), date.substr(9, 2).cast("int"))
    return F.when(date.rlike(_FULL_DATE_TEXT), day)


def _text_to_timestamp(text: Column) -> Column:
    """SqlTimeTypes.parseTimestamp (ksqlDB's PartialStringToTimestampParser), null where it throws.

    The date before the first ``T`` must be whole (without a ``T``, a year or a year and month
    is completed); after it, an offset is what follows the first ``+`` (else ``-``), and the
    time before it, a trailing ``Z`` dropped, is completed with zeros and must then be
    ``HH:mm:ss.SSS``. The pattern's SMART resolver moves a day beyond the month's end back to
    its last day (``2021-02-30`` is February 28) and reads ``24:00`` as the next midnight.
    """
    t_at = F.instr(text, "T")
    has_t = t_at > 0
    date = F.when(has_t, text.substr(F.lit(1), t_at - 1)).otherwise(_complete_date(text))
    rest = F.when(has_t, text.substr(t_at + 1, F.length(text))).otherwise(F.lit(""))
    plus, minus = F.instr(rest, "+"), F.instr(rest, "-")
    zone_at = F.when(plus > 0, plus).when(minus > 0, minus).otherwise(F.lit(0))
    zone = F.when(zone_at > 0, rest.substr(zone_at, F.length(rest))).otherwise(F.lit(""))
    clock_text = F.when(zone_at > 0, rest.substr(F.lit(1), zone_at - 1)).otherwise(rest)
    time = _complete_time(F.regexp_replace(clock_text, "Z$", ""))
    # ZoneOffset.of: at most 18 hours, minutes and seconds below 60.
    digits = F.regexp_replace(zone, "[^0-9]", "")
    padded = F.rpad(F.when(F.length(digits) == 1, F.concat(F.lit("0"), digits)).otherwise(digits), 6, "0")
    hours, minutes, seconds = (padded.substr(i, 2).cast("int") for i in (1, 3, 5))
    offset = (hours * 3600 + minutes * 60 + seconds) * F.when(zone.startswith("-"), -1).otherwise(1)
    zone_ok = (zone == "") | (zone.rlike(_OFFSET_TEXT) & (minutes < 60) & (seconds < 60) & (F.abs(offset) <= 18 * 3600))
    year, month, day = date.substr(1, 4).cast("int"), date.substr(6, 2).cast("int"), date.substr(9, 2).cast("int")
    date_ok = date.rlike(_FULL_DATE_TEXT) & (year >= 1) & month.between(1, 12) & day.between(1, 31)
    month_days = F.dayofmonth(F.last_day(F.make_date(year, month, F.lit(1))))
    epoch_day = F.unix_date(F.make_date(year, month, F.least(day, month_days)))
    clock = [time.substr(i, n).cast("long") for i, n in ((1, 2), (4, 2), (7, 2), (10, 3))]
    seconds_of_day = clock[0] * 3600 + clock[1] * 60 + clock[2]
    millis = (epoch_day.cast("long") * 86400 + seconds_of_day - offset) * 1000 + clock[3]
    return F.when(date_ok & zone_ok & time.rlike(_TIME_OF_DAY_TEXT), F.timestamp_millis(millis))


def _gained_nulls(before: Column, after: Column) -> Column:
    """True where an element-wise conversion of an array made a non-null element null.

    ksqlDB's ``CastEvaluator.castArray``, ``castMap`` and ``castStruct`` apply each element's
    conversion with no try/catch: one that throws (``Integer.parseInt('x')``) leaves the
    helper, and the code generator catches it around the whole CAST, which is then null. A
    conversion fails exactly where it gives null for a non-null element, as a null element
    stays null (or becomes the text ``null``, where nothing can fail).
    """
    return F.size(F.filter(after, lambda x: x.isNull())) > F.size(F.filter(before, lambda x: x.isNull()))


def _cast_map(value: Column, source: t.Map, target: t.Map) -> Column:
    casted = F.transform_values(value, lambda k, v: cast(v, source.value, target.value, in_lambda=True))
    if source.value != target.value:
        casted = F.when(~_gained_nulls(F.map_values(value), F.map_values(casted)), casted)
    if source.key == target.key:
        return casted
    # A key that fails to convert fails ksqlDB's whole expression; Spark cannot hold a null key.
    keys_ok = F.forall(F.map_keys(value), lambda k: cast(k, source.key, target.key, in_lambda=True).isNotNull())
    converted = F.transform_keys(casted, lambda k, v: cast(k, source.key, target.key, in_lambda=True))
    return F.when(keys_ok, converted)


def _cast_struct(value: Column, source: t.Struct, target: t.Struct, *, in_lambda: bool) -> Column:
    # Fields are matched by name; a target field the source lacks is null.
    fields = []
    failed = F.lit(False)
    for f in target.fields:
        found = source.field(f.name)
        field = value.getField(f.name)
        field_value = cast(field, found.type, f.type, in_lambda=in_lambda) if found is not None else null_of(f.type)
        if found is not None and found.type != f.type:
            # castStruct: a field that fails to convert fails the whole CAST (see _gained_nulls)
            failed = failed | (field.isNotNull() & field_value.isNull())
        fields.append(field_value.alias(f.name))
    return F.when(value.isNotNull() & ~failed, F.struct(*fields))


def java_string(value: Column, type_: t.SqlType, *, top_level: bool = False) -> Column:
    """Java's text of a value: ``String.valueOf`` / ``toString`` as ksqlDB's CAST uses it.

    Inside collections a null prints as ``null``; a null at the top level stays null (ksqlDB's
    ``ksql.cast.strings.preserve.nulls`` default).
    """
    text = _java_text(value, type_, plain_decimal=top_level)
    return text if top_level else F.coalesce(text, F.lit("null"))


def _java_text(value: Column, type_: t.SqlType, *, plain_decimal: bool) -> Column:
    if type_ == t.STRING:
        return value
    if type_.base in ("BOOLEAN", "INTEGER", "BIGINT", "DOUBLE"):
        # Spark prints these as Java does (Double.toString included: 1.0E10, 4.9E-324).
        return value.cast("string")
    if isinstance(type_, t.Decimal):
        if plain_decimal:
            # CAST(DECIMAL AS STRING) is BigDecimal.toPlainString(); Spark's cast may use
            # scientific notation, format_number never does (its grouping commas go).
            return F.regexp_replace(F.format_number(value, type_.scale), ",", "")
        return value.cast("string")  # BigDecimal.toString(), as Spark prints decimals
    if type_ == t.DATE:
        return F.date_format(value, "yyyy-MM-dd")
    if type_ == t.TIMESTAMP:
        return F.date_format(value, "yyyy-MM-dd'T'HH:mm:ss.SSS")
    if isinstance(type_, t.Array):
        element = type_.element
        items = F.transform(value, lambda x: java_string(x, element))
        return F.concat(F.lit("["), F.array_join(items, ", "), F.lit("]"))
    if isinstance(type_, t.Map):
        key_type, value_type = type_.key, type_.value
        entries = F.transform(
            F.map_entries(value),
            lambda entry: F.concat(
                java_string(entry["key"], key_type),
                F.lit("="),
                java_string(entry["value"], value_type),
            ),
        )
        return F.concat(F.lit("{"), F.array_join(entries, ", "), F.lit("}"))
    if isinstance(type_, t.Struct):
        # Kafka Connect's Struct.toString() leaves out null fields.
        parts = [
            F.when(
                value.getField(f.name).isNotNull(),
                F.concat(F.lit(f.name + "="), java_string(value.getField(f.name), f.type)),
            )
            for f in type_.fields
        ]
        inner = F.concat_ws(",", *parts) if parts else F.lit("")
        return F.when(value.isNotNull(), F.concat(F.lit("Struct{"), inner, F.lit("}")))
    msg = f"no Java text for values of type {type_}"
    raise RuntimeBuildError(msg)
