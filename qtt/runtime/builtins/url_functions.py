"""Spark implementations of ksqlDB's URL functions.

Registered with :func:`qtt.runtime.builtins.registry.implements`; the signatures are in
:mod:`qtt.plan.text_signatures`. Encoding and decoding call Java's own ``URLEncoder`` and
``URLDecoder`` (x-www-form-urlencoded, UTF-8) through Spark's ``try_reflect``, as ksqlDB does.
The extractors parse with ``java.net.URI``'s rules, which Spark lacks (its ``parse_url`` uses
``java.net.URL``), so they run as Python UDFs over :mod:`qtt.runtime.builtins.java_uri`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.plan import expressions as e
from qtt.runtime.builtins import java_uri
from qtt.runtime.builtins.registry import implements
from qtt.runtime.builtins.text_functions import java_call


@implements("URL_ENCODE_PARAM")
def _url_encode_param(expr: e.Call, args: Sequence[Column]) -> Column:
    return java_call("java.net.URLEncoder", "encode", args[0], F.lit("UTF-8"))


@implements("URL_DECODE_PARAM")
def _url_decode_param(expr: e.Call, args: Sequence[Column]) -> Column:
    # A malformed %-escape throws IllegalArgumentException: null.
    return java_call("java.net.URLDecoder", "decode", args[0], F.lit("UTF-8"))


def _component(name: str, spark_type: st.DataType, text: Column) -> Column:
    def extract(value: str | None) -> object:
        return java_uri.component(value, name)

    return F.udf(extract, spark_type)(text)


@implements("URL_EXTRACT_FRAGMENT")
def _url_extract_fragment(expr: e.Call, args: Sequence[Column]) -> Column:
    return _component("fragment", st.StringType(), args[0])


@implements("URL_EXTRACT_HOST")
def _url_extract_host(expr: e.Call, args: Sequence[Column]) -> Column:
    return _component("host", st.StringType(), args[0])


@implements("URL_EXTRACT_PATH")
def _url_extract_path(expr: e.Call, args: Sequence[Column]) -> Column:
    return _component("path", st.StringType(), args[0])


@implements("URL_EXTRACT_PORT")
def _url_extract_port(expr: e.Call, args: Sequence[Column]) -> Column:
    return _component("port", st.IntegerType(), args[0])


@implements("URL_EXTRACT_PROTOCOL")
def _url_extract_protocol(expr: e.Call, args: Sequence[Column]) -> Column:
    return _component("scheme", st.StringType(), args[0])


@implements("URL_EXTRACT_QUERY")
def _url_extract_query(expr: e.Call, args: Sequence[Column]) -> Column:
    return _component("query", st.StringType(), args[0])


@implements("URL_EXTRACT_PARAMETER")
def _url_extract_parameter(expr: e.Call, args: Sequence[Column]) -> Column:
    return F.udf(java_uri.query_parameter, st.StringType())(args[0], args[1])
