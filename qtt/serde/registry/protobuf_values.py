"""Values between Protobuf messages and the JSON-like form of case files.

The JSON-like form is the one :mod:`qtt.serde.values` reads with ksqlDB's coercion: bytes as
base64 text, DATE as days, TIME and TIMESTAMP as milliseconds, DECIMAL as ``Decimal``.

Reading follows proto3 as Kafka Connect's ``ProtobufData`` does: a scalar field that is not
set reads as its default (0, "", false) unless it tracks presence (``optional``, or a wrapper
message); an unset message field reads as null.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import decimal
import math
from collections.abc import Mapping
from functools import cache
from typing import Any

from qtt.errors import SerdeError
from qtt.serde import values
from qtt.serde.excerpt import json_value
from qtt.serde.registry.protobuf_schema import DECIMAL_TYPE, WRAPPER_TYPES, decimal_params


def message_from_plain(plain: Any, message_class: Any, path: str = "$") -> Any:
    """A message of ``message_class`` holding a JSON-like object (fields matched case-insensitively)."""
    message = message_class()
    fill(message, plain, path)
    return message


def fill(message: Any, plain: Any, path: str) -> None:
    if not isinstance(plain, Mapping):
        raise SerdeError(f"expected an object at {path}, got {json_value(plain)}")
    upper = {str(k).upper(): v for k, v in plain.items()}
    for field in message.DESCRIPTOR.fields:
        value = plain[field.name] if field.name in plain else upper.get(field.name.upper())
        if value is None:
            continue
        where = f"{path}.{field.name}"
        if _is_map(field):
            if not isinstance(value, Mapping):
                raise SerdeError(f"expected an object at {where}, got {json_value(value)}")
            target = getattr(message, field.name)
            value_field = field.message_type.fields_by_name["value"]
            for key, item in value.items():
                if item is None:
                    continue
                if value_field.type == value_field.TYPE_MESSAGE:
                    _set_message(target[str(key)], value_field, item, f"{where}.{key}")
                else:
                    target[str(key)] = _scalar(item, value_field, f"{where}.{key}")
        elif field.is_repeated:
            if isinstance(value, Mapping) and _is_connect_entry(field):
                # Kafka Connect's ProtobufData writes a map as repeated <name>Entry messages
                value = [{"key": k, "value": v} for k, v in value.items()]
            if not isinstance(value, list):
                raise SerdeError(f"expected an array at {where}, got {json_value(value)}")
            target = getattr(message, field.name)
            for index, item in enumerate(value):
                if item is None:
                    # Connect's ProtobufData hands protobuf a list holding the null, which
                    # protobuf refuses (a NullPointerException): ksqlDB cannot write it either
                    msg = f"null at {where}[{index}]: a Protobuf array (a repeated field) cannot hold null elements"
                    raise SerdeError(msg)
                if field.type == field.TYPE_MESSAGE:
                    _set_message(target.add(), field, item, f"{where}[{index}]")
                else:
                    target.append(_scalar(item, field, f"{where}[{index}]"))
        elif field.type == field.TYPE_MESSAGE:
            _set_message(getattr(message, field.name), field, value, where)
        else:
            setattr(message, field.name, _scalar(value, field, where))


@cache
def _is_connect_entry(field: Any) -> bool:
    """A repeated message of exactly ``key`` and ``value`` fields named ``...Entry``: a map as
    Kafka Connect writes it (protobuf's own map fields are told by :func:`_is_map`)."""
    if field.type != field.TYPE_MESSAGE:
        return False
    message = field.message_type
    return message.name.endswith("Entry") and sorted(message.fields_by_name) == ["key", "value"]


def _set_message(target: Any, field: Any, value: Any, path: str) -> None:
    """Fill a message-typed field (or element) in place: logical types, wrappers, nested messages."""
    name = field.message_type.full_name
    if value is None:
        target.SetInParent()
        return
    if name == "google.protobuf.Timestamp":
        millis = _whole(value, path)
        target.seconds, target.nanos = divmod(millis, 1000)
        target.nanos *= 1_000_000
    elif name == "google.type.Date":
        day = values.EPOCH_DATE + dt.timedelta(days=_whole(value, path))
        target.year, target.month, target.day = day.year, day.month, day.day
    elif name == "google.type.TimeOfDay":
        millis = _whole(value, path)
        seconds, rest = divmod(millis, 1000)
        target.hours, target.minutes, target.seconds = seconds // 3600, seconds // 60 % 60, seconds % 60
        target.nanos = rest * 1_000_000
    elif name == DECIMAL_TYPE:
        from confluent_kafka.schema_registry.common.protobuf import decimal_to_protobuf

        number = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
        scale = decimal_params(field)[1]
        exact = number.quantize(decimal.Decimal(1).scaleb(-scale))
        # Confluent's helper builds its own Decimal class; this message comes from another pool
        target.MergeFromString(decimal_to_protobuf(exact, scale).SerializeToString())
    elif name in WRAPPER_TYPES:
        target.value = _scalar(value, target.DESCRIPTOR.fields_by_name["value"], path)
    else:
        fill(target, value, path)
        target.SetInParent()


def _whole(value: Any, path: str) -> int:
    if isinstance(value, bool):
        raise SerdeError(f"cannot write {json_value(value)} as a number at {path}")
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise SerdeError(f"cannot write {json_value(value)} as a number at {path}") from None


def _scalar(value: Any, field: Any, path: str) -> Any:
    kind = field.type
    if kind == field.TYPE_BOOL:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    elif kind == field.TYPE_STRING:
        return value if isinstance(value, str) else values.json_text(value)
    elif kind == field.TYPE_BYTES:
        if isinstance(value, bytes | bytearray):
            return bytes(value)
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                return base64.b64decode(value)
    elif kind in (field.TYPE_FLOAT, field.TYPE_DOUBLE):
        if isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool):
            return values.double_value(value)
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                return float(value)
    elif kind == field.TYPE_ENUM:
        found = field.enum_type.values_by_name.get(value) if isinstance(value, str) else None
        if found is not None:
            return found.number
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif not isinstance(value, bool):
        if isinstance(value, int):
            return value
        if isinstance(value, decimal.Decimal | float) and _finite(value) and value == int(value):
            return int(value)
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                return int(value)
    raise SerdeError(f"cannot write {json_value(value)} as Protobuf field {field.name} at {path}")


def _finite(value: decimal.Decimal | float) -> bool:
    return value.is_finite() if isinstance(value, decimal.Decimal) else math.isfinite(value)


def plain_of(message: Any, path: str = "$") -> dict[str, Any]:
    """A message as a JSON-like object keyed by field name, with proto3's defaults for unset scalars.

    Raises:
        SerdeError: a field holds what its type cannot mean (a ``google.type.Date`` of month 0),
            naming its path.
    """
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        where = f"{path}.{field.name}"
        if _is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            out[field.name] = {str(k): _plain_single(v, value_field, f"{where}.{k}") for k, v in value.items()}
        elif field.is_repeated and _is_connect_entry(field):
            # read back as Kafka Connect's ProtobufData reads its repeated <name>Entry messages: a map
            key_field, value_field = (field.message_type.fields_by_name[n] for n in ("key", "value"))
            out[field.name] = {
                str(_plain_single(entry.key, key_field, where)): _plain_single(
                    entry.value, value_field, f"{where}[{i}]"
                )
                for i, entry in enumerate(value)
            }
        elif field.is_repeated:
            out[field.name] = [_plain_single(v, field, f"{where}[{i}]") for i, v in enumerate(value)]
        elif field.has_presence and not message.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = _plain_single(value, field, where)
    return out


def _days(date: Any, path: str) -> int:
    """A ``google.type.Date`` as days since 1970-01-01 (an unset date, year 0, as 0)."""
    if date.year == 0:
        return 0
    shown = f"{date.year:04d}-{date.month:02d}-{date.day:02d}"
    try:
        day = dt.date(date.year, date.month, date.day)
    except ValueError as e:
        if not 1 <= date.year <= 9999:
            msg = f"the date {shown} at {path} is outside the years 1 to 9999 that qtt (and Spark) can hold"
            raise SerdeError(msg) from None
        # as Java's LocalDate.of refuses it
        msg = f"the google.type.Date {shown} at {path} is not a date ({e}); expected a month 1 to 12 and a day of it"
        raise SerdeError(msg) from None
    return (day - values.EPOCH_DATE).days


def _plain_single(value: Any, field: Any, path: str) -> Any:
    if field.type == field.TYPE_MESSAGE:
        name = field.message_type.full_name
        if name == "google.protobuf.Timestamp":
            return value.seconds * 1000 + value.nanos // 1_000_000
        if name == "google.type.Date":
            return _days(value, path)
        if name == "google.type.TimeOfDay":
            return ((value.hours * 60 + value.minutes) * 60 + value.seconds) * 1000 + value.nanos // 1_000_000
        if name == DECIMAL_TYPE:
            from confluent_kafka.schema_registry.common.protobuf import protobuf_to_decimal

            return protobuf_to_decimal(value)
        if name in WRAPPER_TYPES:
            return _plain_single(value.value, value.DESCRIPTOR.fields_by_name["value"], path)
        return plain_of(value, path)
    if field.type == field.TYPE_BYTES:
        return base64.b64encode(value).decode("ascii")
    if field.type == field.TYPE_ENUM:
        found = field.enum_type.values_by_number.get(value)
        return found.name if found is not None else str(value)
    return value


def _is_map(field: Any) -> bool:
    message = field.message_type
    return field.is_repeated and message is not None and message.GetOptions().map_entry
