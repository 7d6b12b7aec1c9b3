"""Every function of ksqlDB's function reference: its name, kind and section.

The list follows ksqlDB's reference pages (``docs/developer-guide/ksqldb-reference/``:
``scalar-functions.md``, ``aggregate-functions.md``, ``table-functions.md``, the current
pages on docs.confluent.io for functions added later, and the UDFs of ksqlDB's sources that
the pages do not list: ``JSON_ITEMS``, ``MD5``, ``INT_FROM_BOOLEAN``).
``tests/plan/test_function_reference.py`` checks that each name has a signature, a runtime
implementation and a case in ``cases/``.

``CAST``, ``ARRAY[...]`` and ``MAP(...)`` are in the scalar reference but are syntax in
qtt (their own expression nodes), so their kind is ``syntax``: they need a case, not a
signature.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReferenceFunction:
    """One function of ksqlDB's reference."""

    name: str
    kind: str  # "scalar", "aggregate", "table" or "syntax"
    section: str


def _section(kind: str, section: str, names: str) -> tuple[ReferenceFunction, ...]:
    return tuple(ReferenceFunction(name, kind, section) for name in names.split())


REFERENCE: tuple[ReferenceFunction, ...] = (
    *_section(
        "scalar",
        "Numeric functions",
        "ABS ACOS ASIN AS_VALUE ATAN ATAN2 CBRT CEIL COS COSH COT DEGREES ENTRIES EXP FLOOR "
        "GENERATE_SERIES GEO_DISTANCE GREATEST LEAST LN LOG PI POWER RADIANS RANDOM ROUND SIGN "
        "SIN SINH SQRT TAN TANH TRUNC",
    ),
    *_section("syntax", "Numeric functions", "CAST"),
    *_section("syntax", "Collections", "ARRAY MAP"),
    *_section(
        "scalar",
        "Collections",
        "ARRAY_CONCAT ARRAY_CONTAINS ARRAY_DISTINCT ARRAY_EXCEPT ARRAY_INTERSECT ARRAY_JOIN "
        "ARRAY_LENGTH ARRAY_MAX ARRAY_MIN ARRAY_REMOVE ARRAY_SORT ARRAY_UNION AS_MAP ELT FIELD "
        "JSON_ARRAY_CONTAINS MAP_KEYS MAP_VALUES MAP_UNION SLICE",
    ),
    *_section("scalar", "Invocation functions", "FILTER REDUCE TRANSFORM"),
    *_section(
        "scalar",
        "Strings",
        "CHR CONCAT CONCAT_WS ENCODE EXTRACTJSONFIELD FROM_BYTES IS_JSON_STRING JSON_ARRAY_LENGTH "
        "JSON_CONCAT JSON_KEYS JSON_RECORDS TO_JSON_STRING INITCAP INSTR LCASE LEN LPAD "
        "MASK MASK_KEEP_LEFT MASK_KEEP_RIGHT MASK_LEFT MASK_RIGHT REPLACE REGEXP_EXTRACT "
        "REGEXP_EXTRACT_ALL REGEXP_REPLACE REGEXP_SPLIT_TO_ARRAY RPAD SPLIT SPLIT_TO_MAP SUBSTRING "
        "TO_BYTES TRIM UCASE UUID LTRIM RTRIM JSON_ITEMS MD5",
    ),
    *_section("scalar", "Bytes", "BIGINT_FROM_BYTES DOUBLE_FROM_BYTES INT_FROM_BYTES INT_FROM_BOOLEAN"),
    *_section("scalar", "Nulls", "COALESCE IFNULL NULLIF"),
    *_section(
        "scalar",
        "Date and time",
        "CONVERT_TZ DATEADD DATESUB FORMAT_DATE FORMAT_TIME FORMAT_TIMESTAMP FROM_DAYS FROM_UNIXTIME "
        "PARSE_DATE PARSE_TIME PARSE_TIMESTAMP TIMEADD TIMESUB TIMESTAMPADD TIMESTAMPSUB UNIX_DATE "
        "UNIX_TIMESTAMP",
    ),
    *_section(
        "scalar",
        "URLs",
        "URL_DECODE_PARAM URL_ENCODE_PARAM URL_EXTRACT_FRAGMENT URL_EXTRACT_HOST URL_EXTRACT_PARAMETER "
        "URL_EXTRACT_PATH URL_EXTRACT_PORT URL_EXTRACT_PROTOCOL URL_EXTRACT_QUERY",
    ),
    *_section("scalar", "Deprecated", "DATETOSTRING STRINGTODATE STRINGTOTIMESTAMP TIMESTAMPTOSTRING"),
    *_section(
        "aggregate",
        "Aggregate functions",
        "AVG COLLECT_LIST COLLECT_SET CORRELATION COUNT COUNT_DISTINCT EARLIEST_BY_OFFSET HISTOGRAM "
        "LATEST_BY_OFFSET MAX MIN STDDEV_SAMP STDDEV_SAMPLE SUM TOPK TOPKDISTINCT",
    ),
    *_section("table", "Table functions", "EXPLODE CUBE_EXPLODE"),
)

_names = [f.name for f in REFERENCE]
if len(_names) != len(set(_names)):  # pragma: no cover - a typo in the list above
    raise TypeError("a function is listed twice in the reference")
