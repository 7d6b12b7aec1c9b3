"""Spark implementations of ksqlDB's URL functions.

Registered with :func:`qtt.runtime.build.builtins.registry.implements`; the signatures are in
:mod:`qtt.plan.functions.text_signatures`. Encoding and decoding call Java's own ``URLEncoder`` and
``URLDecoder`` (x-www-form-urlencoded, UTF-8) through Spark's ``try_reflect``, as ksqlDB does.

The extractors follow ksqlDB's ``UrlParser``: ``new java.net.URI(text)`` and one getter, null
where the text is not a URI. Spark's ``try_parse_url`` builds the same ``java.net.URI`` (null
where it throws) and returns its raw components, so the getters that decode are rebuilt here:
``URI.getPath``/``getQuery``/``getFragment`` decode %XX escapes as UTF-8 and keep '+'.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt.plan.ir import expressions as e
from qtt.runtime.build.builtins.registry import implements
from qtt.runtime.build.builtins.text_functions import java_call


@implements("URL_ENCODE_PARAM")
def _url_encode_param(expr: e.Call, args: Sequence[Column]) -> Column:
    return java_call("java.net.URLEncoder", "encode", args[0], F.lit("UTF-8"))


@implements("URL_DECODE_PARAM")
def _url_decode_param(expr: e.Call, args: Sequence[Column]) -> Column:
    # A malformed %-escape throws IllegalArgumentException: null.
    return java_call("java.net.URLDecoder", "decode", args[0], F.lit("UTF-8"))


def _raw(url: Column, part: str) -> Column:
    return F.try_parse_url(url, F.lit(part))


def _uri_decode(raw: Column) -> Column:
    # The URI parser already rejected malformed escapes, so URLDecoder only differs from
    # URI.decode in turning '+' into a space, which is protected here.
    return F.try_url_decode(F.replace(raw, F.lit("+"), F.lit("%2B")))


@implements("URL_EXTRACT_FRAGMENT")
def _url_extract_fragment(expr: e.Call, args: Sequence[Column]) -> Column:
    return _uri_decode(_raw(args[0], "REF"))


@implements("URL_EXTRACT_HOST")
def _url_extract_host(expr: e.Call, args: Sequence[Column]) -> Column:
    return _raw(args[0], "HOST")


@implements("URL_EXTRACT_PATH")
def _url_extract_path(expr: e.Call, args: Sequence[Column]) -> Column:
    return _uri_decode(_raw(args[0], "PATH"))


@implements("URL_EXTRACT_PORT")
def _url_extract_port(expr: e.Call, args: Sequence[Column]) -> Column:
    # URI.getPort is -1 (null here) without a host (a registry-based authority), and for an
    # empty port ("h:/"). With a host the authority is [userinfo@]host[:port], and a host
    # holds no ':' outside the brackets of an IPv6 literal, so a trailing ":digits" is the port.
    authority = _raw(args[0], "AUTHORITY")
    port = F.regexp_extract(authority, r":([0-9]+)$", 1)
    return F.when(_raw(args[0], "HOST").isNotNull() & (port != ""), port.try_cast("int"))


@implements("URL_EXTRACT_PROTOCOL")
def _url_extract_protocol(expr: e.Call, args: Sequence[Column]) -> Column:
    return _raw(args[0], "PROTOCOL")


@implements("URL_EXTRACT_QUERY")
def _url_extract_query(expr: e.Call, args: Sequence[Column]) -> Column:
    return _uri_decode(_raw(args[0], "QUERY"))


@implements("URL_EXTRACT_PARAMETER")
def _url_extract_parameter(expr: e.Call, args: Sequence[Column]) -> Column:
    # ksqlDB splits the decoded query on '&', then each piece once on '=': the first piece
    # whose name matches gives its value, or "" when it has no '='.
    params = F.split(_uri_decode(_raw(args[0], "QUERY")), "&", -1)
    found = F.get(F.filter(params, lambda p: F.substring_index(p, "=", 1) == args[1]), 0)
    return F.when(found.contains("="), F.substr(found, F.instr(found, "=") + 1)).when(found.isNotNull(), F.lit(""))
