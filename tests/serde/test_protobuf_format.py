"""PROTOBUF and PROTOBUF_NOSR: ksqlDB's schemas, Confluent's wire format, proto3 reading rules."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.plan.ddl.with_properties import protobuf_properties
from qtt.serde import get_format
from qtt.serde.interface import Layout, SerdeColumn
from qtt.serde.registry.protobuf_compile import parse
from qtt.serde.registry.protobuf_schema import proto_schema_for
from qtt.serde.registry.schema_registry import Registry, RegistrySnapshot

PROTOBUF = get_format("PROTOBUF")
NOSR = get_format("PROTOBUF_NOSR")

ALL_TYPES = (
    SerdeColumn("NAME", t.STRING),
    SerdeColumn("COUNT", t.INTEGER),
    SerdeColumn("TOTAL", t.BIGINT),
    SerdeColumn("OK", t.BOOLEAN),
    SerdeColumn("RATIO", t.DOUBLE),
    SerdeColumn("RAW", t.BYTES),
    SerdeColumn("PRICE", t.Decimal(5, 2)),
    SerdeColumn("DAY", t.DATE),
    SerdeColumn("AT", t.TIME),
    SerdeColumn("WHEN", t.TIMESTAMP),
    SerdeColumn("LIST", t.Array(t.INTEGER)),
    SerdeColumn("TAGS", t.Map(t.STRING, t.BIGINT)),
    SerdeColumn("INNER", t.Struct((t.Field("A", t.STRING), t.Field("DEEP", t.Struct((t.Field("B", t.INTEGER),)))))),
)
ROW = (
    "x",
    -3,
    2**40,
    True,
    0.5,
    b"\x00\x01",
    decimal.Decimal("123.45"),
    dt.date(2024, 2, 29),
    dt.time(23, 59, 58, 125000),
    dt.datetime(2023, 5, 6, 7, 8, 9, 10000),
    [1, 2],
    {"k": 9},
    ("a", (4,)),
)


def _registered(columns: tuple[SerdeColumn, ...], topic: str = "t", **properties: str) -> RegistrySnapshot:
    registry = Registry()
    text = PROTOBUF.schema_text(columns, is_key=False, properties=properties, unwrapped=False)
    registry.register(f"{topic}-value", "PROTOBUF", text)
    return registry.snapshot()


def _serde(fmt: Any, columns: tuple[SerdeColumn, ...], snapshot: RegistrySnapshot | None, **properties: str) -> Any:
    kwargs: dict[str, Any] = {"is_key": False, "properties": properties, "features": frozenset(), "topic": "t"}
    return fmt.serializer(columns, registry=snapshot, **kwargs), fmt.deserializer(columns, registry=snapshot, **kwargs)


def test_schema_text_follows_connect_naming_and_numbering() -> None:
    columns = (
        SerdeColumn("ID", t.BIGINT),
        SerdeColumn("S", t.Struct((t.Field("X", t.STRING), t.Field("Y", t.Struct((t.Field("Z", t.DOUBLE),)))))),
        SerdeColumn("T", t.Struct((t.Field("W", t.BOOLEAN),))),
    )
    assert proto_schema_for(columns) == (
        'syntax = "proto3";\n\n'
        "message ConnectDefault1 {\n"
        "  int64 ID = 1;\n"
        "  ConnectDefault2 S = 2;\n"
        "  ConnectDefault4 T = 3;\n\n"
        "  message ConnectDefault2 {\n"
        "    string X = 1;\n"
        "    ConnectDefault3 Y = 2;\n\n"
        "    message ConnectDefault3 {\n"
        "      double Z = 1;\n"
        "    }\n"
        "  }\n\n"
        "  message ConnectDefault4 {\n"
        "    bool W = 1;\n"
        "  }\n"
        "}\n"
    )


def test_schema_text_with_a_full_name_and_logical_types_imports_what_it_uses() -> None:
    text = proto_schema_for((SerdeColumn("D", t.DATE), SerdeColumn("P", t.Decimal(4, 1))), full_name="shop.Order")
    assert "package shop;" in text
    assert "message Order {" in text
    assert 'import "google/type/date.proto";' in text
    assert 'import "confluent/type/decimal.proto";' in text
    assert 'value: "4"' in text


def test_under_a_full_name_nested_messages_are_numbered_from_one() -> None:
    # Connect's ProtobufData counts only the names it makes up: the named root takes none
    columns = (SerdeColumn("S", t.Struct((t.Field("X", t.STRING),))), SerdeColumn("T", t.Struct(())))
    text = proto_schema_for(columns, full_name="shop.Order")
    assert "  ConnectDefault1 S = 1;\n  ConnectDefault2 T = 2;\n" in text
    assert "message ConnectDefault1 {" in text
    assert "ConnectDefault3" not in text


@pytest.mark.parametrize("name", ["ConnectDefault7", " ConnectDefaultRow", "  "])
def test_a_connect_default_or_blank_full_name_is_ignored(name: str) -> None:
    columns = (SerdeColumn("S", t.Struct((t.Field("X", t.STRING),))),)
    assert proto_schema_for(columns, full_name=name) == proto_schema_for(columns)


def test_a_full_name_is_trimmed() -> None:
    text = proto_schema_for((SerdeColumn("A", t.INTEGER),), full_name="  shop.Order ")
    assert "package shop;\n" in text
    assert "message Order {" in text


def test_optional_representation_labels_message_fields_too() -> None:
    columns = (
        SerdeColumn("S", t.Struct((t.Field("X", t.STRING),))),
        SerdeColumn("P", t.Decimal(4, 1)),
        SerdeColumn("W", t.TIMESTAMP),
        SerdeColumn("L", t.Array(t.INTEGER)),
    )
    text = proto_schema_for(columns, nullable="optional")
    assert "  optional ConnectDefault2 S = 1;\n" in text
    assert "  optional confluent.type.Decimal P = 2 [" in text
    assert "  optional google.protobuf.Timestamp W = 3;\n" in text
    assert "  repeated int32 L = 4;\n" in text
    assert "    optional string X = 1;\n" in text
    snapshot = _registered(columns, nullableRepresentation="optional")
    write, read = _serde(PROTOBUF, columns, snapshot, nullableRepresentation="optional")
    row = (("x",), decimal.Decimal("1.5"), dt.datetime(2020, 1, 2, 3, 4, 5), [1])
    assert read(write(row)) == row
    assert read(write((None, None, None, None))) == (None, None, None, [])


def test_wrapper_representation_wraps_array_elements_but_not_map_values() -> None:
    columns = (SerdeColumn("L", t.Array(t.STRING)), SerdeColumn("M", t.Map(t.STRING, t.BIGINT)))
    text = proto_schema_for(columns, nullable="wrapper")
    assert "  repeated google.protobuf.StringValue L = 1;\n" in text
    assert "  map<string, int64> M = 2;\n" in text
    for fmt in (PROTOBUF, NOSR):
        snapshot = _registered(columns, nullableRepresentation="wrapper") if fmt is PROTOBUF else None
        write, read = _serde(fmt, columns, snapshot, nullableRepresentation="wrapper")
        assert read(write((["a", ""], {"k": 2}))) == (["a", ""], {"k": 2})


def test_the_map_entries_writer_writes_a_map_as_connect_s_numbered_entry_messages() -> None:
    columns = (
        SerdeColumn("TAGS", t.Map(t.STRING, t.BIGINT)),
        SerdeColumn("SPOTS", t.Map(t.STRING, t.Struct((t.Field("X", t.DOUBLE),)))),
        SerdeColumn("AFTER", t.Struct((t.Field("W", t.BOOLEAN),))),
    )
    assert proto_schema_for(columns, map_entries=True) == (
        'syntax = "proto3";\n\n'
        "message ConnectDefault1 {\n"
        "  repeated ConnectDefault2Entry TAGS = 1;\n"
        "  repeated ConnectDefault3Entry SPOTS = 2;\n"
        "  ConnectDefault5 AFTER = 3;\n\n"
        "  message ConnectDefault2Entry {\n"
        "    string key = 1;\n"
        "    int64 value = 2;\n"
        "  }\n\n"
        "  message ConnectDefault3Entry {\n"
        "    string key = 1;\n"
        "    ConnectDefault4 value = 2;\n\n"
        "    message ConnectDefault4 {\n"
        "      double X = 1;\n"
        "    }\n"
        "  }\n\n"
        "  message ConnectDefault5 {\n"
        "    bool W = 1;\n"
        "  }\n"
        "}\n"
    )
    # the first writer, which plans persisted before it keep: a protobuf map, no entry numbered
    assert "  map<string, int64> TAGS = 1;\n" in proto_schema_for(columns)
    assert "  ConnectDefault3 AFTER = 3;\n" in proto_schema_for(columns)


def test_a_new_plan_with_a_map_takes_the_map_entries_writer_whose_bytes_are_the_first_writer_s() -> None:
    assert PROTOBUF.writer_version_for(ALL_TYPES) == 2
    assert PROTOBUF.writer_version_for(ALL_TYPES[:-3]) == 1
    registry = Registry()
    for version in (1, 2):
        text = PROTOBUF.schema_text(ALL_TYPES, is_key=False, properties={}, unwrapped=False, writer_version=version)
        registry.register(f"t{version}-value", "PROTOBUF", text)
    snapshot = registry.snapshot()
    written = []
    for version in (1, 2):
        kwargs: dict[str, Any] = {"is_key": False, "properties": {}, "features": frozenset(), "topic": f"t{version}"}
        write, read = (
            PROTOBUF.serializer(ALL_TYPES, registry=snapshot, **kwargs),
            PROTOBUF.deserializer(ALL_TYPES, registry=snapshot, **kwargs),
        )
        data = write(ROW)
        assert read(data) == ROW
        written.append(data[6:])  # after the magic byte, the schema id and the message index
    assert written[0] == written[1]


def test_every_type_round_trips_in_confluent_wire_format() -> None:
    snapshot = _registered(ALL_TYPES)
    write, read = _serde(PROTOBUF, ALL_TYPES, snapshot)
    data = write(ROW)
    schema_id = snapshot.latest("t-value").schema_id  # type: ignore[union-attr]
    assert data[0] == 0
    assert int.from_bytes(data[1:5], "big") == schema_id
    assert data[5] == 0  # message index [0], Confluent's one-byte form
    assert read(data) == ROW


def test_proto3_reads_null_scalars_as_defaults_and_null_messages_as_null() -> None:
    snapshot = _registered(ALL_TYPES)
    write, read = _serde(PROTOBUF, ALL_TYPES, snapshot)
    assert read(write((None,) * len(ALL_TYPES))) == ("", 0, 0, False, 0.0, b"", None, None, None, None, [], {}, None)


def test_optional_representation_keeps_nulls() -> None:
    columns = (SerdeColumn("A", t.INTEGER), SerdeColumn("B", t.STRING))
    for representation in ("optional", "wrapper"):
        snapshot = _registered(columns, nullableRepresentation=representation)
        write, read = _serde(PROTOBUF, columns, snapshot, nullableRepresentation=representation)
        assert read(write((None, "b"))) == (None, "b")
        assert read(write((0, None))) == (0, None)


def test_a_full_schema_name_writes_that_message_and_readers_follow_the_indexes() -> None:
    registry = Registry()
    text = 'syntax = "proto3"; message First {int32 a = 1;} message Second {string K = 1; uint32 N = 2;}'
    registry.register("t-value", "PROTOBUF", text)
    snapshot = registry.snapshot()
    columns = (SerdeColumn("K", t.STRING), SerdeColumn("N", t.BIGINT))
    write, read = _serde(PROTOBUF, columns, snapshot, fullSchemaName="Second")
    data = write(("k", 7))
    assert data[5:7] == b"\x02\x02"  # message indexes: one index, 1 (zigzag varints)
    assert read(data) == ("k", 7)
    document = PROTOBUF.to_document(data, columns, is_key=False, properties={}, topic="t", registry=snapshot)
    assert document == {"K": "k", "N": 7}


def test_inference_reads_ksqldb_types_from_a_message() -> None:
    text = (
        'syntax = "proto3"; import "google/protobuf/wrappers.proto"; import "google/protobuf/timestamp.proto";'
        " enum Colour {RED = 0; BLUE = 1;}"
        " message Key {string id = 1;}"
        " message Value {uint32 u = 1; sint32 s = 2; float f = 3; Colour c = 4; repeated bytes r = 5;"
        " map<string, double> m = 6; google.protobuf.Int64Value w = 7; google.protobuf.Timestamp ts = 8;"
        " Inner n = 9; message Inner {fixed64 big = 1;}}"
    )
    columns = PROTOBUF.infer_columns(text, is_key=False, unwrapped=False, properties={"fullSchemaName": "Value"})
    assert columns == [
        ("U", t.BIGINT),
        ("S", t.INTEGER),
        ("F", t.DOUBLE),
        ("C", t.STRING),
        ("R", t.Array(t.BYTES)),
        ("M", t.Map(t.STRING, t.DOUBLE)),
        ("W", t.BIGINT),
        ("TS", t.TIMESTAMP),
        ("N", t.Struct((t.Field("BIG", t.BIGINT),))),
    ]
    assert PROTOBUF.infer_columns(text, is_key=True, unwrapped=True, properties={}) == [("ID", t.STRING)]
    # a schema named by its id keeps its own field names
    named = PROTOBUF.infer_columns(text, is_key=True, unwrapped=True, properties={"schemaId": "1"})
    assert named == [("id", t.STRING)]


def test_unknown_message_name_is_a_statement_error() -> None:
    with pytest.raises(StatementError, match="Schema full name Missing not found"):
        parse('syntax = "proto3"; message A {int32 x = 1;}').descriptor("Missing")


def test_protoc_rejects_bad_text_with_its_own_message() -> None:
    with pytest.raises(StatementError, match='"Nope" is not defined'):
        parse('syntax = "proto3"; message A {Nope x = 1;}')


def test_bad_bytes_are_serde_errors() -> None:
    columns = (SerdeColumn("A", t.INTEGER),)
    snapshot = _registered(columns)
    _, read = _serde(PROTOBUF, columns, snapshot)
    with pytest.raises(SerdeError, match="Unknown magic byte"):
        read(b"\x01\x00\x00\x00\x01\x00")
    with pytest.raises(SerdeError, match="Error retrieving PROTOBUF schema for id 4242"):
        read(b"\x00" + (4242).to_bytes(4, "big") + b"\x00\x08\x01")
    with pytest.raises(SerdeError, match="Failed to deserialize value as PROTOBUF"):
        read(b"\x00" + snapshot.schemas[0].schema_id.to_bytes(4, "big") + b"\x00\xff\xff")


def test_schemaless_protobuf_is_the_bare_message() -> None:
    columns = (SerdeColumn("A", t.INTEGER), SerdeColumn("B", t.STRING))
    write, read = _serde(NOSR, columns, None)
    assert write((1, "b")) == b"\x08\x01\x12\x01b"
    assert read(b"\x08\x01\x12\x01b") == (1, "b")
    assert read(b"") == (0, "")
    with pytest.raises(SerdeError, match="Failed to deserialize value as PROTOBUF_NOSR"):
        read(b"\xff\xff")


def test_a_bare_schemaless_protobuf_column_is_written_as_connect_writes_a_root_of_its_type() -> None:
    kwargs: dict[str, Any] = {"is_key": False, "properties": {}, "features": frozenset({"UNWRAP_SINGLE_VALUE"})}
    scalar = (SerdeColumn("N", t.INTEGER),)
    write, read = NOSR.serializer(scalar, **kwargs), NOSR.deserializer(scalar, **kwargs)
    # google.protobuf.Int32Value: the same bytes as the column's one-field message
    assert write((5,)) == b"\x08\x05"
    assert write((None,)) is None
    assert read(b"\x08\x05") == (5,)
    assert NOSR.read_document(b"\x08\x05", _layout(scalar)) == 5
    struct = (SerdeColumn("S", t.Struct((t.Field("A", t.INTEGER), t.Field("B", t.STRING)))),)
    write, read = NOSR.serializer(struct, **kwargs), NOSR.deserializer(struct, **kwargs)
    assert write(((1, "b"),)) == b"\x08\x01\x12\x01b"
    assert read(b"\x08\x01\x12\x01b") == ((1, "b"),)
    array = (SerdeColumn("L", t.Array(t.INTEGER)),)
    with pytest.raises(SerdeError, match="Unsupported root schema of type ARRAY"):
        NOSR.serializer(array, **kwargs)(([1],))


def _layout(columns: tuple[SerdeColumn, ...]) -> Layout:
    return Layout(columns=columns, is_key=False, properties={}, features=frozenset({"UNWRAP_SINGLE_VALUE"}))


def test_protobuf_rejects_maps_without_string_keys() -> None:
    with pytest.raises(StatementError, match="PROTOBUF format only supports MAP types with STRING keys"):
        PROTOBUF.validate([SerdeColumn("M", t.Map(t.INTEGER, t.STRING))], is_key=False, properties={})


@pytest.mark.parametrize(
    ("type_", "message"),
    [
        (t.Array(t.Array(t.INTEGER)), "^Array cannot be nested$"),
        (t.Struct((t.Field("CELLS", t.Array(t.Array(t.DOUBLE))),)), "^Array cannot be nested$"),
        (t.Array(t.Map(t.STRING, t.INTEGER)), "ARRAY of ARRAYs or MAPs"),
    ],
)
def test_protobuf_refuses_nested_arrays_in_connects_words(type_: t.SqlType, message: str) -> None:
    with pytest.raises(StatementError, match=message):
        PROTOBUF.validate([SerdeColumn("GRID", type_)], is_key=False, properties={})


def test_format_properties_unwrap_primitives_and_take_a_nullable_representation() -> None:
    assert protobuf_properties({}, "KEY", "PROTOBUF") == {"unwrapPrimitives": "true"}
    assert protobuf_properties({"VALUE_PROTOBUF_NULLABLE_REPRESENTATION": "OPTIONAL"}, "VALUE", "PROTOBUF_NOSR") == {
        "nullableRepresentation": "optional"
    }
    with pytest.raises(StatementError, match="can only be enabled with protobuf format"):
        protobuf_properties({"KEY_PROTOBUF_NULLABLE_REPRESENTATION": "WRAPPER"}, "KEY", "JSON")
    # the WITH clause's check lets any case through; the enum's valueOf takes upper case only
    with pytest.raises(StatementError, match=r"No enum constant .*ProtobufNullableConfigValues\.wrapper"):
        protobuf_properties({"KEY_PROTOBUF_NULLABLE_REPRESENTATION": "wrapper"}, "KEY", "PROTOBUF")


def test_a_single_key_column_is_still_a_message_so_null_reads_as_its_default() -> None:
    registry = Registry()
    columns = (SerdeColumn("F1", t.BOOLEAN),)
    registry.register("t-key", "PROTOBUF", PROTOBUF.schema_text(columns, is_key=True, properties={}, unwrapped=True))
    snapshot = registry.snapshot()
    kwargs: dict[str, Any] = {"is_key": True, "properties": {}, "features": frozenset(), "topic": "t"}
    data = PROTOBUF.serializer(columns, registry=snapshot, **kwargs)((None,))
    assert data is not None
    assert PROTOBUF.deserializer(columns, registry=snapshot, **kwargs)(data) == (False,)


def test_a_case_topics_references_are_registered_before_the_schema_that_imports_them() -> None:
    from qtt.harness.cases.model import TopicSpec
    from qtt.harness.replay.schemas import topic_schemas

    crate = 'syntax = "proto3"; message Crate {int32 kilos = 1;}'
    shipment = 'syntax = "proto3"; import "crate.proto"; message Shipment {Crate crate = 1;}'
    topic = TopicSpec(
        name="ships",
        value_format="PROTOBUF",
        value_schema=shipment,
        value_schema_references=[{"name": "crate.proto", "format": "PROTOBUF", "schema": crate}],
    )
    ((_, found),) = topic_schemas([topic]).items()
    assert found.references == (("crate.proto", crate),)
    inferred = PROTOBUF.infer_columns(
        shipment, is_key=False, unwrapped=False, properties={}, references=found.references
    )
    assert inferred == [("CRATE", t.Struct((t.Field("KILOS", t.INTEGER),)))]


def test_a_decimal_option_without_its_import_still_parses() -> None:
    text = (
        'syntax = "proto3"; import "confluent/type/decimal.proto";'
        " message Price {confluent.type.Decimal amount = 1 [(confluent.field_meta) ="
        ' { params: [{ value: "6", key: "precision" }, { value: "3", key: "scale" }]}];}'
    )
    assert PROTOBUF.infer_columns(text, is_key=False, unwrapped=False, properties={}) == [("AMOUNT", t.Decimal(6, 3))]


def test_a_case_schema_without_its_own_id_takes_the_first_id_before_its_references() -> None:
    from qtt.harness.replay.schemas import _register_with_references

    crate = 'syntax = "proto3"; message Crate {int32 kilos = 1;}'
    shipment = 'syntax = "proto3"; import "crate.proto"; message Shipment {Crate crate = 1;}'
    registry = Registry()
    refs = [("crate.proto", crate, "PROTOBUF")]
    _register_with_references(registry, "ships-value", "PROTOBUF", shipment, refs, schema_id=None)
    _register_with_references(registry, "boats-value", "PROTOBUF", shipment, refs, schema_id=40)
    ships, boats = registry.latest("ships-value"), registry.latest("boats-value")
    assert ships is not None and boats is not None
    assert ships.schema_id == 1
    assert boats.schema_id == 40
    assert ships.references == boats.references
    reference = registry.latest("crate.proto")
    assert reference is not None and reference.version == ships.references[0].version
    columns = (SerdeColumn("CRATE", t.Struct((t.Field("KILOS", t.INTEGER),))),)
    kwargs: dict[str, Any] = {"is_key": False, "properties": {}, "features": frozenset(), "topic": "ships"}
    snapshot = registry.snapshot()
    data = PROTOBUF.serializer(columns, registry=snapshot, **kwargs)(((3,),))
    assert PROTOBUF.deserializer(columns, registry=snapshot, **kwargs)(data) == ((3,),)


def _date_bytes(columns: tuple[SerdeColumn, ...], snapshot: RegistrySnapshot | None) -> bytes:
    """A message whose DAY is the google.type.Date 2024-00-10 (month 0), framed for the registry if there is one."""
    message = parse(proto_schema_for(columns)).message_class()()
    message.DAY.year, message.DAY.month, message.DAY.day = 2024, 0, 10
    if snapshot is None:
        return bytes(message.SerializeToString())
    schema_id = snapshot.schemas[0].schema_id
    return b"\x00" + schema_id.to_bytes(4, "big") + b"\x00" + message.SerializeToString()


@pytest.mark.parametrize("fmt", [PROTOBUF, NOSR], ids=lambda fmt: fmt.name)
def test_a_date_of_month_zero_is_a_serde_error_naming_the_field_and_the_months(fmt: Any) -> None:
    columns = (SerdeColumn("DAY", t.DATE),)
    snapshot = _registered(columns) if fmt is PROTOBUF else None
    data = _date_bytes(columns, snapshot)
    _, read = _serde(fmt, columns, snapshot)
    for attempt in (
        lambda: read(data),
        lambda: fmt.to_document(data, columns, is_key=False, properties={}, topic="t", registry=snapshot),
    ):
        with pytest.raises(SerdeError) as raised:
            attempt()
        message = raised.value.message
        assert message.startswith(
            f"Failed to deserialize value as {fmt.name}: the google.type.Date 2024-00-10 at $.DAY"
        )
        assert "expected a month 1 to 12" in message


def test_a_date_past_year_9999_is_a_serde_error() -> None:
    columns = (SerdeColumn("DAY", t.DATE),)
    message = parse(proto_schema_for(columns)).message_class()()
    message.DAY.year, message.DAY.month, message.DAY.day = 10000, 1, 1
    _, read = _serde(NOSR, columns, None)
    with pytest.raises(SerdeError, match=r"the date 10000-01-01 at \$\.DAY is outside the years 1 to 9999"):
        read(bytes(message.SerializeToString()))


@pytest.mark.parametrize("fmt", [PROTOBUF, NOSR], ids=lambda fmt: fmt.name)
@pytest.mark.parametrize(
    ("element", "present", "document"),
    [(t.INTEGER, 1, 1), (t.STRING, "a", "a"), (t.Struct((t.Field("A", t.INTEGER),)), (1,), {"A": 1})],
    ids=["INTEGER", "STRING", "STRUCT"],
)
def test_a_null_array_element_is_a_serde_error_as_protobuf_cannot_hold_it(
    fmt: Any, element: t.SqlType, present: Any, document: Any
) -> None:
    # Connect's ProtobufData hands protobuf-java a list holding the null, and protobuf's
    # FieldSet refuses it (NullPointerException): ksqlDB cannot write such a record either.
    columns = (SerdeColumn("LIST", t.Array(element)),)
    snapshot = _registered(columns) if fmt is PROTOBUF else None
    write, read = _serde(fmt, columns, snapshot)
    assert read(write(([present, present],))) == ([present, present],)
    with pytest.raises(SerdeError) as raised:
        write(([present, None],))
    assert raised.value.message == (
        f"Failed to serialize value as {fmt.name}: "
        "null at $.LIST[1]: a Protobuf array (a repeated field) cannot hold null elements"
    )
    side: dict[str, Any] = {"is_key": False, "properties": {}, "topic": "t", "registry": snapshot}
    with pytest.raises(SerdeError, match=r"null at \$\.LIST\[1\]: a Protobuf array"):
        fmt.from_document({"LIST": [document, None]}, columns, **side)


def test_schemaless_protobuf_writes_what_protobuf_refuses_as_serde_errors() -> None:
    columns = (SerdeColumn("A", t.INTEGER), SerdeColumn("R", t.DOUBLE))
    with pytest.raises(SerdeError, match=r"Failed to serialize value as PROTOBUF_NOSR: .*out of range"):
        NOSR.from_document({"A": 2**40}, columns, is_key=False, properties={})
    with pytest.raises(SerdeError, match=r"cannot write 'many' as Protobuf field A at \$\.A"):
        NOSR.from_document({"A": "many"}, columns, is_key=False, properties={})
    # a JSON integer past the double range is Java's BigInteger.doubleValue(): infinity
    data = NOSR.from_document({"R": 10**310}, columns, is_key=False, properties={})
    assert NOSR.deserializer(columns, is_key=False, properties={}, features=frozenset())(data) == (0, float("inf"))


def test_a_schema_with_a_lone_surrogate_is_a_statement_error_naming_its_line() -> None:
    # a case file's JSON can spell one ("\ud800"); no UTF-8 file, and so no protoc, can hold it
    text = 'syntax = "proto3";\nmessage A {\n  string n\ud800 = 1;\n}'
    with pytest.raises(StatementError) as raised:
        PROTOBUF.infer_columns(text, is_key=False, unwrapped=False, properties={})
    assert raised.value.message == (
        "Failed to parse Protobuf schema: the schema holds a lone surrogate \\ud800 at line 3:11; "
        "expected Unicode text, as a .proto file is UTF-8"
    )
    with pytest.raises(StatementError, match=r"its import 'crate.proto' holds a lone surrogate \\udfff at line 1:1"):
        parse('syntax = "proto3"; message A {int32 x = 1;}', [("crate.proto", "\udfff")])


@pytest.mark.parametrize("name", ["../crate.proto", "/tmp/crate.proto", "", "a\0.proto"])
def test_an_import_name_outside_the_schemas_folder_is_a_statement_error(name: str) -> None:
    with pytest.raises(StatementError, match=r"is not a relative path such as 'crate\.proto'"):
        parse('syntax = "proto3"; import "crate.proto"; message A {int32 x = 1;}', [(name, 'syntax = "proto3";')])


def test_a_map_that_kafka_connect_wrote_as_repeated_entries_takes_a_json_object() -> None:
    from qtt.serde.registry.protobuf_values import message_from_plain

    text = (
        'syntax = "proto3"; message ConnectDefault1 { string NAME = 1; repeated ConnectDefault2Entry VALUE = 2;'
        " message ConnectDefault2Entry { string key = 1; bool value = 2; } }"
    )
    message_class = parse(text).message_class()
    message = message_from_plain({"name": "n", "value": {"a": True, "b": False}}, message_class)
    assert [(entry.key, entry.value) for entry in message.VALUE] == [("a", True), ("b", False)]
    with pytest.raises(SerdeError, match=r"expected an array at \$\.VALUE"):
        message_from_plain({"VALUE": "not a map"}, message_class)


def test_repeated_entries_that_kafka_connect_wrote_read_back_as_a_map() -> None:
    from qtt.serde.registry.protobuf_values import message_from_plain, plain_of

    text = (
        'syntax = "proto3"; message ConnectDefault1 { repeated ConnectDefault2Entry SCORES = 1;'
        " repeated Pair PAIRS = 2; message ConnectDefault2Entry { string key = 1; int32 value = 2; }"
        " message Pair { string key = 1; int32 value = 2; } }"
    )
    message_class = parse(text).message_class()
    message = message_from_plain({"scores": {"x": 3, "y": 0}, "pairs": [{"key": "p", "value": 1}]}, message_class)
    # the ...Entry message is a map, as Connect reads it; any other message stays a list of records
    assert plain_of(message) == {"SCORES": {"x": 3, "y": 0}, "PAIRS": [{"key": "p", "value": 1}]}


_GAUGE = (
    'syntax = "proto3"; message Gauge { string site = 1; int64 reading = 2; float ratio = 3;'
    " uint32 count = 4; Level level = 5; repeated int64 history = 6; enum Level { LOW = 0; HIGH = 1; } }"
)


def _read_gauge(columns: tuple[SerdeColumn, ...], plain: dict[str, Any]) -> Any:
    registry = Registry()
    registry.register("t-value", "PROTOBUF", _GAUGE)
    writer = (SerdeColumn("SITE", t.STRING),)  # written with the registered schema, not these columns
    kwargs: dict[str, Any] = {"is_key": False, "properties": {}, "topic": "t", "registry": registry.snapshot()}
    data = PROTOBUF.from_document(plain, writer, **kwargs)
    return PROTOBUF.deserializer(columns, features=frozenset(), **kwargs)(data)


def test_protobuf_types_are_read_as_connect_lets_their_columns_take_them() -> None:
    plain = {"site": "a", "reading": 7, "ratio": 0.1, "count": 3, "level": "HIGH", "history": [1, 2]}
    wide = (
        SerdeColumn("READING", t.BIGINT),
        SerdeColumn("RATIO", t.STRING),
        SerdeColumn("COUNT", t.BIGINT),
        SerdeColumn("LEVEL", t.STRING),
        SerdeColumn("HISTORY", t.Array(t.BIGINT)),
    )
    assert _read_gauge(wide, plain) == (7, "0.1", 3, "HIGH", [1, 2])


@pytest.mark.parametrize(
    ("column", "message"),
    [
        (SerdeColumn("READING", t.INTEGER), "Cannot deserialize type int64 as type int32 for path: ->READING"),
        (SerdeColumn("COUNT", t.INTEGER), "Cannot deserialize type int64 as type int32 for path: ->COUNT"),
        (SerdeColumn("RATIO", t.BIGINT), "Cannot deserialize type float32 as type int64"),
        (SerdeColumn("LEVEL", t.INTEGER), "Cannot deserialize type string as type int32"),
        (SerdeColumn("SITE", t.DOUBLE), "Cannot deserialize type string as type float64"),
        (SerdeColumn("HISTORY", t.Array(t.INTEGER)), "int64 as type int32 for path: ->HISTORY->ARRAY"),
    ],
)
def test_protobuf_types_connect_refuses_a_column_fail_the_record(column: SerdeColumn, message: str) -> None:
    with pytest.raises(SerdeError, match=message):
        _read_gauge((column,), {"site": "a", "reading": 7, "ratio": 0.5, "count": 3, "level": "HIGH", "history": [1]})
