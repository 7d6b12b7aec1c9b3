"""What the schema registry formats (AVRO, PROTOBUF, JSON_SR) share.

Bytes are made and read by Confluent's own serializers (``confluent_kafka.schema_registry``),
so they carry the Confluent wire format exactly: a zero magic byte, the 4-byte schema id
and, for Protobuf, the message indexes. A subclass says what its registry schema looks like
for a set of columns, and how a row or a case-file document becomes the datum its
serializer takes.

The schema a record is written with is the latest one registered under its subject
(``<topic>-key`` / ``<topic>-value``), or the one a ``KEY_SCHEMA_ID`` / ``VALUE_SCHEMA_ID``
property names; a record is read with the schema its bytes name. Both come from the
layout's :class:`~qtt.serde.registry.schema_registry.RegistrySnapshot`.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde.interface import UNWRAP_SINGLE_VALUE, Format, Layout, Row, RowReader, RowWriter, SerdeColumn
from qtt.serde.registry.schema_registry import RegisteredSchema, RegistrySnapshot, subject_for

#: ksqlDB's format properties (``ConnectProperties``): the schema id to write with, and the
#: full name of the record or message (``*_SCHEMA_FULL_NAME``, ``VALUE_AVRO_SCHEMA_FULL_NAME``)
SCHEMA_ID = "schemaId"
FULL_SCHEMA_NAME = "fullSchemaName"


class IncompatibleSchema(StatementError):
    """A registered schema Kafka Connect cannot translate (its ``DataException``): ksqlDB's
    schema inference reports it as a schema it cannot verify (``Unable to verify ...``)."""


def subject_conf(schema: RegisteredSchema) -> dict[str, Any]:
    """Serializer configuration that names ``schema``'s own subject, whatever Confluent's
    default strategy (``<topic>-key``/``-value``) would derive: qtt decides subjects where it
    registers schemas, and the serializer must look the schema up under the same one."""
    subject = schema.subject
    return {"subject.name.strategy": lambda context, record_name: subject}


def is_unwrapped(layout: Layout) -> bool:
    """Whether a single column is written bare: keys unless wrapped, values only when unwrapped."""
    if len(layout.columns) != 1:
        return False
    return layout.is_key or UNWRAP_SINGLE_VALUE in layout.features


class RegistryFormat(Format):
    """A format whose bytes name a schema in a schema registry."""

    #: the registry's name for the schema type: ``AVRO``, ``PROTOBUF`` or ``JSON``
    schema_type: ClassVar[str]
    #: whether the format registers and reads schemas (``PROTOBUF_NOSR`` does not)
    uses_registry: ClassVar[bool] = True
    reads_topic: ClassVar[bool] = True
    supports_wrapping: ClassVar[bool] = True
    supports_unwrapping: ClassVar[bool] = True

    # ---- what a subclass supplies

    @abstractmethod
    def schema_text(
        self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Any, unwrapped: bool, writer_version: int = 1
    ) -> str:
        """The schema ksqlDB registers for these columns, as the plan's version of qtt's writer
        makes it (``FormatInfo.writer_version``)."""

    @abstractmethod
    def infer_columns(
        self,
        text: str,
        *,
        is_key: bool,
        unwrapped: bool,
        properties: Mapping[str, str],
        references: Sequence[tuple[str, str]] = (),
    ) -> list[tuple[str | None, t.SqlType]]:
        """ksqlDB's schema inference: a registered schema's fields as (name, type), or one
        nameless column holding the whole schema when ``unwrapped`` or it is not a record; the
        format properties and imported schemas (import name, schema text) are there for the
        formats that need them.

        Raises:
            StatementError: the schema holds a type that has no SQL type.
        """

    @abstractmethod
    def make_serializer(self, snapshot: RegistrySnapshot, schema: RegisteredSchema, *, by_id: bool) -> Any:
        """Confluent's serializer for ``schema``: called as ``serializer(datum, context)``."""

    @abstractmethod
    def make_deserializer(self, snapshot: RegistrySnapshot, schema: RegisteredSchema | None) -> Any:
        """Confluent's deserializer: called as ``deserializer(data, context)``; returns a datum."""

    @abstractmethod
    def datum_for(self, plain: Any, schema: RegisteredSchema) -> Any:
        """The datum the serializer takes for a JSON-like value (a case file's document)."""

    @abstractmethod
    def plain_of(self, datum: Any) -> Any:
        """A datum the deserializer returned, in the JSON-like form of case files."""

    @abstractmethod
    def row_of(self, datum: Any, layout: Layout) -> Row:
        """A row of SQL values for a datum, with ksqlDB's coercion."""

    @abstractmethod
    def plain_row(self, row: Row, layout: Layout) -> Any:
        """A row of SQL values as the JSON-like value :meth:`datum_for` takes."""

    # ---- what a subclass may refine

    def serializer_for(self, layout: Layout, schema: RegisteredSchema) -> Any:
        """The serializer records of ``layout`` are written with (``serializer(datum, context)``)."""
        return self.make_serializer(layout.registry or RegistrySnapshot(), schema, by_id=SCHEMA_ID in layout.properties)

    # ---- shared

    def check(self, layout: Layout) -> None:
        super().check(layout)
        full_name = layout.properties.get(FULL_SCHEMA_NAME)
        if full_name is not None and not full_name.strip():
            msg = f"fullSchemaName cannot be empty. Format configuration: {{fullSchemaName={full_name.strip()}}}"
            raise StatementError(msg)

    def registered_schema_text(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: Iterable[str],
        writer_version: int = 1,
    ) -> str:
        """The schema ksqlDB registers for a topic's key or value of these columns, with the
        serde features that decide whether a single column is written bare."""
        layout = Layout(columns=tuple(columns), is_key=is_key, properties=properties, features=frozenset(features))
        return self.schema_text(
            layout.columns,
            is_key=is_key,
            properties=properties,
            unwrapped=is_unwrapped(layout),
            writer_version=writer_version,
        )

    def schema_text_of(self, document: Any) -> str:
        """A schema as a case file writes it (JSON), as the registry holds it (text)."""
        return document if isinstance(document, str) and self.schema_type == "PROTOBUF" else json.dumps(document)

    def writer_schema(self, layout: Layout) -> RegisteredSchema:
        """The subject version records of this layout are written with."""
        subject = layout.subject or subject_for(layout.topic, is_key=layout.is_key)
        snapshot = layout.registry or RegistrySnapshot()
        schema_id = layout.properties.get(SCHEMA_ID)
        found = snapshot.by_id(int(schema_id)) if schema_id is not None else snapshot.latest(subject)
        if found is None:
            wanted = f"schema id {schema_id}" if schema_id is not None else f"a schema under subject {subject}"
            msg = f"the schema registry has no {wanted}; the {self.name} {_side(layout)} cannot be written"
            raise SerdeError(msg)
        return found

    def _context(self, layout: Layout) -> Any:
        from confluent_kafka.serialization import MessageField, SerializationContext

        return SerializationContext(layout.topic, MessageField.KEY if layout.is_key else MessageField.VALUE)

    def row_writer(self, layout: Layout) -> RowWriter:
        if not layout.columns:
            return lambda row: None
        schema = self.writer_schema(layout)
        serializer = self.serializer_for(layout, schema)
        context = self._context(layout)
        unwrapped = is_unwrapped(layout) and self.supports_unwrapping

        def write(row: Row) -> bytes | None:
            if unwrapped and row[0] is None:
                return None
            try:
                datum = self.datum_for(self.plain_row(row, layout), schema)
                return serializer(datum, context)
            except Exception as e:
                msg = f"Failed to serialize {_side(layout)} as {self.name}: {_reason(e)}"
                raise SerdeError(msg) from None

        return write

    def row_reader(self, layout: Layout) -> RowReader:
        if not layout.columns:
            return lambda data: None
        deserialize = self._reader(layout)
        return lambda data: self.row_of(deserialize(data), layout)

    def write_document(self, document: Any, layout: Layout) -> bytes | None:
        if not layout.columns:
            return None
        schema = self.writer_schema(layout)
        serializer = self.serializer_for(layout, schema)
        try:
            datum = self.datum_for(document, schema)
            return serializer(datum, self._context(layout))
        except Exception as e:
            msg = f"cannot write {_side(layout)} as {self.name} with schema id {schema.schema_id}: {_reason(e)}"
            raise SerdeError(msg) from None

    def read_document(self, data: bytes, layout: Layout) -> Any:
        if not layout.columns:
            return None
        return self.plain_of(self._reader(layout)(data))

    def _reader(self, layout: Layout) -> Any:
        snapshot = layout.registry or RegistrySnapshot()
        deserializer = self.make_deserializer(snapshot, None)
        context = self._context(layout)

        def read(data: bytes) -> Any:
            from confluent_kafka.schema_registry.error import SchemaRegistryError

            if len(data) < 5 or data[0] != 0:
                shown = f"{data[0]}" if data else "no bytes"
                msg = f"Failed to deserialize {_side(layout)} as {self.name}: Unknown magic byte! ({shown})"
                raise SerdeError(msg)
            try:
                return deserializer(data, context)
            except SchemaRegistryError:
                schema_id = int.from_bytes(data[1:5], "big")
                msg = (
                    f"Failed to deserialize {_side(layout)} as {self.name}: "
                    f"Error retrieving {self.schema_type} schema for id {schema_id}: Schema not found"
                )
                raise SerdeError(msg) from None
            except Exception as e:
                msg = f"Failed to deserialize {_side(layout)} as {self.name}: {_reason(e)}"
                raise SerdeError(msg) from None

        return read


def _side(layout: Layout) -> str:
    return "key" if layout.is_key else "value"


def _reason(error: Exception) -> str:
    text = (error.message if isinstance(error, SerdeError) else str(error)) or type(error).__name__
    return text if len(text) <= 300 else text[:300] + "..."
