"""The replay registry: deterministic ids, chosen ids, and the snapshot Spark's workers read."""

from __future__ import annotations

import json

import pytest

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import SerdeColumn, get_format
from qtt.serde.registry.schema_registry import RegisteredSchema, Registry, RegistrySnapshot

COLUMNS = [SerdeColumn("CITY", t.STRING), SerdeColumn("TEMP", t.DOUBLE)]


def _avro_text() -> str:
    return get_format("AVRO").schema_text(COLUMNS, is_key=False, properties={}, unwrapped=False)


def test_each_replay_gets_a_fresh_embedded_registry_with_the_same_ids() -> None:
    first, second = Registry(), Registry()
    ids = [
        first.register("a-value", "AVRO", _avro_text()).schema_id,
        first.register("b-value", "AVRO", '"int"').schema_id,
    ]
    again = [
        second.register("a-value", "AVRO", _avro_text()).schema_id,
        second.register("b-value", "AVRO", '"int"').schema_id,
    ]
    assert ids == again == [1, 2]


def test_registering_the_same_schema_twice_keeps_one_version() -> None:
    registry = Registry()
    one = registry.register("a-value", "AVRO", _avro_text())
    two = registry.register("a-value", "AVRO", _avro_text())
    assert one == two and one.version == 1
    assert registry.latest("a-value") == one
    assert registry.latest("missing-value") is None


def test_a_chosen_id_is_kept_and_later_ids_come_after_it() -> None:
    registry = Registry()
    chosen = registry.register("t-value", "AVRO", _avro_text(), schema_id=102, origin="case")
    assert (chosen.schema_id, chosen.origin) == (102, "case")
    assert registry.register("u-value", "AVRO", '"long"').schema_id == 103


def test_the_snapshot_serves_the_exact_ids_to_confluents_serializers() -> None:
    """Guards the seeded client against a change in confluent-kafka's in-process registry."""
    snapshot = RegistrySnapshot(
        schemas=(
            RegisteredSchema(subject="rides-value", version=3, schema_id=77, schema_type="AVRO", schema=_avro_text()),
        )
    )
    avro = get_format("AVRO")
    options = {"is_key": False, "properties": {}, "features": frozenset(), "topic": "rides", "registry": snapshot}
    data = avro.serializer(COLUMNS, **options)(("Oslo", -3.5))
    assert data is not None and data[:5] == b"\x00\x00\x00\x00\x4d"  # magic byte, then id 77
    assert avro.deserializer(COLUMNS, **options)(data) == ("Oslo", -3.5)
    assert avro.to_document(data, COLUMNS, **options) == {"CITY": "Oslo", "TEMP": -3.5}
    client = snapshot.client()
    assert client.get_schema(77).schema_str == _avro_text()
    assert snapshot.client() is client, "each worker builds its client once"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x07\x00\x00\x00\x01\x02", "Unknown magic byte"),
        (b"\x00\x00\x00\x00\x09\x02", "Error retrieving AVRO schema for id 9"),
        (b"\x00\x00\x00\x00\x01\x05", "Failed to deserialize value as AVRO"),
    ],
)
def test_bad_bytes_are_a_serde_error_never_a_crash(data: bytes, message: str) -> None:
    registry = Registry()
    registry.register("rides-value", "AVRO", _avro_text())
    read = get_format("AVRO").deserializer(
        COLUMNS, is_key=False, properties={}, features=frozenset(), topic="rides", registry=registry.snapshot()
    )
    with pytest.raises(SerdeError, match=message):
        read(data)


def test_ksqldb_schema_for_columns() -> None:
    columns = [SerdeColumn("ID", t.INTEGER), SerdeColumn("ADDR", t.Struct((t.Field("CITY", t.STRING),)))]
    text = get_format("AVRO").schema_text(
        columns, is_key=False, properties={"fullSchemaName": "x.y.Z"}, unwrapped=False
    )
    schema = json.loads(text)
    assert (schema["namespace"], schema["name"]) == ("x.y", "Z")
    assert schema["fields"][0] == {"name": "ID", "type": ["null", "int"], "default": None}
    nested = schema["fields"][1]["type"][1]
    assert nested["name"] == "Z_ADDR" and "namespace" not in nested


def test_the_embedded_registry_accepts_any_schema_as_ksqldbs_test_registry_does() -> None:
    registry = Registry()
    registry.register("t-value", "AVRO", '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}')
    renamed = '{"type":"array","items":{"type":"record","name":"test","fields":[{"name":"a","type":"int"}]}}'
    assert registry.register("t-value", "AVRO", renamed).version == 2


def test_an_incompatible_avro_schema_is_refused_as_ksqldb_says() -> None:
    registry = Registry()
    registry.compatibility["t-value"] = "BACKWARD"
    registry.register("t-value", "AVRO", '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}')
    added_optional = (
        '{"type":"record","name":"R","fields":[{"name":"a","type":"int"},'
        '{"name":"b","type":["null","int"],"default":null}]}'
    )
    assert registry.register("t-value", "AVRO", added_optional).version == 2
    added_required = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"c","type":"string"}]}'
    with pytest.raises(StatementError, match='incompatible with an earlier schema for subject "t-value"'):
        registry.register("t-value", "AVRO", added_required)
    registry.compatibility["t-value"] = "NONE"
    assert registry.register("t-value", "AVRO", added_required).version == 3
