"""The format registry: every built-in format by name.

The interface formats implement lives in :mod:`qtt.serde.interface`; its names are
re-exported here for callers that import them from the registry.
"""

from __future__ import annotations

from types import MappingProxyType

from qtt import sqltypes as t
from qtt.errors import StatementError, did_you_mean
from qtt.serde.delimited import DelimitedFormat
from qtt.serde.interface import (
    UNWRAP_SINGLE_VALUE,
    WRAP_SINGLE_VALUE,
    Format,
    SerdeColumn,
    unsupported_base_in,
)
from qtt.serde.json_format import JsonFormat
from qtt.serde.kafka import KafkaFormat
from qtt.serde.none import NoneFormat
from qtt.serde.registry.avro_format import AvroFormat
from qtt.serde.registry.json_sr_format import JsonSrFormat
from qtt.serde.registry.protobuf_format import ProtobufFormat, ProtobufNoSrFormat

__all__ = [
    "UNWRAP_SINGLE_VALUE",
    "WRAP_SINGLE_VALUE",
    "Format",
    "SerdeColumn",
    "get_format",
    "known_formats",
    "unsupported_base",
]


def _registry(*formats: Format) -> MappingProxyType[str, Format]:
    by_name: dict[str, Format] = {}
    for format_ in formats:
        if format_.name in by_name:
            msg = f"duplicate format {format_.name!r}"
            raise TypeError(msg)
        by_name[format_.name] = format_
    return MappingProxyType(by_name)


_REGISTRY = _registry(
    AvroFormat(),
    DelimitedFormat(),
    JsonFormat(),
    JsonSrFormat(),
    KafkaFormat(),
    NoneFormat(),
    ProtobufFormat(),
    ProtobufNoSrFormat(),
)


def get_format(name: str) -> Format:
    """The format called ``name`` (case-insensitive).

    Raises:
        StatementError: for an unknown format, with the known ones listed.
    """
    found = _REGISTRY.get(name.upper())
    if found is None:
        msg = (
            f"Unknown format: {name}.{did_you_mean(name.upper(), _REGISTRY)} Known formats: "
            f"{', '.join(known_formats())}"
        )
        raise StatementError(msg)
    return found


def known_formats() -> list[str]:
    """The names of all registered formats, sorted."""
    return sorted(_REGISTRY)


def unsupported_base(type_: t.SqlType, format_name: str) -> str | None:
    """The base type inside ``type_`` that the format cannot hold, if any."""
    return unsupported_base_in(type_, get_format(format_name).supported_types)
