"""The fields ksqlDB's plans share across steps, read into qtt's forms.

Schemas are printed as qtt prints them; formats carry the serde options of their release
(``options: [UNWRAP_SINGLE_VALUES]`` before 0.11, ``keyFeatures``/``valueFeatures`` after,
qtt's ``UNWRAP_SINGLE_VALUE``); a
window is text (``" TUMBLING ( SIZE 1 HOURS ) "``) up to 7.3 and JSON after; a duration in a
``windowInfo`` is seconds with nanoseconds (``30.000000000``).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from qtt import sqltypes as t
from qtt.errors import UnsupportedFeatureError
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import LogicalSchema
from qtt.plan.planner.window_planner import window_expression
from qtt.serde.interface import UNWRAP_SINGLE_VALUE, WRAP_SINGLE_VALUE
from qtt.serde.registry.avro_format import MAP_ENTRIES_WRITER
from qtt.serde.registry.protobuf_schema import MAP_ENTRIES_WRITER as PROTOBUF_MAP_ENTRIES_WRITER
from qtt.sql import ast
from qtt.sql.ast_parts import TIME_UNITS_MS
from qtt.sql.parser import parse_window

#: ksqlDB's value serde features (and the options of 0.10 and before) as qtt names them
_VALUE_FEATURES = {
    "UNWRAP_SINGLES": UNWRAP_SINGLE_VALUE,
    "WRAP_SINGLES": WRAP_SINGLE_VALUE,
    "UNWRAP_SINGLE_VALUES": UNWRAP_SINGLE_VALUE,
    "WRAP_SINGLE_VALUES": WRAP_SINGLE_VALUE,
}


class PlanShapeError(ValueError):
    """A field of a ksqlDB plan that is not in any shape ksqlDB wrote."""


def schema(text: str) -> LogicalSchema:
    try:
        parsed = LogicalSchema.parse(text)
    except ValueError as error:
        raise PlanShapeError(f"schema {text!r} does not read: {error}") from None
    for column in parsed.columns:
        too_wide = t.wider_than_spark(column.type)
        if too_wide is not None:
            raise UnsupportedFeatureError(too_wide)
    return parsed


def format_info(raw: Mapping[str, Any]) -> s.FormatInfo:
    properties = {k: str(v) for k, v in (raw.get("properties") or {}).items()}
    # ksqlDB's AVRO and PROTOBUF writers are Kafka Connect's AvroData and ProtobufData: a MAP is
    # an array of map entries, repeated entry messages
    writer = {"AVRO": MAP_ENTRIES_WRITER, "PROTOBUF": PROTOBUF_MAP_ENTRIES_WRITER}.get(raw["format"], 1)
    return s.FormatInfo(format=raw["format"], properties=MappingProxyType(properties), writer_version=writer)


def formats(raw: Mapping[str, Any], window: s.WindowInfo | None = None) -> s.Formats:
    """A step's or a command's formats. A single key column is always unwrapped in qtt (as
    ksqlDB's ``keyFeatures: [UNWRAP_SINGLES]`` says), so only value features are kept."""
    value_features = []
    for feature in [*(raw.get("valueFeatures") or ()), *(raw.get("options") or ())]:
        if feature not in _VALUE_FEATURES:
            raise UnsupportedFeatureError(f"ksqlDB serde feature {feature}")
        value_features.append(_VALUE_FEATURES[feature])
    for feature in raw.get("keyFeatures") or ():
        if feature != "UNWRAP_SINGLES":
            raise UnsupportedFeatureError(f"ksqlDB key serde feature {feature}")
    return s.Formats(
        key_format=format_info(raw["keyFormat"]),
        value_format=format_info(raw["valueFormat"]),
        value_features=tuple(dict.fromkeys(value_features)),
        window=window,
    )


def timestamp_column(raw: Mapping[str, Any] | None) -> s.TimestampColumn | None:
    if not raw:
        return None
    return s.TimestampColumn(column=raw["column"], format=raw.get("format"))


def seconds_ms(value: object) -> int:
    """A Java ``Duration`` as Jackson writes it (seconds, nanoseconds as decimals), in ms."""
    return int(Decimal(str(value)) * 1000)


def window_info(raw: Mapping[str, Any] | None) -> s.WindowInfo | None:
    if not raw:
        return None
    kind = raw["type"]
    size = raw.get("size")
    return s.WindowInfo(type=kind, size_ms=None if kind == "SESSION" or size is None else seconds_ms(size))


def _duration_ms(raw: Mapping[str, Any] | None) -> int | None:
    if raw is None:
        return None
    unit = str(raw["timeUnit"]).upper().rstrip("S")
    return int(raw["value"]) * TIME_UNITS_MS[unit]


def window(raw: str | Mapping[str, Any]) -> s.WindowExpression:
    """A windowed aggregation's window: the text of 0.x releases or the JSON of 7.4 and later."""
    if isinstance(raw, str):
        return window_expression(parse_window(raw))
    kind = raw["windowType"]
    size = _duration_ms(raw.get("gap") if kind == "SESSION" else raw.get("size"))
    if size is None:
        raise PlanShapeError(f"a {kind} window without its size: {dict(raw)}")
    spec = ast.WindowSpec(
        kind=kind,
        size_ms=size,
        advance_ms=_duration_ms(raw.get("advanceBy")),
        retention_ms=_duration_ms(raw.get("retention")),
        grace_ms=_duration_ms(raw.get("gracePeriod")),
    )
    return window_expression(spec, emit_final=raw.get("emitStrategy") == "FINAL")
