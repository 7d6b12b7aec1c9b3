"""AVRO: Confluent's Avro serializers over a schema registry, with ksqlDB's schemas."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.serde.interface import Layout, Row, RowReader, SerdeColumn, has_non_string_map_key
from qtt.serde.registry import avro_inference, avro_schema
from qtt.serde.registry.registry_format import FULL_SCHEMA_NAME, SCHEMA_ID, RegistryFormat, is_unwrapped, subject_conf
from qtt.serde.registry.schema_registry import RegisteredSchema, RegistrySnapshot

#: the AVRO writer that writes a MAP as Kafka Connect does for ksqlDB (whose map keys are
#: optional strings): an array of ``MapEntry`` records; the first wrote an Avro map
MAP_ENTRIES_WRITER = 2


class AvroFormat(RegistryFormat):
    """AVRO: rows as Avro records named ``io.confluent.ksql.avro_schemas.KsqlDataSourceSchema``."""

    name: ClassVar[str] = "AVRO"
    schema_type: ClassVar[str] = "AVRO"
    supported_types: ClassVar[frozenset[str]] = frozenset([*t.Primitive.NAMES, "DECIMAL", "ARRAY", "MAP", "STRUCT"])
    supported_properties: ClassVar[frozenset[str]] = frozenset([FULL_SCHEMA_NAME, SCHEMA_ID])

    def check(self, layout: Layout) -> None:
        super().check(layout)
        # ksqlDB's SchemaRegisterInjector translates the schema (its names) before its serde
        # factory refuses a map key (AvroUtil)
        if layout.columns:
            full_name = layout.properties.get(FULL_SCHEMA_NAME) or avro_schema.DEFAULT_FULL_NAME
            avro_schema.check_avro_names(layout.columns, full_name=full_name, unwrapped=is_unwrapped(layout))
        if any(has_non_string_map_key(c.type) for c in layout.columns):
            msg = "Avro only supports MAPs with STRING keys"
            raise StatementError(msg)

    def writer_version_for(self, columns: Sequence[SerdeColumn]) -> int:
        return MAP_ENTRIES_WRITER if any(t.contains_map(c.type) for c in columns) else 1

    def schema_text(
        self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Any, unwrapped: bool, writer_version: int = 1
    ) -> str:
        full_name = properties.get(FULL_SCHEMA_NAME) or avro_schema.DEFAULT_FULL_NAME
        map_entries = writer_version >= MAP_ENTRIES_WRITER
        schema = avro_schema.avro_schema_for(columns, full_name=full_name, unwrapped=unwrapped, map_entries=map_entries)
        return json.dumps(schema, separators=(",", ":"))

    def infer_columns(
        self,
        text: str,
        *,
        is_key: bool,
        unwrapped: bool,
        properties: Mapping[str, str],
        references: Sequence[tuple[str, str]] = (),
    ) -> list[tuple[str | None, t.SqlType]]:
        schema = parsed(text)
        members = [m for m in schema if m != "null"] if isinstance(schema, list) else []
        if not unwrapped and len(members) == 1 and isinstance(members[0], dict) and members[0].get("type") == "record":
            schema = members[0]  # Connect reads a nullable record as an optional record: its fields are columns
        try:
            if not unwrapped and isinstance(schema, dict) and schema.get("type") == "record":
                # a schema id keeps the schema's names (ksqlDB's ORIGINAL_FIELD_NAME translation policy)
                return list(avro_inference.record_columns(schema, upper=SCHEMA_ID not in properties))
            return [(None, avro_inference.sql_type_of(schema, upper=SCHEMA_ID not in properties))]
        except StatementError as e:
            if not e.message.startswith(avro_inference.INVALID):
                raise
            side = "key" if is_key else "value"
            raise StatementError(e.message.replace(avro_inference.INVALID, f"Invalid Avro {side} schema", 1)) from None

    def make_serializer(self, snapshot: RegistrySnapshot, schema: RegisteredSchema, *, by_id: bool) -> Any:
        from confluent_kafka.schema_registry.avro import AvroSerializer

        conf: dict[str, Any] = {"auto.register.schemas": False, **subject_conf(schema)}
        if by_id:
            conf["use.schema.id"] = schema.schema_id
        return AvroSerializer(snapshot.client(), schema.confluent(), conf=conf)

    def make_deserializer(self, snapshot: RegistrySnapshot, schema: RegisteredSchema | None) -> Any:
        from confluent_kafka.schema_registry.avro import AvroDeserializer

        _read_micros_raw()
        return _Reader(AvroDeserializer(snapshot.client()), snapshot)

    def datum_for(self, plain: Any, schema: RegisteredSchema) -> Any:
        return avro_schema.root_datum(plain, parsed(schema.schema))

    def plain_of(self, datum: Any) -> Any:
        return avro_schema.avro_to_plain(datum)

    def row_of(self, datum: Any, layout: Layout, writer: Any = None) -> Row:
        target = "key" if layout.is_key else "value"
        if datum is None:
            # ksqlDB's UnwrappedDeserializer wraps a null from present bytes: a row of one null
            return (None,) if is_unwrapped(layout) and not layout.is_key else None  # type: ignore[return-value]
        return avro_schema.row_from_datum(
            datum, layout.columns, unwrapped=is_unwrapped(layout), target=target, writer=writer
        )

    def row_reader(self, layout: Layout) -> RowReader:
        if not layout.columns:
            return lambda data: None
        deserialize = self._reader(layout)
        snapshot = layout.registry or RegistrySnapshot()
        writers: dict[int, Any] = {}  # schema id -> the parsed writer schema, or None

        def writer_of(schema_id: int) -> Any:
            if schema_id not in writers:
                found = snapshot.by_id(schema_id)
                writers[schema_id] = parsed(found.schema) if found is not None else None
            return writers[schema_id]

        def read(data: bytes) -> Row | None:
            datum = deserialize(data)  # the bytes start with the magic byte and a schema id
            # Connect's types are the writer schema's: ksqlDB's translator checks them per column
            return self.row_of(datum, layout, writer_of(int.from_bytes(data[1:5], "big")))

        return read

    def plain_row(self, row: Row, layout: Layout) -> Any:
        if is_unwrapped(layout):
            from qtt.serde import values

            return values.to_json(row[0], layout.columns[0].type)
        return avro_schema.plain_row(row, layout.columns)


#: how Kafka Connect marks the records of a map written as an array
_MAP_ENTRY = '"MapEntry"'


class _Reader:
    """Confluent's deserializer, and the writer schema's reading of a bare decimal's bytes.

    Confluent's deserializer hands back the payload of a bare ``bytes`` schema as it is (its
    logical type unread), as Java's does; Connect then reads a decimal's unscaled value from it.
    """

    def __init__(self, deserializer: Any, snapshot: RegistrySnapshot) -> None:
        self.deserializer = deserializer
        self.snapshot = snapshot
        #: writer schema id -> its parsed schema when it holds Connect's map entries, else None
        self.entry_writers: dict[int, Any] = {}

    def __call__(self, data: bytes, context: Any) -> Any:
        datum = self.deserializer(data, context)
        if isinstance(datum, bytes | bytearray):
            writer = self.snapshot.by_id(int.from_bytes(data[1:5], "big"))
            if writer is not None:
                return avro_schema.root_value(datum, parsed(writer.schema))
        elif isinstance(datum, Mapping | list):
            schema = self._entry_writer(int.from_bytes(data[1:5], "big"))
            if schema is not None:
                return avro_schema.maps_from_entries(datum, schema)
        return datum

    def _entry_writer(self, schema_id: int) -> Any:
        """The writer schema if it holds a map as Kafka Connect's array of entries (looked up once per id)."""
        if schema_id not in self.entry_writers:
            writer = self.snapshot.by_id(schema_id)
            holds = writer is not None and _MAP_ENTRY in writer.schema
            self.entry_writers[schema_id] = parsed(writer.schema) if holds and writer is not None else None
        return self.entry_writers[schema_id]


#: fastavro's readers of the logical types Kafka Connect's AvroData does not know (it reads
#: them as the plain long they are, so ksqlDB sees the number of microseconds)
_CONNECT_RAW_LOGICAL = ("long-time-micros", "long-timestamp-micros")


def _raw(data: Any, *_: Any) -> Any:
    return data


@cache
def _read_micros_raw() -> None:
    """Make fastavro hand back the micros logical types unconverted, as Connect reads them
    (fastavro's table is process-wide; qtt reads Avro only through Confluent's deserializer)."""
    from fastavro import read

    for name in _CONNECT_RAW_LOGICAL:
        read.LOGICAL_READERS[name] = _raw


@cache
def parsed(text: str) -> Any:
    """A registered schema's JSON, its named types' references resolved (cached: the same few
    schemas are used for every record)."""
    return avro_inference.inline_named(json.loads(text))
