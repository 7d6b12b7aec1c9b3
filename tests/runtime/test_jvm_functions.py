"""Spark's SQL functions are looked up in the JVM once, and still called every time."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from qtt.runtime.spark import jvm_functions

pytestmark = pytest.mark.spark


def test_a_function_is_looked_up_once_and_called_every_time(spark) -> None:  # type: ignore[no-untyped-def]
    import pyspark.sql.functions.builtin as builtin

    assert builtin._get_jvm_function is jvm_functions._memoized  # installed with the session
    sc = spark.sparkContext
    first = builtin._get_jvm_function("lit", sc)
    assert builtin._get_jvm_function("lit", sc) is first
    assert spark.range(1).select(F.lit(7).alias("a"), F.lit("x").alias("b")).collect()[0] == (7, "x")


@pytest.mark.parametrize("size", [0, 1, 10, 11, 25])
def test_a_list_of_columns_reaches_the_jvm_whole_and_in_order(spark, size: int) -> None:  # type: ignore[no-untyped-def]
    import pyspark.sql.classic.column as classic_column

    names = [f"c{i}" for i in range(size)]
    seq = classic_column._to_seq(spark.sparkContext, names, classic_column._to_java_column)
    assert [str(seq.apply(i)) for i in range(seq.size())] == names
    as_list = classic_column._to_list(spark.sparkContext, names)
    assert [as_list.apply(i) for i in range(as_list.size())] == names


def test_a_list_holding_none_takes_pysparks_own_road(spark) -> None:  # type: ignore[no-untyped-def]
    import pyspark.sql.classic.column as classic_column

    seq = classic_column._to_seq(spark.sparkContext, ["a", None, "b"])
    assert [seq.apply(i) for i in range(seq.size())] == ["a", None, "b"]


def test_a_short_list_costs_two_round_trips(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pyspark.sql.classic.column as classic_column

    sc = spark.sparkContext
    classic_column._to_seq(sc, ["warm"])  # the lookups, once per JVM
    client = sc._gateway._gateway_client
    sent: list[str] = []
    send = client.send_command
    monkeypatch.setattr(client, "send_command", lambda command, *a, **k: sent.append(command) or send(command, *a, **k))
    classic_column._to_seq(sc, [f"c{i}" for i in range(jvm_functions.LIST_OF_MOST)])
    # py4j's finalizers tell the JVM to drop objects Python let go ("m\nd\n...") whenever they
    # run: housekeeping on the same connection, not round trips of this call
    calls = [command for command in sent if not command.startswith("m\nd\n")]
    assert len(calls) == 2


def test_dataframe_calls_take_the_short_road(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.range(3).select(*[(F.col("id") + i).alias(f"p{i}") for i in range(12)])
    assert df.columns == [f"p{i}" for i in range(12)]
    assert df.orderBy("p0").collect()[2] == tuple(2 + i for i in range(12))


def test_a_serde_udf_is_made_once_for_equal_formats_and_schemas(spark) -> None:  # type: ignore[no-untyped-def]
    from qtt.plan.ir.schema import Column as SchemaColumn
    from qtt.plan.ir.steps import FormatInfo
    from qtt.runtime.build import serde_udfs
    from qtt.sqltypes import INTEGER

    columns = (SchemaColumn("N", INTEGER),)
    one = serde_udfs._encode_udf(FormatInfo(format="JSON"), (), columns, False, "t", None)
    assert serde_udfs._encode_udf(FormatInfo(format="JSON"), (), columns, False, "t", None) is one
    assert serde_udfs._encode_udf(FormatInfo(format="JSON"), (), columns, False, "other", None) is not one
    row = spark.range(1).select(F.struct(F.lit(5).alias("N")).alias("row"))
    encoded = serde_udfs.encode(FormatInfo(format="JSON"), (), columns, is_key=False, row=F.col("row"), topic="t")
    assert row.select(encoded).collect()[0][0] == b'{"N":5}'


@pytest.mark.parametrize(
    ("format_name", "scoped"),
    # DELIMITED names its topic in its column-count message
    [("JSON", False), ("DELIMITED", True), ("KAFKA", False), ("AVRO", True), ("PROTOBUF", True), ("JSON_SR", True)],
)
def test_a_serde_udf_names_its_topic_only_for_a_format_that_reads_it(format_name: str, scoped: bool) -> None:
    from qtt.plan.ir.steps import FormatInfo
    from qtt.runtime.build import serde_udfs
    from qtt.serde.registry.schema_registry import RegistrySnapshot

    registry = RegistrySnapshot()
    json_key = FormatInfo(format="JSON")
    scope = serde_udfs.topic_scope("orders", registry, json_key, FormatInfo(format=format_name))
    assert scope == (("orders", registry) if scoped else ("", None))
