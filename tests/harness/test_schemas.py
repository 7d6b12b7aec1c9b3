"""Which schemas a case's ``topics`` register: ksqlDB's older ``schema`` field and JSON topics."""

from __future__ import annotations

from qtt.harness.cases.model import TopicSpec
from qtt.harness.replay.schemas import registry_for_case, topic_schemas
from qtt.plan.ir import steps as s

SCHEMA = {"type": "object", "properties": {"c1": {"type": "integer"}}}


def test_the_older_schema_field_is_the_value_schema() -> None:
    topic = TopicSpec(name="input", format="JSON", schema=SCHEMA)
    assert topic_schemas([topic])[("input", False)].document == SCHEMA


def test_a_json_topics_schema_is_registered_as_a_json_schema() -> None:
    topic = TopicSpec(name="input", format="JSON", schema=SCHEMA)
    registry = registry_for_case(s.Plan(), [topic])
    assert registry is not None
    found = registry.latest("input-value")
    assert found is not None
    assert (found.schema_type, found.origin) == ("JSON", "case")


def test_inference_sees_the_ids_the_embedded_registry_gives_case_schemas() -> None:
    from qtt.harness.cases.model import TopicSpec
    from qtt.harness.replay.schemas import topic_schemas

    topics = [
        TopicSpec(name="a", key_schema={"type": "string"}, value_schema={"type": "int"}),
        TopicSpec(name="b", value_schema={"type": "long"}, value_schema_id=40),
        TopicSpec(name="c", value_schema={"type": "double"}),
    ]
    ids = {key: schema.schema_id for key, schema in topic_schemas(topics).items()}
    assert ids == {("a", True): 1, ("a", False): 2, ("b", False): 40, ("c", False): 41}
