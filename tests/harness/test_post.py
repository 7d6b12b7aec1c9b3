"""Post-conditions: the sources and topics a case's statements leave behind."""

from __future__ import annotations

from typing import Any

import pytest

from qtt.harness.cases.model import PostConditions, PostSource, PostTopic, PostTopics
from qtt.harness.replay.post import check, ksql_features
from qtt.harness.replay.runner import topic_table
from qtt.plan.statements import PlannedCase, plan_statements
from qtt.sql import parse_statements

STATEMENTS = """
CREATE STREAM INPUT (ID INT KEY, V STRING) WITH (kafka_topic='input', format='JSON', partitions=3);
CREATE STREAM OUTPUT WITH (value_format='DELIMITED', value_delimiter='|', WRAP_SINGLE_VALUE=false)
  AS SELECT * FROM INPUT;
"""


@pytest.fixture(scope="module")
def planned() -> PlannedCase:
    return plan_statements(parse_statements(STATEMENTS), {})


def problems(planned: PlannedCase, **post: Any) -> list[str]:
    return check(PostConditions(**post), planned.sources, topic_table(planned))


def test_matching_conditions_hold(planned: PlannedCase) -> None:
    source = PostSource(
        name="OUTPUT",
        type="stream",
        schema="ID INT KEY, V STRING",
        key_format={"format": "JSON"},
        value_format="DELIMITED",
        key_features=("UNWRAP_SINGLES",),
        value_features=("UNWRAP_SINGLES",),
        is_source=False,
    )
    topic = PostTopic(name="OUTPUT", key_format="JSON", value_format={"format": "DELIMITED"}, partitions=3)
    assert problems(planned, sources=(source,), topics=PostTopics(topics=(topic,))) == []


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        (PostSource(name="MISSING"), "source 'MISSING' does not exist; sources: INPUT, OUTPUT"),
        (PostSource(name="OUTPUT", type="table"), "expected type TABLE, got STREAM"),
        (
            PostSource(name="OUTPUT", schema="ID INT KEY, V INT"),
            "expected schema `ID` INTEGER KEY, `V` INTEGER",
        ),
        (PostSource(name="OUTPUT", key_format="KAFKA"), "expected key format KAFKA, got JSON"),
        (
            PostSource(name="OUTPUT", key_format={"format": "JSON", "windowType": "SESSION"}),
            "SESSION-windowed",
        ),
        (
            PostSource(
                name="OUTPUT",
                value_format={"format": "DELIMITED", "properties": {"delimiter": ","}},
            ),
            "expected value format properties {'delimiter': ','}, got {'delimiter': '|'}",
        ),
        (
            PostSource(name="OUTPUT", value_features=()),
            "expected value features [], got ['UNWRAP_SINGLES']",
        ),
        (PostSource(name="INPUT", is_source=True), "expected isSource True, got False"),
    ],
)
def test_unmet_source_conditions_say_what_differs(planned: PlannedCase, source: PostSource, problem: str) -> None:
    found = problems(planned, sources=(source,))
    assert len(found) == 1
    assert problem in found[0]


def test_topic_conditions(planned: PlannedCase) -> None:
    assert problems(planned, topics=PostTopics(topics=(PostTopic(name="OUTPUT", partitions=1),))) == [
        "topic OUTPUT: expected 1 partitions, got 3"
    ]
    assert "topic 'nope' does not exist" in problems(planned, topics=PostTopics(topics=(PostTopic(name="nope"),)))[0]


def test_blacklist_matches_anywhere_in_a_topic_name(planned: PlannedCase) -> None:
    # ksqlDB's PostConditions filters the topics with Pattern.asPredicate(): Matcher.find()
    assert problems(planned, topics=PostTopics(blacklist=".*-repartition")) == []
    assert problems(planned, topics=PostTopics(blacklist="^nput")) == []
    assert problems(planned, topics=PostTopics(blacklist="npu")) == [
        "topic 'input' exists but matches the blacklist 'npu'"
    ]
    assert problems(planned, topics=PostTopics(blacklist="inp.*")) == [
        "topic 'input' exists but matches the blacklist 'inp.*'"
    ]


def test_key_features_are_reported_for_single_json_keys(planned: PlannedCase) -> None:
    source = planned.sources["INPUT"]
    assert ksql_features(source.formats, source.schema, key=True) == ["UNWRAP_SINGLES"]
    assert ksql_features(source.formats, source.schema, key=False) == []


def test_a_single_protobuf_key_reports_no_key_feature() -> None:
    # ksqlDB writes a PROTOBUF key as a message even of one field: no UNWRAP_SINGLES
    planned = plan_statements(
        parse_statements(
            "CREATE STREAM P (ID INT KEY, V STRING) WITH (kafka_topic='p', key_format='PROTOBUF', value_format='JSON');"
            "CREATE STREAM A (ID INT KEY, V STRING) WITH (kafka_topic='a', key_format='AVRO', value_format='JSON');"
        ),
        {},
    )
    protobuf, avro = planned.sources["P"], planned.sources["A"]
    assert ksql_features(protobuf.formats, protobuf.schema, key=True) == []
    assert ksql_features(avro.formats, avro.schema, key=True) == ["UNWRAP_SINGLES"]


def test_format_properties_are_checked_one_by_one() -> None:
    # a PROTOBUF sink inherits its source's full schema name: a condition naming only
    # unwrapPrimitives still holds (ksqlDB's runner does not compare properties at all)
    planned = plan_statements(
        parse_statements(
            "CREATE STREAM S (K INT KEY, V STRING) WITH (kafka_topic='s', format='PROTOBUF',"
            " KEY_SCHEMA_FULL_NAME='SensorKey');"
            "CREATE STREAM T AS SELECT * FROM S;"
        ),
        {},
    )
    holds = PostSource(name="T", key_format={"format": "PROTOBUF", "properties": {"unwrapPrimitives": "true"}})
    assert problems(planned, sources=(holds,)) == []
    differs = PostSource(name="T", key_format={"format": "PROTOBUF", "properties": {"fullSchemaName": "Other"}})
    assert problems(planned, sources=(differs,)) == [
        "source T: expected key format properties {'fullSchemaName': 'Other'},"
        " got {'fullSchemaName': 'SensorKey', 'unwrapPrimitives': 'true'}"
    ]
