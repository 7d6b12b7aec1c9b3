"""PROTOBUF (Confluent's Protobuf serializers over a schema registry) and PROTOBUF_NOSR (bare messages).

Both hold a row as one message (keys too: ksqlDB's Protobuf never writes a single column
bare), whose schema ksqlDB derives from the columns (:mod:`qtt.serde.registry.protobuf_schema`).

PROTOBUF writes through Confluent's ``ProtobufSerializer`` and reads through its
``ProtobufDeserializer``: magic byte, schema id and message indexes come from them. Their
Python implementation needs generated message classes and reads registry schemas in the
registry's *serialized* form (a base64 ``FileDescriptorProto``, what a real registry answers
to ``format=serialized``); the client they get here therefore serves each snapshot's Protobuf
schemas in that form, parsed from the ``.proto`` text by :mod:`qtt.serde.registry.protobuf_compile`.

PROTOBUF_NOSR (ksqlDB's schemaless Protobuf) writes the bare message of the columns' schema.
"""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import values
from qtt.serde.interface import Layout, Row, RowWriter, SerdeColumn
from qtt.serde.registry import connect_types
from qtt.serde.registry import protobuf_schema as ps
from qtt.serde.registry.protobuf_compile import ParsedSchema, parse
from qtt.serde.registry.protobuf_values import message_from_plain, plain_of
from qtt.serde.registry.registry_format import FULL_SCHEMA_NAME, SCHEMA_ID, RegistryFormat, is_unwrapped, subject_conf
from qtt.serde.registry.schema_registry import RegisteredSchema, RegistrySnapshot


class ProtobufFormat(RegistryFormat):
    """PROTOBUF: rows as messages named ``ConnectDefault1`` (or the schema's full name)."""

    name: ClassVar[str] = "PROTOBUF"
    schema_type: ClassVar[str] = "PROTOBUF"
    supported_types: ClassVar[frozenset[str]] = frozenset([*t.Primitive.NAMES, "DECIMAL", "ARRAY", "MAP", "STRUCT"])
    supported_properties: ClassVar[frozenset[str]] = frozenset(
        [FULL_SCHEMA_NAME, SCHEMA_ID, ps.UNWRAP_PRIMITIVES, ps.NULLABLE_REPRESENTATION]
    )
    supports_unwrapping: ClassVar[bool] = False

    def check(self, layout: Layout) -> None:
        super().check(layout)
        for column in layout.columns:
            reason = ps.unsupported_reason(column.type)
            if reason is not None:
                raise StatementError(reason)
        name = ps.bad_name(layout.columns)
        if name is not None:
            msg = f"Schema is not compatible with Protobuf: '{name}' is not a valid Protobuf field name"
            raise StatementError(msg)

    def schema_text(
        self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Any, unwrapped: bool, writer_version: int = 1
    ) -> str:
        return ps.proto_schema_for(
            columns,
            full_name=properties.get(FULL_SCHEMA_NAME),
            nullable=properties.get(ps.NULLABLE_REPRESENTATION),
            map_entries=writer_version >= ps.MAP_ENTRIES_WRITER,
        )

    def writer_version_for(self, columns: Sequence[SerdeColumn]) -> int:
        return ps.MAP_ENTRIES_WRITER if any(t.contains_map(c.type) for c in columns) else 1

    def infer_columns(
        self,
        text: str,
        *,
        is_key: bool,
        unwrapped: bool,
        properties: Mapping[str, str],
        references: Sequence[tuple[str, str]] = (),
    ) -> list[tuple[str | None, t.SqlType]]:
        # a Protobuf key is a message too: its fields are the key columns
        descriptor = parse(text, references).descriptor(ps.schema_full_name(properties.get(FULL_SCHEMA_NAME)))
        return list(ps.columns_of(descriptor, upper=SCHEMA_ID not in properties))

    def serializer_for(self, layout: Layout, schema: RegisteredSchema) -> Any:
        snapshot = layout.registry or RegistrySnapshot()
        parsed = parsed_registered(snapshot, schema)
        message_class = parsed.message_class(ps.schema_full_name(layout.properties.get(FULL_SCHEMA_NAME)))
        return _Writer(message_class, self.make_serializer(snapshot, schema, by_id=True, message_class=message_class))

    def make_serializer(
        self, snapshot: RegistrySnapshot, schema: RegisteredSchema, *, by_id: bool, message_class: Any = None
    ) -> Any:
        from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

        if message_class is None:
            message_class = parsed_registered(snapshot, schema).message_class()
        conf = {"auto.register.schemas": False, "use.schema.id": schema.schema_id, **subject_conf(schema)}
        return ProtobufSerializer(message_class, serialized_client(snapshot), conf=conf)

    def make_deserializer(self, snapshot: RegistrySnapshot, schema: RegisteredSchema | None) -> Any:
        return _Reader(snapshot)

    def datum_for(self, plain: Any, schema: RegisteredSchema) -> Any:
        # the message class depends on the layout: the serializer (see serializer_for) builds the message
        return plain

    def plain_of(self, datum: Any) -> Any:
        return plain_of(datum)

    def row_of(self, datum: Any, layout: Layout) -> Row:
        if datum is None:
            return None  # type: ignore[return-value]
        target = "key" if layout.is_key else "value"
        return row_from_plain(
            self._plain(datum, layout), layout.columns, target=target, fmt=self.name, message=datum.DESCRIPTOR
        )

    def read_document(self, data: bytes, layout: Layout) -> Any:
        if not layout.columns:
            return None
        return self._plain(self._reader(layout)(data), layout)

    def _plain(self, message: Any, layout: Layout) -> Any:
        """:func:`plain_of` a message read, or the error that names the format and the side."""
        try:
            return plain_of(message)
        except SerdeError as e:
            raise SerdeError(f"Failed to deserialize {_side(layout)} as {self.name}: {e.message}") from None

    def plain_row(self, row: Row, layout: Layout) -> Any:
        return {c.name: values.to_json(v, c.type) for c, v in zip(layout.columns, row, strict=True)}


class ProtobufNoSrFormat(ProtobufFormat):
    """PROTOBUF_NOSR: the bare message of the columns' schema, no registry and no framing.

    Unlike PROTOBUF it may write a single column bare (ksqlDB's ``ProtobufNoSRFormat`` supports
    ``UNWRAP_SINGLES``): Connect's ``ProtobufData`` then writes a primitive as its
    ``google.protobuf`` wrapper message, whose bytes are those of the column's one-field message,
    a STRUCT as its own message, and a null as no bytes at all.
    """

    name: ClassVar[str] = "PROTOBUF_NOSR"
    uses_registry: ClassVar[bool] = False
    supports_unwrapping: ClassVar[bool] = True
    supported_properties: ClassVar[frozenset[str]] = frozenset(
        [FULL_SCHEMA_NAME, ps.UNWRAP_PRIMITIVES, ps.NULLABLE_REPRESENTATION]
    )

    def _message_columns(self, layout: Layout) -> tuple[SerdeColumn, ...]:
        """The columns of the message written: a bare STRUCT's fields, else the layout's."""
        if not is_unwrapped(layout):
            return layout.columns
        type_ = layout.columns[0].type
        if isinstance(type_, t.Struct):
            return tuple(SerdeColumn(f.name, f.type) for f in type_.fields)
        if isinstance(type_, (t.Array, t.Map)):
            # ProtobufData.fromConnectSchema has no root message for them
            kind = "ARRAY" if isinstance(type_, t.Array) else "MAP"
            msg = f"Failed to serialize {_side(layout)} as {self.name}: Unsupported root schema of type {kind}"
            raise SerdeError(msg)
        return layout.columns

    def _message_class(self, layout: Layout) -> Any:
        columns = self._message_columns(layout)
        text = self.schema_text(columns, is_key=layout.is_key, properties=layout.properties, unwrapped=False)
        return parse(text).message_class()

    def _bare_struct(self, layout: Layout) -> bool:
        return is_unwrapped(layout) and isinstance(layout.columns[0].type, t.Struct)

    def _plain_document(self, document: Any, layout: Layout) -> Any:
        """A case file's document as the message's JSON-like form (a bare value wrapped)."""
        if not is_unwrapped(layout) or self._bare_struct(layout):
            return document
        return {layout.columns[0].name: document}

    def row_writer(self, layout: Layout) -> RowWriter:
        if not layout.columns:
            return lambda row: None
        unwrapped = is_unwrapped(layout)
        found: list[Any] = []

        def write(row: Row) -> bytes | None:
            if unwrapped and row[0] is None:
                return None
            if not found:
                found.append(self._message_class(layout))
            if self._bare_struct(layout):
                plain = values.to_json(row[0], layout.columns[0].type)
            else:
                plain = self.plain_row(row, layout)
            return self._bytes(plain, found[0], layout)

        return write

    def write_document(self, document: Any, layout: Layout) -> bytes | None:
        if not layout.columns or (is_unwrapped(layout) and document is None):
            return None
        return self._bytes(self._plain_document(document, layout), self._message_class(layout), layout)

    def read_document(self, data: bytes, layout: Layout) -> Any:
        plain = super().read_document(data, layout)
        if plain is None or not is_unwrapped(layout) or self._bare_struct(layout):
            return plain
        return next(iter(plain.values()), None)

    def row_of(self, datum: Any, layout: Layout) -> Row:
        if datum is None or not self._bare_struct(layout):
            return super().row_of(datum, layout)
        try:
            fields = self._message_columns(layout)
            plain = connect_types.checked_message_plain(self._plain(datum, layout), datum.DESCRIPTOR, fields)
            return values.row_from_json(plain, layout.columns, wrapped=False)
        except SerdeError as e:
            raise SerdeError(f"Failed to deserialize {_side(layout)} as {self.name}: {e.message}") from None

    def _bytes(self, plain: Any, message_class: Any, layout: Layout) -> bytes:
        """The bare message holding ``plain``; what it cannot hold is a :class:`SerdeError`."""
        try:
            return bytes(message_from_plain(plain, message_class).SerializeToString())
        except SerdeError as e:
            raise SerdeError(f"Failed to serialize {_side(layout)} as {self.name}: {e.message}") from None
        except Exception as e:  # protobuf's own checks: a number outside its field's range ...
            raise SerdeError(f"Failed to serialize {_side(layout)} as {self.name}: {e or type(e).__name__}") from None

    def _reader(self, layout: Layout) -> Any:
        # the bare message: no magic byte, no schema id (the base's reading otherwise); made at
        # the first record, as a bare ARRAY or MAP fails each record in ksqlDB, not the query
        found: list[Any] = []

        def read(data: bytes) -> Any:
            try:
                if not found:
                    found.append(self._message_class(layout))
                return found[0].FromString(data)
            except SerdeError as e:
                raise SerdeError(e.message.replace("serialize", "deserialize", 1)) from None
            except Exception as e:
                msg = f"Failed to deserialize {_side(layout)} as {self.name}: {e or type(e).__name__}"
                raise SerdeError(msg) from None

        return read


def _side(layout: Layout) -> str:
    return "key" if layout.is_key else "value"


def row_from_plain(
    plain: Any, columns: Sequence[SerdeColumn], *, target: str, fmt: str, message: Any = None
) -> tuple[Any, ...]:
    """A row of SQL values from a message's JSON-like form, fields matched case-insensitively;
    with the ``message`` descriptor, its field types checked as ksqlDB's Connect translator
    checks them (:mod:`qtt.serde.registry.connect_types`)."""
    try:
        if message is not None:
            plain = connect_types.checked_message_plain(plain, message, columns)
        return values.row_from_json(plain, columns)
    except SerdeError as e:
        msg = f"Failed to deserialize {target} as {fmt}: {e.message}"
        raise SerdeError(msg) from None


class _Writer:
    """Confluent's serializer behind a step that makes the message from the JSON-like row."""

    def __init__(self, message_class: Any, serializer: Any) -> None:
        self.message_class = message_class
        self.serializer = serializer

    def __call__(self, plain: Any, context: Any) -> Any:
        return self.serializer(message_from_plain(plain, self.message_class), context)


class _Reader:
    """Confluent's deserializer for the message the bytes name (schema id and message indexes)."""

    def __init__(self, snapshot: RegistrySnapshot) -> None:
        self.snapshot = snapshot
        self.found: dict[tuple[int, tuple[int, ...]], Any] = {}

    def __call__(self, data: bytes, context: Any) -> Any:
        from confluent_kafka.schema_registry.error import SchemaRegistryError
        from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
        from confluent_kafka.schema_registry.serde import SchemaId

        framing = SchemaId("PROTOBUF")
        framing.from_bytes(io.BytesIO(data))
        key = (int(framing.id or 0), tuple(framing.message_indexes or [0]))
        deserializer = self.found.get(key)
        if deserializer is None:
            schema = self.snapshot.by_id(key[0])
            if schema is None:
                raise SchemaRegistryError(404, 40403, "Schema not found")
            descriptor = _by_indexes(parsed_registered(self.snapshot, schema), key[1])
            from google.protobuf.message_factory import GetMessageClass

            deserializer = ProtobufDeserializer(GetMessageClass(descriptor), {}, serialized_client(self.snapshot))
            self.found[key] = deserializer
        return deserializer(data, context)


def _by_indexes(parsed: ParsedSchema, indexes: Sequence[int]) -> Any:
    """The message that Confluent's message indexes name (top-level index, then nested ones)."""
    descriptor = parsed.pool.FindMessageTypeByName(parsed.message_names()[indexes[0]])
    for index in indexes[1:]:
        descriptor = descriptor.nested_types[index]
    return descriptor


def parsed_registered(snapshot: RegistrySnapshot, schema: RegisteredSchema) -> ParsedSchema:
    """A registered Protobuf schema, parsed with the schemas its references name."""
    references = []
    for reference in schema.references:
        found = next(
            (s for s in snapshot.schemas if s.subject == reference.subject and s.version == reference.version), None
        )
        if found is None:
            msg = f"the schema registry has no version {reference.version} of subject {reference.subject}"
            raise SerdeError(msg)
        references.append((reference.name, found.schema))
    return parse(schema.schema, references)


_CLIENTS: dict[RegistrySnapshot, Any] = {}
_CLIENTS_LOCK = threading.Lock()


def serialized_client(snapshot: RegistrySnapshot) -> Any:
    """A client serving the snapshot's schemas, Protobuf ones in the registry's serialized form."""
    from qtt.serde.registry.schema_registry import seeded_client

    with _CLIENTS_LOCK:
        found = _CLIENTS.get(snapshot)
        if found is None:
            schemas = [
                replace(s, schema=_serialized(parsed_registered(snapshot, s))) if s.schema_type == "PROTOBUF" else s
                for s in snapshot.schemas
            ]
            found = _CLIENTS[snapshot] = seeded_client(schemas)
        return found


def _serialized(parsed: ParsedSchema) -> str:
    return base64.standard_b64encode(parsed.main.SerializeToString()).decode("ascii")
