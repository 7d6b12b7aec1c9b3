"""Planning a ``WINDOW`` clause: the windows in milliseconds, ksqlDB's defaults, and where the
window bounds may be read.

Kafka Streams' rules: a window's size (and a hopping window's advance, at most the size) must
be positive; the grace period is the one the query names, else the legacy default of 24 hours
less the window size (never negative) that ksqlDB keeps (0 for ``EMIT FINAL``); a window's state is retained for the
``RETENTION`` the query names, at least size plus grace, else for exactly size plus grace.
``WINDOWSTART`` and ``WINDOWEND`` are readable in the SELECT clause of a windowed aggregation
only, outside aggregate calls.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from qtt.errors import SqlSyntaxError, StatementError
from qtt.plan.functions.aggregate_signatures import is_aggregate
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import WINDOW_BOUNDS
from qtt.serde.formats import unsupported_base
from qtt.sql import ast
from qtt.sql.ast_parts import TIME_UNITS_MS
from qtt.sql.parser import iter_nodes
from qtt.sqltypes import BIGINT_MAX, SqlType

#: Kafka Streams' legacy default grace period, less the window size
DEFAULT_GRACE_MS = 24 * 60 * 60 * 1000
#: the state store of ksqlDB's windowed aggregation, as its topology names it
_STORE = "Aggregate-Aggregate-Materialize"


def window_expression(spec: ast.WindowSpec, *, emit_final: bool = False) -> s.WindowExpression:
    """The plan's form of ``spec``, with the grace period and retention in force.

    With ``EMIT FINAL`` and no ``GRACE PERIOD``, a window closes at its end (grace 0), as
    ksqlDB's own tests show: waiting out the legacy day would emit nothing for a day.

    Raises:
        StatementError: a size or advance that Kafka Streams refuses, or a retention shorter
            than size plus grace.
    """
    size = spec.size_ms
    if size <= 0:
        # a time window's size: ksqlDB's analyzer makes the sink's WindowInfo, which refuses it;
        # a session's gap reaches Kafka Streams' SessionWindows
        raise StatementError(
            "Gap time cannot be zero or negative." if spec.kind == "SESSION" else "Size must be positive"
        )
    advance = spec.advance_ms if spec.kind == "HOPPING" and spec.advance_ms is not None else size
    if spec.kind == "SESSION":
        advance = 0  # a session window does not advance: ``size`` is its inactivity gap
    elif not 0 < advance <= size:
        msg = (
            "Window advancement interval should be more than zero and less than window duration which is "
            f"{size} ms, but given advancement interval is: {advance} ms"
        )
        raise StatementError(msg)
    if spec.grace_ms is not None and spec.grace_ms < 0:  # the windows', then the store's, own checks
        raise StatementError("Grace period must not be negative.")
    if spec.retention_ms is not None and spec.retention_ms < 0:
        raise StatementError("Retention must not be negative.")
    default_grace = 0 if emit_final else max(DEFAULT_GRACE_MS - size, 0)
    grace = spec.grace_ms if spec.grace_ms is not None else default_grace
    retention = spec.retention_ms if spec.retention_ms is not None else size + grace
    if retention < size + grace:  # Kafka Streams' words, naming the aggregate's store
        if spec.kind == "SESSION":
            msg = (
                f"The retention period of the session store {_STORE} must be no smaller than the session "
                f"inactivity gap plus the grace period. Got gap=[{size}], grace=[{grace}], retention=[{retention}]"
            )
        else:
            msg = (
                f"The retention period of the window store {_STORE} must be no smaller than its window size "
                f"plus the grace period. Got size=[{size}], grace=[{grace}], retention=[{retention}]"
            )
        raise StatementError(msg)
    return s.WindowExpression(
        type=spec.kind,
        size_ms=size,
        advance_ms=advance,
        grace_ms=grace,
        retention_ms=retention,
        emit_final=emit_final,
    )


def window_info(window: s.WindowExpression) -> s.WindowInfo:
    """What the sink's windowed keys carry: the window type, and the size of a time window."""
    return s.WindowInfo(type=window.type, size_ms=None if window.type == "SESSION" else window.size_ms)


def aggregate_formats(source: s.Formats, key_types: Sequence[SqlType], config: Mapping[str, object]) -> s.Formats:
    """The formats of a windowed aggregate's store, as ksqlDB's ``SchemaKStream.groupBy`` makes
    them from the source's: a ``NONE`` key takes the default key format, and a key that format
    cannot hold (several columns in ``KAFKA``, or a type it lacks) is ``JSON``, as
    ``SerdeFeaturesFactory.sanitizeKeyFormat`` makes an internal topic's. ``EMIT FINAL`` orders
    a closing window's keys by these bytes."""
    key = source.key_format
    features = source.key_features
    if key.format == "NONE":
        key = s.FormatInfo(format=str(config.get("ksql.persistence.default.format.key", "KAFKA")).upper())
    multiple = len(key_types) > 1 and key.format in ("KAFKA", "NONE")
    if multiple or any(unsupported_base(type_, key.format) is not None for type_ in key_types):
        key, features = s.FormatInfo(format="JSON"), ()
    return dataclasses.replace(source, key_format=key, key_features=features, window=None)


def reject_window_bounds_outside_select(query: ast.Query) -> None:
    """``WINDOWSTART``/``WINDOWEND`` in WHERE, GROUP BY, HAVING or an aggregate's arguments:
    ksqlDB's error (a windowed source's bounds in WHERE included)."""
    places: list[object] = [query.where, query.group_by or (), query.having]
    places += [
        node.args
        for item in query.select
        for node in iter_nodes(item)
        if isinstance(node, ast.FunctionCall) and is_aggregate(node.name)
    ]
    for place in places:
        for node in iter_nodes(place):
            if isinstance(node, ast.ColumnRef) and node.name in WINDOW_BOUNDS:
                msg = (
                    f"Window bounds column {node.name} can only be used in the SELECT clause of windowed "
                    "aggregations and can not be passed to aggregate functions.\n"
                    "See https://github.com/confluentinc/ksql/issues/4397"
                )
                raise StatementError(msg)


WINDOW_TYPES = ("SESSION", "HOPPING", "TUMBLING")


def source_window(properties: Mapping[str, object], *, keyed: bool = True) -> s.WindowInfo | None:
    """The windows a source's keys carry: ``WINDOW_TYPE`` and ``WINDOW_SIZE`` (``'30 SECONDS'``).

    ``keyed`` says whether the source has key columns: a windowed one must have some.

    Raises:
        SqlSyntaxError: an unknown type, a size that is no duration, a size on a session
            window, or none on a time window (ksqlDB's messages; it checks them as it parses).
        StatementError: a size that is not positive (ksqlDB's ``WindowInfo``), or windows on a
            source without key columns (its ``CreateSourceCommand``, once the window is read).
    """
    kind, size = properties.get("WINDOW_TYPE"), properties.get("WINDOW_SIZE")
    if kind is None:
        if size is not None:
            raise SqlSyntaxError("WINDOW_SIZE is only valid with WINDOW_TYPE.")
        return None
    window_type = str(kind).upper()
    if window_type not in WINDOW_TYPES:
        msg = f"Invalid value {kind} for property WINDOW_TYPE: String must be one of: {', '.join(WINDOW_TYPES)}"
        raise SqlSyntaxError(msg)
    if window_type == "SESSION":
        if size is not None:
            raise SqlSyntaxError("'WINDOW_SIZE' should not be set for SESSION windows.")
        window = s.WindowInfo(type=window_type)
    else:
        if size is None:
            raise SqlSyntaxError("Tumbling and Hopping window types should set WINDOW_SIZE in the WITH clause.")
        nanos = _duration_ns(str(size))
        if nanos <= 0:  # ksqlDB's WindowInfo
            raise StatementError("Size must be positive")
        window = s.WindowInfo(type=window_type, size_ms=nanos // 1_000_000)
    if not keyed:
        raise StatementError("Windowed sources require a key column.")
    return window


#: Java's TimeUnit names, in its order, in nanoseconds (``WINDOW_SIZE`` takes any of them)
_DURATION_UNITS_NS = {
    "NANOSECONDS": 1,
    "MICROSECONDS": 1_000,
    **{f"{unit}S": ms * 1_000_000 for unit, ms in TIME_UNITS_MS.items()},
}
_JAVA_SPACE = r"[ \t\n\x0b\f\r]"  # Java's regex \s


def duration_ms(text: str) -> int:
    """``'30 SECONDS'`` in milliseconds."""
    nanos = _duration_ns(text)
    return nanos // 1_000_000 if nanos >= 0 else -(-nanos // 1_000_000)


def _duration_ns(text: str) -> int:
    """``'30 SECONDS'`` in nanoseconds, as ksqlDB's DurationParser reads it: two tokens split at
    each single whitespace character (trailing empty ones dropped, as Java's ``split``), a
    ``Long.parseLong`` amount (a sign allowed), and a unit with or without its plural ``S``."""
    parts = re.split(_JAVA_SPACE, text) if re.search(_JAVA_SPACE, text) else [text]
    while len(parts) > 1 and not parts[-1]:
        parts.pop()
    if len(parts) != 2:
        problem = f"Expected 2 tokens, got: {len(parts)}"
    elif not re.fullmatch(r"[+-]?[0-9]+", parts[0]) or abs(int(parts[0])) > BIGINT_MAX + (parts[0][0] == "-"):
        problem = f"Not numeric: '{parts[0]}'"
    else:
        unit = parts[1].upper()
        factor = _DURATION_UNITS_NS.get(unit if unit.endswith("S") else unit + "S")
        if factor is not None:  # TimeUnit.toNanos saturates
            return max(-BIGINT_MAX - 1, min(BIGINT_MAX, int(parts[0]) * factor))
        problem = f"Unknown time unit: '{unit}'\nSupported time units are: {', '.join(_DURATION_UNITS_NS)}"
    raise SqlSyntaxError(f"Configuration WINDOW_SIZE is invalid: Invalid duration: '{text}'. {problem}")
