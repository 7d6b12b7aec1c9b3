"""Scalar function signatures: the text, bytes, JSON, URL and collection-construction section of the table.

Written in :mod:`qtt.plan.functions.signature_dsl`; :mod:`qtt.plan.functions.scalar_signatures` merges every
section into one table. Return types, null rules and errors follow ksqlDB's UDFs.
"""

from __future__ import annotations

from qtt import sqltypes as t
from qtt.plan.functions.signature_dsl import BIGINT, BOOLEAN, BYTES, DOUBLE, INT, STRING, fn, sig
from qtt.plan.functions.signature_matching import ArrayOf, Function, MapOf, T

_MASKS = [STRING] * 4


def _mask(name: str) -> Function:
    # ksqlDB's MASK_* take a count and either no mask characters or all four.
    return fn(name, sig([STRING, INT], STRING), sig([STRING, INT, *_MASKS], STRING), throws_on_input=True)


def _from_bytes(name: str, returns: t.SqlType) -> Function:
    return fn(name, sig([BYTES], returns), sig([BYTES, STRING], returns), throws_on_input=True)


def _url(name: str, returns: t.SqlType = STRING, *, throws_on_input: bool = False) -> Function:
    return fn(name, sig([STRING], returns), throws_on_input=throws_on_input)


FUNCTIONS: list[Function] = [
    # --------------------------------------------------------------- strings
    fn("CHR", sig([INT], STRING), sig([STRING], STRING)),
    fn("ENCODE", sig([STRING, STRING, STRING], STRING), constant_args=[1, 2], throws_on_input=True),
    fn("MASK", sig([STRING], STRING), sig([STRING, *_MASKS], STRING), throws_on_input=True),
    _mask("MASK_KEEP_LEFT"),
    _mask("MASK_KEEP_RIGHT"),
    _mask("MASK_LEFT"),
    _mask("MASK_RIGHT"),
    fn("REGEXP_EXTRACT", sig([STRING, STRING], STRING), sig([STRING, STRING, INT], STRING)),
    fn(
        "REGEXP_EXTRACT_ALL",
        sig([STRING, STRING], t.Array(STRING)),
        sig([STRING, STRING, INT], t.Array(STRING)),
    ),
    fn("REGEXP_REPLACE", sig([STRING, STRING, STRING], STRING), throws_on_input=True),
    fn("REGEXP_SPLIT_TO_ARRAY", sig([STRING, STRING], t.Array(STRING)), throws_on_input=True),
    fn("SPLIT_TO_MAP", sig([STRING, STRING, STRING], t.Map(STRING, STRING))),
    fn("UUID", sig([], STRING), sig([BYTES], STRING)),
    # --------------------------------------------------------------- bytes
    fn("TO_BYTES", sig([STRING, STRING], BYTES), constant_args=[1], throws_on_input=True),
    fn("FROM_BYTES", sig([BYTES, STRING], STRING), constant_args=[1], throws_on_input=True),
    _from_bytes("INT_FROM_BYTES", INT),
    _from_bytes("BIGINT_FROM_BYTES", BIGINT),
    _from_bytes("DOUBLE_FROM_BYTES", DOUBLE),
    fn("INT_FROM_BOOLEAN", sig([BOOLEAN], INT)),
    # --------------------------------------------------------------- JSON
    fn("IS_JSON_STRING", sig([STRING], BOOLEAN)),
    fn("JSON_ARRAY_LENGTH", sig([STRING], INT)),
    fn("JSON_CONCAT", sig([STRING], STRING, variadic=True)),
    fn("JSON_KEYS", sig([STRING], t.Array(STRING))),
    fn("JSON_RECORDS", sig([STRING], t.Map(STRING, STRING))),
    fn("JSON_ITEMS", sig([STRING], t.Array(STRING)), throws_on_input=True),
    fn("JSON_ARRAY_CONTAINS", sig([STRING, T], BOOLEAN)),
    fn("TO_JSON_STRING", sig([T], STRING)),
    # --------------------------------------------------------------- URLs
    _url("URL_DECODE_PARAM", throws_on_input=True),
    _url("URL_ENCODE_PARAM"),
    _url("URL_EXTRACT_FRAGMENT"),
    _url("URL_EXTRACT_HOST"),
    fn("URL_EXTRACT_PARAMETER", sig([STRING, STRING], STRING)),
    _url("URL_EXTRACT_PATH"),
    _url("URL_EXTRACT_PORT", INT),
    _url("URL_EXTRACT_PROTOCOL"),
    _url("URL_EXTRACT_QUERY"),
    # --------------------------------------------------------------- collections
    fn("AS_MAP", sig([ArrayOf(STRING), ArrayOf(T)], MapOf(STRING, T))),
    fn("SLICE", sig([ArrayOf(T), INT, INT], ArrayOf(T))),
]
