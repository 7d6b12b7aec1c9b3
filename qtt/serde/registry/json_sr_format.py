"""JSON_SR: JSON behind a schema registry, through Confluent's JSON Schema serializers.

The bytes are Confluent's wire format (a zero magic byte, the 4-byte schema id) then JSON
text. ksqlDB writes with Connect's ``JsonSchemaConverter`` against the registered schema, and
reads with its JSON deserializer after the 5-byte prefix: the same lenient coercion as JSON,
no validation against the schema. So the serializer here keeps Confluent's validation where
a value may not fit its schema (Connect's conversion rejects it in ksqlDB), and the
deserializer turns it off.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import values
from qtt.serde.interface import Layout, Row, SerdeColumn, has_non_string_map_key
from qtt.serde.registry import json_schema_translation as jst
from qtt.serde.registry.registry_format import FULL_SCHEMA_NAME, SCHEMA_ID, RegistryFormat, is_unwrapped, subject_conf
from qtt.serde.registry.schema_registry import RegisteredSchema, RegistrySnapshot

# ksqlDB's JsonSerdeUtils.readJsonSR message for bytes without the magic byte
_NO_MAGIC_BYTE = (
    "Got unexpected JSON serialization format that did not start with the magic byte. If this stream was not "
    "serialized using the JsonSchemaConverter, then make sure the stream is declared with JSON format (not JSON_SR)."
)


class JsonSrFormat(RegistryFormat):
    """JSON_SR: rows as JSON documents described by a registered JSON schema."""

    name: ClassVar[str] = "JSON_SR"
    schema_type: ClassVar[str] = "JSON"
    supported_types: ClassVar[frozenset[str]] = frozenset([*t.Primitive.NAMES, "DECIMAL", "ARRAY", "MAP", "STRUCT"])
    supported_properties: ClassVar[frozenset[str]] = frozenset([FULL_SCHEMA_NAME, SCHEMA_ID])

    def check(self, layout: Layout) -> None:
        super().check(layout)
        if any(has_non_string_map_key(c.type) for c in layout.columns):
            # ksqlDB's JSON_SR shares the JSON format's rule and its message
            msg = "JSON only supports MAP types with STRING keys"
            raise StatementError(msg)

    def schema_text(
        self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Any, unwrapped: bool, writer_version: int = 1
    ) -> str:
        schema = jst.json_schema_for(columns, unwrapped=unwrapped)
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
        schema = jst.inline_refs(parsed(text))
        if not unwrapped and jst.is_record(schema):
            # a schema id keeps the schema's names (ksqlDB's ORIGINAL_FIELD_NAME translation policy)
            upper = SCHEMA_ID not in properties
            fields = jst.fields_of(schema)
            return [(name.upper() if upper else name, jst.sql_type_of(sub, upper=upper)) for name, sub in fields]
        return [(None, jst.sql_type_of(schema, upper=SCHEMA_ID not in properties))]

    def make_serializer(self, snapshot: RegistrySnapshot, schema: RegisteredSchema, *, by_id: bool) -> Any:
        from confluent_kafka.schema_registry.json_schema import JSONSerializer

        # A schema a statement registered was made from the columns, so their rows always fit it:
        # validating them would only cost time. One from elsewhere (the case file, a schema id)
        # may not fit, and ksqlDB's Connect conversion rejects what does not.
        validate = by_id or schema.origin != "statement"
        conf: dict[str, Any] = {"auto.register.schemas": False, "validate": validate, **subject_conf(schema)}
        if by_id:
            conf["use.schema.id"] = schema.schema_id
        return JSONSerializer(schema.confluent(), snapshot.client(), conf=conf, json_encode=values.dumps)

    def make_deserializer(self, snapshot: RegistrySnapshot, schema: RegisteredSchema | None) -> Any:
        # ksqlDB reads JSON_SR with its JSON deserializer (JsonSerdeUtils.readJsonSR): Jackson reads
        # what follows the 5-byte prefix, exact decimals, and the schema id is neither looked up
        # nor validated against
        return _after_prefix

    def datum_for(self, plain: Any, schema: RegisteredSchema) -> Any:
        return jst.datum_for_schema(plain, parsed(schema.schema))

    def plain_of(self, datum: Any) -> Any:
        return datum

    def row_of(self, datum: Any, layout: Layout) -> Row:
        if datum is None:
            # ksqlDB's UnwrappedDeserializer wraps a null from present bytes: a row of one null
            return (None,) if is_unwrapped(layout) and not layout.is_key else None  # type: ignore[return-value]
        return row_from_document(datum, layout.columns, unwrapped=is_unwrapped(layout), target=_target(layout))

    def plain_row(self, row: Row, layout: Layout) -> Any:
        if is_unwrapped(layout):
            return values.to_json(row[0], layout.columns[0].type)
        return jst.RowDocument((c.name, values.to_json(v, c.type)) for c, v in zip(layout.columns, row, strict=True))

    def read_document(self, data: bytes, layout: Layout) -> Any:
        if not layout.columns:
            return None
        datum = self._reader(layout)(data)
        found = (layout.registry or RegistrySnapshot()).by_id(int.from_bytes(data[1:5], "big"))
        return datum if found is None else jst.plain_of_datum(datum, parsed(found.schema))

    def _reader(self, layout: Layout) -> Any:
        read = super()._reader(layout)
        target = _target(layout)

        def checked(data: bytes) -> Any:
            if not data or data[0] != 0:
                raise SerdeError(f"Failed to deserialize {target} as JSON_SR: {_NO_MAGIC_BYTE}")
            with values.deep_enough():
                return read(data)

        return checked


def _after_prefix(data: bytes, context: Any = None) -> Any:
    return values.loads_strict(data[5:])


def row_from_document(
    document: Any, columns: tuple[SerdeColumn, ...], *, unwrapped: bool, target: str
) -> tuple[Any, ...]:
    """A row of SQL values from a JSON document, with the JSON format's coercion rules."""
    try:
        with values.deep_enough():
            return values.row_from_json(document, columns, wrapped=not unwrapped)
    except SerdeError as e:
        msg = f"Failed to deserialize {target} as JSON_SR: {e.message}"
        raise SerdeError(msg) from None
    except RecursionError:
        # a STRING column takes the text of a nested value, written out recursively
        msg = f"Failed to deserialize {target} as JSON_SR: the document nests deeper than qtt reads"
        raise SerdeError(msg) from None


def _target(layout: Layout) -> str:
    return "key" if layout.is_key else "value"


@cache
def parsed(text: str) -> Any:
    """A registered schema's JSON (cached: the same few schemas are used for every record)."""
    return json.loads(text)
