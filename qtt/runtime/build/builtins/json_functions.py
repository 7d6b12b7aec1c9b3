"""Spark implementations of ksqlDB's JSON functions.

Registered with :func:`qtt.runtime.build.builtins.registry.implements`; the signatures are in
:mod:`qtt.plan.functions.text_signatures` (EXTRACTJSONFIELD's in ``scalar_signatures``). Functions
that read JSON text run as Python UDFs over :mod:`qtt.runtime.build.builtins.java.java_json`,
because Spark's JSON readers differ from ksqlDB's Jackson reader (exact decimals, duplicate keys,
what counts as valid, EXTRACTJSONFIELD's path syntax). TO_JSON_STRING is
built from Spark expressions, type by type, as ksqlDB's ``ToJsonString`` prepares values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt import sqltypes as t
from qtt.errors import RuntimeBuildError
from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.casts import java_string
from qtt.runtime.build.builtins.java import java_json
from qtt.runtime.build.builtins.registry import implements
from qtt.runtime.build.builtins.text_functions import one_line_base64

_STRINGS = st.ArrayType(st.StringType())
_RECORDS = st.MapType(st.StringType(), st.StringType())


@implements("IS_JSON_STRING")
def _is_json_string(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.udf(java_json.is_json_string, st.BooleanType(), useArrow=True)(args[0])


@implements("JSON_ARRAY_LENGTH")
def _json_array_length(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.udf(java_json.json_array_length, st.IntegerType(), useArrow=True)(args[0])


@implements("JSON_KEYS")
def _json_keys(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.udf(java_json.json_keys, _STRINGS, useArrow=True)(args[0])


@implements("JSON_RECORDS")
def _json_records(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.udf(java_json.json_records, _RECORDS, useArrow=True)(args[0])


@implements("JSON_ITEMS")
def _json_items(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.udf(java_json.json_items, _STRINGS, useArrow=True)(args[0])


@implements("EXTRACTJSONFIELD")
def _extract_json_field(expr: e.Call, args: Sequence[Column]) -> Column:
    # Spark's get_json_object differs: it reads a JSON null as null, rounds decimals, keeps
    # the first of repeated names and has another path syntax.
    return F.udf(java_json.extract_json_field, st.StringType(), useArrow=True)(args[0], args[1])


@implements("JSON_CONCAT")
def _json_concat(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.udf(java_json.json_concat, st.StringType(), useArrow=True)(*args)


_CONTAINS_KINDS = frozenset(["INTEGER", "BIGINT", "DOUBLE", "STRING", "BOOLEAN"])


@implements("JSON_ARRAY_CONTAINS")
def _json_array_contains(expr: e.Call, args: Sequence[Column]) -> Column:
    kind = expr.args[1].result_type.base
    value = args[1]
    if kind not in _CONTAINS_KINDS:
        # No JSON token reads as such a value; only a null still matches a JSON null.
        kind, value = "OTHER", F.when(value.isNotNull(), F.lit("?"))

    def contains(text: str | None, wanted: Any) -> bool:
        return java_json.json_array_contains(text, wanted, kind)

    return F.udf(contains, st.BooleanType(), useArrow=True)(args[0], value)


# ---------------------------------------------------------------------------- TO_JSON_STRING


def _quoted(text: Column) -> Column:
    # Spark writes JSON with Jackson, so its escaping is Jackson's: \" \\ \n ... \u001F.
    doc = F.to_json(F.struct(text.alias("v")))
    return F.when(text.isNotNull(), F.substring(doc, F.lit(6), F.length(doc) - 6))


def _json_text(value: Column, type_: t.SqlType) -> Column:
    """``value`` as ksqlDB's UdfJsonMapper writes it; SQL null as ``null``."""
    return F.coalesce(_non_null_json(value, type_), F.lit("null"))


def _non_null_json(value: Column, type_: t.SqlType) -> Column:
    base = type_.base
    if base in ("BOOLEAN", "INTEGER", "BIGINT"):
        return value.cast("string")
    if base == "DOUBLE":
        # Jackson quotes NaN and the infinities (QUOTE_NON_NUMERIC_NUMBERS).
        finite = ~F.isnan(value) & (F.abs(value) != float("inf"))
        return F.when(finite, value.cast("string")).otherwise(F.concat(F.lit('"'), value.cast("string"), F.lit('"')))
    if isinstance(type_, t.Decimal):
        return java_string(value, type_, top_level=True)  # WRITE_BIGDECIMAL_AS_PLAIN
    if base == "STRING":
        return _quoted(value)
    if base == "DATE":
        return _quoted(F.date_format(value, "yyyy-MM-dd"))
    if base == "TIMESTAMP":
        return _quoted(F.date_format(value, "yyyy-MM-dd'T'HH:mm:ss.SSS"))
    if base == "TIME":
        # LocalTime.ofSecondOfDay(...).toString(): HH:mm, then :ss unless zero.
        return _quoted(F.regexp_replace(F.substring(value.cast("string"), 1, 8), ":00$", ""))
    if base == "BYTES":
        return _quoted(one_line_base64(value))  # Java's basic encoder
    if isinstance(type_, t.Array):
        element = type_.element
        return F.concat(F.lit("["), F.array_join(F.transform(value, lambda x: _json_text(x, element)), ","), F.lit("]"))
    if isinstance(type_, t.Map):
        # A TreeMap<String, ...> of the keys' text: sorted as Java compares strings (UTF-16
        # units), so INT keys 10 and 2 are "10" then "2".
        key_type, value_type = type_.key, type_.value
        texts = F.transform(
            F.map_entries(value),
            lambda x: F.struct(
                F.encode(java_string(x["key"], key_type, top_level=True), "UTF-16BE").alias("order"),
                java_string(x["key"], key_type, top_level=True).alias("key"),
                x["value"].alias("value"),
            ),
        )
        ordered = F.array_sort(
            texts, lambda a, b: F.when(a["order"] < b["order"], -1).when(a["order"] > b["order"], 1).otherwise(0)
        )
        parts = F.transform(
            ordered, lambda x: F.concat(_quoted(x["key"]), F.lit(":"), _json_text(x["value"], value_type))
        )
        return F.concat(F.lit("{"), F.array_join(parts, ","), F.lit("}"))
    if isinstance(type_, t.Struct):
        # Also a TreeMap: fields in the order of their names (Java compares UTF-16 units).
        fields = sorted(type_.fields, key=lambda f: f.name.encode("utf-16-be"))
        fields_text = [
            F.concat(F.lit(java_json.quote(f.name) + ":"), _json_text(value.getField(f.name), f.type)) for f in fields
        ]
        inner = F.concat_ws(",", *fields_text) if fields_text else F.lit("")
        return F.when(value.isNotNull(), F.concat(F.lit("{"), inner, F.lit("}")))
    msg = f"TO_JSON_STRING has no JSON text for values of type {type_}"
    raise RuntimeBuildError(msg)


@implements("TO_JSON_STRING")
def _to_json_string(expr: e.Call, args: Sequence[Column]) -> Column:
    type_ = expr.args[0].result_type
    if type_.base == "NULL":
        return F.lit("null")
    return _json_text(args[0], type_)
