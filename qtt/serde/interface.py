"""The interface every format implements, and what formats share.

Imports no format: each format imports this module, and the registry
(:mod:`qtt.serde.formats`) imports the formats, so the import graph runs one way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import StatementError

if TYPE_CHECKING:
    from qtt.serde.registry.schema_registry import RegistrySnapshot

# ksqlDB's serde features.
WRAP_SINGLE_VALUE = "WRAP_SINGLE_VALUE"
UNWRAP_SINGLE_VALUE = "UNWRAP_SINGLE_VALUE"
#: the key formats whose single key column ksqlDB reports as unwrapped (its ``UNWRAP_SINGLES``
#: key feature: the formats that can both wrap and unwrap); a PROTOBUF key is a message even of
#: one field, and has none
UNWRAPPED_KEY_FORMATS = frozenset({"JSON", "AVRO", "JSON_SR", "PROTOBUF_NOSR"})
#: the key formats ksqlDB infers schemas for: a join always repartitions a side keyed in one of
#: them (``PreJoinRepartitionNode``: key schema ids may differ)
INFERRED_KEY_FORMATS = frozenset({"AVRO", "JSON_SR", "PROTOBUF"})


@dataclass(frozen=True)
class SerdeColumn:
    """A column as a format sees it: a name and a SQL type."""

    name: str
    type: t.SqlType


Row = tuple[Any, ...]
Serializer = Callable[[Row | None], bytes | None]
Deserializer = Callable[[bytes | None], Row | None]
RowWriter = Callable[[Row], bytes | None]
RowReader = Callable[[bytes], Row | None]


@dataclass(frozen=True, kw_only=True)
class Layout:
    """One side of a record (its key or its value) as a format writes it."""

    columns: tuple[SerdeColumn, ...]
    is_key: bool
    #: the format's WITH-clause properties (lower case), such as ``delimiter``.
    properties: Mapping[str, str]
    #: ksqlDB's serde features, such as :data:`UNWRAP_SINGLE_VALUE`.
    features: frozenset[str] = frozenset()
    #: the topic, which names the registry subject (``<topic>-key`` / ``<topic>-value``)
    topic: str = ""
    #: the schemas a registry format reads and writes with (:mod:`qtt.serde.registry.schema_registry`)
    registry: RegistrySnapshot | None = None
    #: the registry subject records are written under; decided where schemas are registered
    #: (the driver), so that Spark's workers never name subjects themselves
    subject: str = ""

    def shown_columns(self) -> str:
        """The columns as ksqlDB's messages list them: ``A INTEGER KEY, B STRING KEY``."""
        suffix = " KEY" if self.is_key else ""
        return ", ".join(f"{t.quote(c.name)} {c.type}{suffix}" for c in self.columns)


class Format(ABC):
    """One serialization format.

    Runtime direction: :meth:`serializer` / :meth:`deserializer` turn a tuple of column
    values into bytes and back. Harness direction: :meth:`from_document` /
    :meth:`to_document` turn the JSON written in a case file into bytes and back.

    A null row, document or record maps to null in every direction, so a format supplies
    only what it does with a present one: :meth:`row_writer`, :meth:`row_reader`,
    :meth:`write_document` and :meth:`read_document`, plus any checks of its own in
    :meth:`check`.
    """

    name: ClassVar[str]
    #: base types (``t.SqlType.base``) this format can hold.
    supported_types: ClassVar[frozenset[str]]
    #: property names (lower case) accepted in the WITH clause, such as ``delimiter``.
    supported_properties: ClassVar[frozenset[str]] = frozenset()
    #: whether a single value column can be written unwrapped (WRAP_SINGLE_VALUE=false).
    supports_unwrapping: ClassVar[bool] = False
    #: whether a single value column can be written wrapped (WRAP_SINGLE_VALUE=true).
    supports_wrapping: ClassVar[bool] = False
    #: the row a null record reads as: null (a tombstone), unless the format has no bytes to be null.
    null_record_row: ClassVar[Row | None] = None
    #: whether its (de)serializers read a layout's topic, registry or subject; one that does
    #: not is the same for every topic, so the runtime makes one Spark UDF for all of them
    reads_topic: ClassVar[bool] = False

    def validate(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str] = frozenset(),
    ) -> None:
        """Raise :class:`StatementError` if the columns do not fit this format."""
        self.check(Layout(columns=tuple(columns), is_key=is_key, properties=properties, features=features))

    def check(self, layout: Layout) -> None:
        """Raise :class:`StatementError` if ``layout`` does not fit this format.

        The default rejects column types outside :attr:`supported_types` and properties
        outside :attr:`supported_properties`; formats add their own rules after it.
        """
        for column in layout.columns:
            base = unsupported_base_in(column.type, self.supported_types)
            if base is not None:
                raise StatementError(self.unsupported_type_message(base, column))
        unknown = set(layout.properties) - self.supported_properties
        if unknown:
            msg = f"{self.name} does not support the following configs: [{', '.join(sorted(unknown))}]"
            raise StatementError(msg)

    def writer_version_for(self, columns: Sequence[SerdeColumn]) -> int:
        """The version of this format's writer a new plan takes for these columns: the newest
        whose bytes for them differ from the first writer's, else 1 (see ``FormatInfo``)."""
        return 1

    def unsupported_type_message(self, base: str, column: SerdeColumn) -> str:
        """ksqlDB's message for a column whose type this format cannot hold."""
        return f"The '{self.name}' format does not support type '{base}'"

    def serializer(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str],
        topic: str = "",
        registry: RegistrySnapshot | None = None,
        subject: str = "",
    ) -> Serializer:
        """A function from a row of column values (or None) to bytes (or None)."""
        write = self.row_writer(_layout(columns, is_key, properties, features, topic, registry, subject))

        def serialize(row: Row | None) -> bytes | None:
            return None if row is None else write(row)

        return serialize

    def deserializer(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str],
        topic: str = "",
        registry: RegistrySnapshot | None = None,
        subject: str = "",
    ) -> Deserializer:
        """A function from bytes (or None) to a row of column values (or None).

        Raises :class:`~qtt.errors.SerdeError` when the bytes do not match.
        """
        read = self.row_reader(_layout(columns, is_key, properties, features, topic, registry, subject))
        null_row = self.null_record_row

        def deserialize(data: bytes | None) -> Row | None:
            return null_row if data is None else read(data)

        return deserialize

    def from_document(
        self,
        document: Any,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str] = frozenset(),
        topic: str = "",
        registry: RegistrySnapshot | None = None,
        subject: str = "",
    ) -> bytes | None:
        """Bytes for a record key or value as a case file writes it."""
        if document is None:
            return None
        return self.write_document(document, _layout(columns, is_key, properties, features, topic, registry, subject))

    def to_document(
        self,
        data: bytes | None,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str] = frozenset(),
        topic: str = "",
        registry: RegistrySnapshot | None = None,
        subject: str = "",
    ) -> Any:
        """The case-file JSON for record bytes, for comparison with expected outputs."""
        if data is None:
            return None
        return self.read_document(data, _layout(columns, is_key, properties, features, topic, registry, subject))

    @abstractmethod
    def row_writer(self, layout: Layout) -> RowWriter:
        """A function from a row of column values to bytes (None writes a null record)."""

    @abstractmethod
    def row_reader(self, layout: Layout) -> RowReader:
        """A function from a record's bytes to a row of column values (None for a null row).

        The function raises :class:`~qtt.errors.SerdeError` when the bytes do not match.
        """

    @abstractmethod
    def write_document(self, document: Any, layout: Layout) -> bytes | None:
        """Bytes for a non-null key or value document from a case file."""

    @abstractmethod
    def read_document(self, data: bytes, layout: Layout) -> Any:
        """The case-file JSON for a non-null record key or value."""


def _layout(
    columns: Sequence[SerdeColumn],
    is_key: bool,
    properties: Mapping[str, str],
    features: frozenset[str],
    topic: str,
    registry: RegistrySnapshot | None,
    subject: str,
) -> Layout:
    return Layout(
        columns=tuple(columns),
        is_key=is_key,
        properties=properties,
        features=features,
        topic=topic,
        registry=registry,
        subject=subject,
    )


def unsupported_base_in(type_: t.SqlType, supported: frozenset[str]) -> str | None:
    """The outermost base type inside ``type_`` that is not in ``supported``, if any."""
    if type_.base not in supported:
        return type_.base
    if isinstance(type_, t.Array):
        return unsupported_base_in(type_.element, supported)
    if isinstance(type_, t.Map):
        return unsupported_base_in(type_.key, supported) or unsupported_base_in(type_.value, supported)
    if isinstance(type_, t.Struct):
        for f in type_.fields:
            found = unsupported_base_in(f.type, supported)
            if found:
                return found
    return None


def has_non_string_map_key(type_: t.SqlType) -> bool:
    """Whether ``type_`` holds a MAP whose keys are not STRING (JSON and Avro cannot)."""
    if isinstance(type_, t.Map):
        return type_.key != t.STRING or has_non_string_map_key(type_.value)
    if isinstance(type_, t.Array):
        return has_non_string_map_key(type_.element)
    if isinstance(type_, t.Struct):
        return any(has_non_string_map_key(f.type) for f in type_.fields)
    return False


def text_of(data: bytes) -> str:
    """Record bytes as text; malformed UTF-8 becomes U+FFFD, as Java's decoders do."""
    return data.decode("utf-8", errors="replace")
