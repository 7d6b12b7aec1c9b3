"""The format registry and the interface every format implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import StatementError, did_you_mean

# ksqlDB's serde features.
WRAP_SINGLE_VALUE = "WRAP_SINGLE_VALUE"
UNWRAP_SINGLE_VALUE = "UNWRAP_SINGLE_VALUE"
UNWRAP_SINGLE_KEY = "UNWRAP_SINGLE_KEY"


@dataclass(frozen=True)
class SerdeColumn:
    """A column as a format sees it: a name and a SQL type."""

    name: str
    type: t.SqlType


Row = tuple[Any, ...]
Serializer = Callable[[Row | None], bytes | None]
Deserializer = Callable[[bytes | None], Row | None]


class Format(ABC):
    """One serialization format.

    Runtime direction: :meth:`serializer` / :meth:`deserializer` turn a tuple of column
    values into bytes and back. Harness direction: :meth:`from_document` /
    :meth:`to_document` turn the JSON written in a case file into bytes and back.
    """

    name: ClassVar[str]
    #: base types (``t.SqlType.base``) this format can hold.
    supported_types: ClassVar[frozenset[str]]
    #: property names (lower case) accepted in the WITH clause, such as ``delimiter``.
    supported_properties: ClassVar[frozenset[str]] = frozenset()
    #: whether several columns fit in one key or value.
    supports_multiple_columns: ClassVar[bool] = True
    #: whether a single value column can be written unwrapped (WRAP_SINGLE_VALUE=false).
    supports_unwrapping: ClassVar[bool] = False
    #: whether a single value column can be written wrapped (WRAP_SINGLE_VALUE=true).
    supports_wrapping: ClassVar[bool] = False
    #: whether this format carries a schema in a registry (AVRO, PROTOBUF ...).
    uses_schema_registry: ClassVar[bool] = False

    def validate(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
    ) -> None:
        """Raise :class:`StatementError` if the columns do not fit this format."""
        for column in columns:
            base = _unsupported_base(column.type, self.supported_types)
            if base is not None:
                raise StatementError(self.unsupported_type_message(base, column))
        unknown = set(properties) - self.supported_properties
        if unknown:
            msg = f"{self.name} does not support the following configs: [{', '.join(sorted(unknown))}]"
            raise StatementError(msg)

    def unsupported_type_message(self, base: str, column: SerdeColumn) -> str:
        """ksqlDB's message for a column whose type this format cannot hold."""
        return f"The '{self.name}' format does not support type '{base}'"

    @abstractmethod
    def serializer(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str],
    ) -> Serializer:
        """A function from a row of column values (or None) to bytes (or None)."""

    @abstractmethod
    def deserializer(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str],
    ) -> Deserializer:
        """A function from bytes (or None) to a row of column values (or None).

        Raises :class:`~qtt.errors.SerdeError` when the bytes do not match.
        """

    @abstractmethod
    def from_document(
        self,
        document: Any,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
    ) -> bytes | None:
        """Bytes for a record key or value as a case file writes it."""

    @abstractmethod
    def to_document(
        self,
        data: bytes | None,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
    ) -> Any:
        """The case-file JSON for record bytes, for comparison with expected outputs."""


def unsupported_base(type_: t.SqlType, format_name: str) -> str | None:
    """The base type inside ``type_`` that the format cannot hold, if any."""
    return _unsupported_base(type_, get_format(format_name).supported_types)


def _unsupported_base(type_: t.SqlType, supported: frozenset[str]) -> str | None:
    if type_.base not in supported:
        return type_.base
    if isinstance(type_, t.Array):
        return _unsupported_base(type_.element, supported)
    if isinstance(type_, t.Map):
        return _unsupported_base(type_.key, supported) or _unsupported_base(type_.value, supported)
    if isinstance(type_, t.Struct):
        for f in type_.fields:
            found = _unsupported_base(f.type, supported)
            if found:
                return found
    return None


_REGISTRY: dict[str, Format] = {}


def register(format_: Format) -> Format:
    """Add a format to the registry under its name."""
    if format_.name in _REGISTRY:
        msg = f"duplicate format {format_.name!r}"
        raise TypeError(msg)
    _REGISTRY[format_.name] = format_
    return format_


def get_format(name: str) -> Format:
    """The format called ``name`` (case-insensitive).

    Raises:
        StatementError: for an unknown format, with the known ones listed.
    """
    _load_builtin_formats()
    found = _REGISTRY.get(name.upper())
    if found is None:
        msg = (
            f"Unknown format: {name}.{did_you_mean(name.upper(), _REGISTRY)} Known formats: "
            f"{', '.join(sorted(_REGISTRY))}"
        )
        raise StatementError(msg)
    return found


def known_formats() -> list[str]:
    _load_builtin_formats()
    return sorted(_REGISTRY)


def _load_builtin_formats() -> None:
    # Importing a built-in format registers it; modules import once, whoever imports first.
    from qtt.serde import delimited, json_format, kafka, none  # noqa: F401
