"""The Protobuf schema ksqlDB's driver registers for records written with one message of a
declared schema, and the post-conditions that see it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.harness.cases.model import PostConditions, PostTopic, PostTopics
from qtt.harness.replay.post import check_schemas
from qtt.harness.session import run_selection, select
from qtt.harness.status import Status
from qtt.plan.ir.steps import FormatInfo, Formats
from qtt.serde.registry.protobuf_compile import parse
from qtt.serde.registry.schema_registry import RegisteredSchema, SchemaReference

DECLARED = """syntax = "proto3";
package plant;

import "google/protobuf/timestamp.proto";

enum Unit {
  CELSIUS = 0;
  KELVIN = 1;
}
message Probe {
  string site = 1;
  Unit unit = 2;
}
message Calibration {
  double offset = 1;
}
message Reading {
  Probe probe = 1;
  double level = 2;
  google.protobuf.Timestamp taken = 3;
  Note note = 4;

  message Note {
    string text = 1;
  }
}
"""

#: ``plant.Reading`` as Connect's converter writes it: ``Probe`` nested, ``Calibration`` gone
READING_ALONE = """syntax = "proto3";
package plant;

import "google/protobuf/timestamp.proto";

enum Unit {
  CELSIUS = 0;
  KELVIN = 1;
}
message Reading {
  Probe probe = 1;
  double level = 2;
  google.protobuf.Timestamp taken = 3;
  Note note = 4;

  message Note {
    string text = 1;
  }
  message Probe {
    string site = 1;
    Unit unit = 2;
  }
}
"""


def test_one_message_alone_nests_the_messages_it_uses_and_drops_the_others() -> None:
    alone = parse(DECLARED).alone("plant.Reading")

    assert alone == parse(READING_ALONE).content()
    assert [m.name for m in alone.message_type] == ["Reading"]
    assert [n.name for n in alone.message_type[0].nested_type] == ["Note", "Probe"]
    assert alone.message_type[0].field[0].type_name == ".plant.Reading.Probe"
    # the short name finds it too; a message without references is itself, without the rest
    assert parse(DECLARED).alone("Reading") == alone
    assert [m.name for m in parse(DECLARED).alone("Calibration").message_type] == ["Calibration"]
    assert not parse(DECLARED).alone("Calibration").enum_type


def test_a_message_of_a_referenced_file_is_nested_where_it_is_used() -> None:
    event = 'syntax = "proto3";\n\nmessage Event {\n  int64 AT = 1;\n}\n'
    shipment = 'syntax = "proto3";\n\nimport "event.proto";\n\nmessage Shipment {\n  Event LAST = 1;\n}\n'
    nested = (
        'syntax = "proto3";\n\nmessage Shipment {\n  Event LAST = 1;\n\n  message Event {\n    int64 AT = 1;\n  }\n}\n'
    )

    assert parse(shipment, [("event.proto", event)]).alone("Shipment") == parse(nested).content()


def _registered(origin: str) -> RegisteredSchema:
    return RegisteredSchema(
        subject="levels-value", version=1, schema_id=7, schema_type="PROTOBUF", schema=DECLARED, origin=origin
    )


def _post(schema: str) -> PostConditions:
    return PostConditions(topics=PostTopics(topics=(PostTopic(name="levels", value_schema=schema),)))


def _formats(full_name: str | None) -> dict[str, Formats]:
    properties = {"fullSchemaName": full_name} if full_name else {}
    key, value = FormatInfo(format="KAFKA"), FormatInfo(format="PROTOBUF", properties=properties)
    return {"levels": Formats(key_format=key, value_format=value)}


def test_a_declared_topic_written_to_with_a_named_message_holds_that_message_alone() -> None:
    alone, declared = _post(READING_ALONE), _post(DECLARED)
    named = _formats("plant.Reading")

    assert check_schemas(alone, [_registered("case")], produced={"levels"}, formats=named) == []
    problems = check_schemas(declared, [_registered("case")], produced={"levels"}, formats=named)
    assert "(its message plant.Reading compared, alone)" in problems[0]
    # never written to, no message named, or registered by a statement: the declared text
    assert check_schemas(declared, [_registered("case")], formats=named) == []
    assert check_schemas(declared, [_registered("case")], produced={"levels"}, formats=_formats(None)) == []
    assert check_schemas(declared, [_registered("statement")], produced={"levels"}, formats=named) == []
    # text that is not a schema at all is a problem, not an error
    assert check_schemas(_post("message {"), [_registered("case")], produced={"levels"}, formats=named)


def test_a_reference_the_registry_lacks_is_a_problem_not_an_error() -> None:
    lacking = RegisteredSchema(
        subject="levels-value",
        version=1,
        schema_id=7,
        schema_type="PROTOBUF",
        schema='syntax = "proto3";\n\nimport "event.proto";\n\nmessage Reading {\n  Event E = 1;\n}\n',
        references=(SchemaReference(name="event.proto", subject="event", version=1),),
        origin="case",
    )
    named = _formats("Reading")

    assert check_schemas(_post(READING_ALONE), [lacking], produced={"levels"}, formats=named)


@pytest.mark.spark
def test_a_case_s_post_condition_sees_the_named_message_of_its_written_input_topic(spark, tmp_path: Path) -> None:
    declared = (
        'syntax = "proto3";\n\nmessage Gauge {\n  string NAME = 1;\n}\n'
        "message Level {\n  int64 MM = 1;\n  string TANK = 2;\n}\n"
    )
    level = 'syntax = "proto3";\n\nmessage Level {\n  int64 MM = 1;\n  string TANK = 2;\n}\n'
    case = {
        "name": "one message of two",
        "topics": [{"name": "levels", "valueSchema": declared, "valueFormat": "PROTOBUF"}],
        "statements": [
            "CREATE STREAM LEVELS WITH (kafka_topic='levels', value_format='PROTOBUF', "
            "VALUE_SCHEMA_FULL_NAME='Level');",
            "CREATE STREAM HIGH AS SELECT * FROM LEVELS WHERE MM > 900;",
        ],
        "inputs": [
            {"topic": "levels", "value": {"MM": 950, "TANK": "north"}},
            {"topic": "levels", "value": {"MM": 120, "TANK": "south"}},
        ],
        "outputs": [{"topic": "HIGH", "value": {"MM": 950, "TANK": "north"}}],
        "post": {"topics": {"topics": [{"name": "levels", "valueSchema": level}]}},
    }
    declared_post = {
        **case,
        "name": "the declared schema",
        "post": {"topics": {"topics": [{"name": "levels", "valueSchema": declared}]}},
    }
    file = tmp_path / "levels.json"
    file.write_text(json.dumps({"tests": [case, declared_post]}))

    results = run_selection(select([str(file)]), session=lambda: spark).results

    assert [(r.case, r.status) for r in results] == [
        ("one message of two", Status.PASSED),
        ("the declared schema", Status.FAILED),
    ]
    assert "(its message Level compared, alone)" in results[1].problems[0]
