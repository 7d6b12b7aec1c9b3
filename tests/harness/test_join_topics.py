"""The internal topics ksqlDB's topology makes for a join, as a case's post-conditions name them."""

from __future__ import annotations

import json

from qtt.harness.cases.model import PostConditions, PostTopic, PostTopics
from qtt.harness.replay.join_topics import JoinTopic, join_topics
from qtt.harness.replay.post import check, check_schemas
from qtt.harness.replay.runner import topic_table
from qtt.plan.statements import PlannedCase, plan_statements
from qtt.sql import parse_statements

PREFIX = "_confluent-ksql-some.ksql.service.idquery_"


def planned(statements: str, config: dict[str, object] | None = None) -> PlannedCase:
    return plan_statements(parse_statements(statements), config or {})


def names(case: PlannedCase, query: str = "CSAS_OUT_0") -> dict[str, JoinTopic]:
    found = {topic.name.removeprefix(f"{PREFIX}{query}-"): topic for topic in join_topics(case.plan)}
    assert all(topic.name.startswith(PREFIX) for topic in found.values())
    return found


def test_a_join_of_co_keyed_streams_has_only_its_two_window_stores() -> None:
    case = planned(
        """
        CREATE STREAM ORDERS (ID INT KEY, QTY INT) WITH (kafka_topic='orders', value_format='JSON');
        CREATE STREAM SHIPS (ID INT KEY, PORT STRING) WITH (kafka_topic='ships', value_format='JSON');
        CREATE STREAM OUT AS SELECT O.ID, QTY, PORT FROM ORDERS O JOIN SHIPS S WITHIN 5 SECONDS ON O.ID = S.ID;
        """
    )
    # sources take 0-2 and 3-5, the windowed processors 6 and 7
    assert sorted(names(case)) == [
        "KSTREAM-JOINOTHER-0000000009-store-changelog",
        "KSTREAM-JOINTHIS-0000000008-store-changelog",
    ]


def test_a_side_in_another_key_format_is_repartitioned_into_the_left_ones() -> None:
    case = planned(
        """
        CREATE STREAM ORDERS (ID INT KEY, QTY INT)
          WITH (kafka_topic='orders', key_format='DELIMITED', value_format='JSON');
        CREATE STREAM SHIPS (ID INT KEY, PORT STRING)
          WITH (kafka_topic='ships', key_format='KAFKA', value_format='AVRO');
        CREATE STREAM OUT AS SELECT O.ID, QTY, PORT FROM ORDERS O LEFT JOIN SHIPS S WITHIN 5 SECONDS ON O.ID = S.ID;
        """
    )
    found = names(case)
    assert sorted(found) == [
        "Join-right-repartition",
        "KSTREAM-JOINTHIS-0000000012-store-changelog",
        "KSTREAM-OUTEROTHER-0000000013-store-changelog",
    ]
    repartition = found["Join-right-repartition"].formats
    assert (repartition.key_format.format, repartition.value_format.format) == ("DELIMITED", "AVRO")
    assert found["KSTREAM-JOINTHIS-0000000012-store-changelog"].formats.value_format.format == "JSON"


def test_a_schema_registry_key_format_repartitions_both_sides_and_has_a_key_schema() -> None:
    case = planned(
        """
        CREATE STREAM ORDERS (ID INT KEY, QTY INT) WITH (kafka_topic='orders', format='AVRO');
        CREATE STREAM SHIPS (ID INT KEY, PORT STRING) WITH (kafka_topic='ships', format='AVRO');
        CREATE STREAM OUT AS SELECT ROWKEY, QTY, PORT
          FROM ORDERS O FULL OUTER JOIN SHIPS S WITHIN 5 SECONDS ON O.ID = S.ID;
        """
    )
    found = names(case)
    assert sorted(found) == [
        "Join-left-repartition",
        "Join-right-repartition",
        "KSTREAM-OUTEROTHER-0000000017-store-changelog",
        "KSTREAM-OUTERTHIS-0000000016-store-changelog",
    ]
    schema = found["Join-left-repartition"].key_schema()
    assert schema is not None and schema[0] == "AVRO"
    assert json.loads(schema[1]) in (["null", "int"], "int")


def test_a_table_side_in_another_key_format_is_re_keyed_and_materialized_again() -> None:
    case = planned(
        """
        CREATE STREAM CLICKS (USER_ID STRING KEY, URL STRING)
          WITH (kafka_topic='clicks', key_format='KAFKA', value_format='JSON');
        CREATE TABLE USERS (USER_ID STRING PRIMARY KEY, NAME STRING)
          WITH (kafka_topic='users', key_format='JSON', value_format='JSON');
        CREATE STREAM OUT AS SELECT C.USER_ID, URL, NAME FROM CLICKS C JOIN USERS U ON C.USER_ID = U.USER_ID;
        """
    )
    assert sorted(names(case)) == [
        "RightSourceKeyed-Materialize-changelog",
        "RightSourceKeyed-SelectKey-repartition",
    ]


def test_a_table_joined_on_its_key_is_materialized_from_its_topic() -> None:
    case = planned(
        """
        CREATE STREAM CLICKS (USER_ID STRING KEY, URL STRING) WITH (kafka_topic='clicks', value_format='JSON');
        CREATE TABLE USERS (USER_ID STRING PRIMARY KEY, NAME STRING) WITH (kafka_topic='users', value_format='JSON');
        CREATE STREAM OUT AS SELECT C.USER_ID, URL, NAME FROM CLICKS C JOIN USERS U ON C.USER_ID = U.USER_ID;
        """
    )
    assert sorted(names(case)) == ["KafkaTopic_Right-Reduce-changelog"]


def test_a_stream_joined_on_a_value_column_is_repartitioned_under_the_join() -> None:
    case = planned(
        """
        CREATE STREAM CLICKS (ID INT KEY, USER_ID STRING, URL STRING) WITH (kafka_topic='clicks', value_format='JSON');
        CREATE TABLE USERS (USER_ID STRING PRIMARY KEY, NAME STRING) WITH (kafka_topic='users', value_format='JSON');
        CREATE STREAM OUT AS SELECT C.USER_ID, URL, NAME FROM CLICKS C JOIN USERS U ON C.USER_ID = U.USER_ID;
        """
    )
    assert sorted(names(case)) == ["Join-repartition", "KafkaTopic_Right-Reduce-changelog"]


def test_three_streams_number_the_outer_join_after_the_inner_one() -> None:
    case = planned(
        """
        CREATE STREAM A (ID INT KEY, X INT) WITH (kafka_topic='a', value_format='JSON');
        CREATE STREAM B (ID INT KEY, Y INT) WITH (kafka_topic='b', value_format='JSON');
        CREATE STREAM C (ID INT KEY, Z INT) WITH (kafka_topic='c', value_format='JSON');
        CREATE STREAM OUT AS SELECT A.ID, X, Y, Z FROM A
          JOIN B WITHIN 1 SECOND ON A.ID = B.ID
          LEFT JOIN C WITHIN 1 SECOND ON A.ID = C.ID;
        """
    )
    # the inner join: 0-5 sources, 8 and 9 its stores, 10 its merge; C takes 11-13
    assert sorted(names(case)) == [
        "KSTREAM-JOINOTHER-0000000009-store-changelog",
        "KSTREAM-JOINTHIS-0000000008-store-changelog",
        "KSTREAM-JOINTHIS-0000000016-store-changelog",
        "KSTREAM-OUTEROTHER-0000000017-store-changelog",
    ]


def test_keyless_streams_take_the_configured_default_key_format() -> None:
    case = planned(
        """
        CREATE STREAM A (K STRING, X INT) WITH (kafka_topic='a', value_format='JSON');
        CREATE STREAM B (K STRING, Y INT) WITH (kafka_topic='b', value_format='JSON');
        CREATE STREAM OUT AS SELECT A.K, X, Y FROM A JOIN B WITHIN 1 SECOND ON A.K = B.K;
        """,
        {"ksql.persistence.default.format.key": "DELIMITED"},
    )
    found = names(case)
    assert found["Join-left-repartition"].formats.key_format.format == "DELIMITED"


def test_a_foreign_key_join_names_none_of_them() -> None:
    case = planned(
        """
        CREATE TABLE ORDERS (ID INT PRIMARY KEY, USER_ID STRING) WITH (kafka_topic='orders', value_format='JSON');
        CREATE TABLE USERS (USER_ID STRING PRIMARY KEY, NAME STRING) WITH (kafka_topic='users', value_format='JSON');
        CREATE TABLE OUT AS SELECT O.ID, NAME FROM ORDERS O JOIN USERS U ON O.USER_ID = U.USER_ID;
        """
    )
    assert join_topics(case.plan) == []


def test_post_conditions_see_the_join_topics_and_their_key_schemas() -> None:
    case = planned(
        """
        CREATE STREAM ORDERS (ID INT KEY, QTY INT)
          WITH (kafka_topic='orders', key_format='JSON_SR', value_format='JSON');
        CREATE STREAM SHIPS (ID INT KEY, PORT STRING)
          WITH (kafka_topic='ships', key_format='JSON_SR', value_format='JSON');
        CREATE STREAM OUT AS SELECT O.ID, QTY, PORT FROM ORDERS O JOIN SHIPS S WITHIN 5 SECONDS ON O.ID = S.ID;
        """
    )
    internal = join_topics(case.plan)
    name = f"{PREFIX}CSAS_OUT_0-Join-right-repartition"
    key_schema = {"oneOf": [{"type": "null"}, {"type": "integer"}]}
    wanted = PostConditions(
        topics=PostTopics(topics=(PostTopic(name=name, key_format="JSON_SR", key_schema=key_schema),))
    )
    assert check(wanted, case.sources, topic_table(case, internal)) == []
    assert check_schemas(wanted, (), internal) == []
    wrong = PostConditions(topics=PostTopics(topics=(PostTopic(name=name, key_schema={"type": "string"}),)))
    assert "expected" in check_schemas(wrong, (), internal)[0]
    assert check(wanted, case.sources, topic_table(case)) != []  # without them, the topic is missing
