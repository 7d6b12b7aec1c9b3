"""``SELECT *`` over a source with header columns: they are value columns of the result."""

from __future__ import annotations

from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

HEADERS = "ARRAY<STRUCT<KEY STRING, VALUE BYTES>>"


def sink_schema(source: str, query: str) -> str:
    planned = plan_statements(parse_statements(f"{source}\n{query}"), {})
    return str(planned.sources["OUT"].schema)


def test_header_columns_follow_the_value_columns_in_declaration_order() -> None:
    source = (
        "CREATE STREAM S (K STRING KEY, B BYTES HEADER('b'), V INT, A BYTES HEADER('a'), W STRING) "
        "WITH (kafka_topic='s', value_format='JSON');"
    )
    schema = sink_schema(source, "CREATE STREAM OUT AS SELECT * FROM S;")
    assert schema == "`K` STRING KEY, `V` INTEGER, `W` STRING, `B` BYTES, `A` BYTES"


def test_a_headers_column_and_a_table() -> None:
    source = (
        f"CREATE TABLE T (K STRING PRIMARY KEY, H {HEADERS} HEADERS, V BIGINT) "
        "WITH (kafka_topic='t', value_format='JSON');"
    )
    schema = sink_schema(source, "CREATE TABLE OUT AS SELECT * FROM T;")
    assert schema == "`K` STRING KEY, `V` BIGINT, `H` ARRAY<STRUCT<`KEY` STRING, `VALUE` BYTES>>"


def test_star_with_partition_by_keeps_the_header_columns() -> None:
    source = "CREATE STREAM S (K STRING KEY, V INT, A BYTES HEADER('a')) WITH (kafka_topic='s', value_format='JSON');"
    schema = sink_schema(source, "CREATE STREAM OUT AS SELECT * FROM S PARTITION BY V;")
    assert schema == "`V` INTEGER KEY, `A` BYTES, `K` STRING"
