"""An ``INSERT INTO ... VALUES`` value as its column's typed value, as ksqlDB coerces it.

ksqlDB evaluates each value (``GenericExpressionResolver``), then coerces the result to the
column's type with ``DefaultSqlValueCoercer.STRICT``: numbers only widen (INTEGER to BIGINT,
DECIMAL or DOUBLE; BIGINT to DECIMAL or DOUBLE; DECIMAL to DOUBLE; a DECIMAL must fit without
rounding), a string becomes a TIMESTAMP, TIME, DATE (ISO text) or BYTES (base64) and nothing
else, and collections coerce element by element; a struct takes the fields its type names (a
field the value lacks is null). Anything else is ``Expected type T for field `C` but got
BASE(value)``.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import re
from collections.abc import Callable
from typing import Any

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError, UnsupportedFeatureError
from qtt.plan.analysis.analyzer import Analyzer, Scope
from qtt.plan.analysis.text_literals import parse_text
from qtt.plan.ir import expressions as e
from qtt.serde.java_numbers import java_double
from qtt.serde.values import EPOCH, EPOCH_DATE, fit_decimal, from_json
from qtt.sql import ast
from qtt.sql.formatter import format_expr
from qtt.sql.references import column_refs

#: STRICT's widenings between different base types (same base to same base always passes)
_WIDENS = {
    "INTEGER": ("BIGINT", "DECIMAL", "DOUBLE"),
    "BIGINT": ("DECIMAL", "DOUBLE"),
    "DECIMAL": ("DOUBLE",),
    "STRING": ("TIMESTAMP", "TIME", "DATE", "BYTES"),
}
#: what ksqlDB adds to the message when a string does not parse as a time type
_TIME_HELP = {
    "TIMESTAMP": ". Timestamp format must be yyyy-mm-ddThh:mm:ss[.S]",
    "TIME": ". Time format must be hh:mm:ss[.S]",
    "DATE": ". Date format must be yyyy-mm-dd",
}
_TIME = re.compile(r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


#: Spark's value of a typed expression that is not a literal (the harness's
#: :func:`~qtt.harness.replay.runner.evaluate_constant`): structs as dicts, times as Python's
Evaluate = Callable[[e.Expression], Any]
#: the value of an expression that is not a literal, to be evaluated
COMPUTED: Any = object()


class _Failed(Exception):
    """The value does not coerce (ksqlDB's ``Result.failure()``)."""


def refuse_column_references(expr: ast.Expr) -> None:
    """ksqlDB's error for a value that names a column (``EnsureNoColReferences``); a lambda's
    parameter is no column (ksqlDB's parser makes it a ``LambdaVariable``)."""
    if next(column_refs(expr), None) is not None:
        raise StatementError(f"Unsupported column reference in insert value: {format_expr(expr)}")


def inserted_value(expr: ast.Expr, value: Any, to: t.SqlType, column: str, evaluate: Evaluate | None = None) -> Any:
    """``value`` (the literal value of ``expr``, or :data:`COMPUTED`: ``evaluate`` gives it, as
    ksqlDB's interpreter evaluates a value that calls functions or computes) as a typed value
    of ``column``'s type ``to``.

    Raises:
        StatementError: ksqlDB's message for a value that does not coerce.
    """
    if value is None:
        return None
    try:
        analyzed = Analyzer(Scope([]), "insert value")(expr)
    except StatementError as error:  # CodeGenRunner's words for an expression it cannot compile
        if isinstance(error, UnsupportedFeatureError):
            raise
        error.message = f"Invalid insert value: {error.message}. expression:{format_expr(expr)}, schema:"
        raise
    source = analyzed.result_type
    if value is COMPUTED:
        assert evaluate is not None
        value = _as_literal(evaluate(analyzed), source)
        if value is None:
            return None
    try:
        return _coerce(value, source, to)
    except _Failed:
        help_ = _TIME_HELP.get(to.base, "") if source.base == "STRING" else ""
        msg = f"Expected type {to} for field {t.quote(column)} but got {source.base}({_java_text(value)}){help_}"
        raise StatementError(msg) from None


def _coerce(value: Any, source: t.SqlType, to: t.SqlType) -> Any:
    if value is None:
        return None
    if source.base != to.base and to.base not in _WIDENS.get(source.base, ()):
        raise _Failed
    if isinstance(source, t.Array) and isinstance(to, t.Array):
        return [_coerce(v, source.element, to.element) for v in value]
    if isinstance(source, t.Map) and isinstance(to, t.Map):
        return {_coerce(k, source.key, to.key): _coerce(v, source.value, to.value) for k, v in value.items()}
    if isinstance(source, t.Struct) and isinstance(to, t.Struct):
        fields = []
        for field in to.fields:
            given = source.field(field.name)
            fields.append(None if given is None else _coerce(value.get(field.name), given.type, field.type))
        return tuple(fields)
    if source.base == "STRING" and to.base != "STRING":
        return _parsed(value.strip(), to)
    if source.base == to.base and to.base in ("TIMESTAMP", "DATE", "TIME", "BYTES"):  # an evaluated value
        return from_json(value, to)
    try:
        number = from_json(value, source)  # the value as its own type (a constructor's common type)
        return fit_decimal(decimal.Decimal(number), to) if isinstance(to, t.Decimal) else from_json(number, to)
    except (SerdeError, decimal.InvalidOperation):
        raise _Failed from None


def _parsed(text: str, to: t.SqlType) -> Any:
    """A string as a TIMESTAMP, TIME, DATE or BYTES value (``SqlTimeTypes``, ``BytesUtils``)."""
    try:
        return parse_text(text, to.base)
    except ValueError:
        raise _Failed from None


def _as_literal(value: Any, type_: t.SqlType) -> Any:
    """An evaluated value as the value of a literal of its type (times as numbers, bytes as
    base64 text, structs printing as Kafka Connect's), which :func:`_coerce` takes."""
    if value is None:
        return None
    if isinstance(type_, t.Array):
        return [_as_literal(v, type_.element) for v in value]
    if isinstance(type_, t.Map):
        return {_as_literal(k, type_.key): _as_literal(v, type_.value) for k, v in value.items()}
    if isinstance(type_, t.Struct):
        return literal_struct({f.name: _as_literal(value.get(f.name), f.type) for f in type_.fields})
    if type_.base == "TIMESTAMP":
        return (value - EPOCH) // dt.timedelta(milliseconds=1)
    if type_.base == "DATE":
        return (value - EPOCH_DATE).days
    if type_.base == "TIME":
        return (dt.datetime.combine(dt.date.min, value) - dt.datetime.min) // dt.timedelta(milliseconds=1)
    if type_.base == "BYTES":
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


def _java_text(value: Any) -> str:
    """``value.toString()`` of the Java value ksqlDB evaluated."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, list):
        return "[" + ", ".join(_java_text(v) for v in value) + "]"
    if isinstance(value, _StructValue):
        return "Struct{" + ",".join(f"{k}={_java_text(v)}" for k, v in value.items() if v is not None) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_java_text(k)}={_java_text(v)}" for k, v in value.items()) + "}"
    return str(value)


class _StructValue(dict[str, Any]):
    """A ``STRUCT(...)`` constructor's value (a map and a struct print differently in Java)."""


def literal_struct(fields: dict[str, Any]) -> dict[str, Any]:
    """A struct constructor's value, which prints as Kafka Connect's ``Struct{A=1,B=x}``."""
    return _StructValue(fields)
