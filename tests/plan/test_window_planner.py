"""Planning WINDOW clauses: milliseconds, ksqlDB's defaults, Kafka Streams' limits, window bounds."""

from __future__ import annotations

import json

import pytest

from qtt.errors import StatementError
from qtt.plan.ir import codec
from qtt.plan.ir import steps as s
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

STREAM = "CREATE STREAM r (k VARCHAR KEY, v INT) WITH (kafka_topic='r', value_format='JSON');"
TABLE = "CREATE TABLE t (k VARCHAR PRIMARY KEY, v INT) WITH (kafka_topic='t', value_format='JSON');"


def _plan(query: str) -> s.Plan:
    return plan_statements(parse_statements(STREAM + TABLE + query)).plan


def _aggregate(plan: s.Plan) -> s.StreamWindowedAggregateV1:
    step = plan.queries()[-1].physical_plan
    while not isinstance(step, s.StreamWindowedAggregateV1):
        step = step.source  # type: ignore[attr-defined]
    return step


def test_windows_resolve_to_milliseconds_with_the_legacy_default_grace() -> None:
    tumbling = _aggregate(
        _plan("CREATE TABLE o AS SELECT k, COUNT(*) AS n FROM r WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY k;")
    )
    assert tumbling.window == s.WindowExpression(
        type="TUMBLING", size_ms=60_000, advance_ms=60_000, grace_ms=86_340_000, retention_ms=86_400_000
    )
    hopping = _aggregate(
        _plan(
            "CREATE TABLE o AS SELECT k, COUNT(*) AS n FROM r "
            "WINDOW HOPPING (SIZE 2 HOURS, ADVANCE BY 30 MINUTES, RETENTION 3 DAYS, GRACE PERIOD 0 SECONDS) GROUP BY k;"
        )
    )
    assert hopping.window == s.WindowExpression(
        type="HOPPING", size_ms=7_200_000, advance_ms=1_800_000, grace_ms=0, retention_ms=259_200_000
    )
    session = _aggregate(_plan("CREATE TABLE o AS SELECT k, COUNT(*) AS n FROM r WINDOW SESSION (2 DAYS) GROUP BY k;"))
    assert session.window.grace_ms == 0 and session.window.advance_ms == 0  # the gap is longer than a day


def test_the_sink_and_the_new_table_carry_the_window_in_their_key_format() -> None:
    plan = _plan(
        "CREATE TABLE o AS SELECT k, COUNT(*) AS n FROM r "
        "WINDOW HOPPING (SIZE 10 SECONDS, ADVANCE BY 5 SECONDS) GROUP BY k;"
    )
    sink = plan.queries()[-1].physical_plan
    assert isinstance(sink, s.TableSinkV1)
    assert sink.formats.window == s.WindowInfo(type="HOPPING", size_ms=10_000)
    assert json.loads(codec.dumps(plan))["statements"][-1]["ddlCommand"]["formats"]["window"] == {
        "type": "HOPPING",
        "sizeMs": 10_000,
    }
    unwindowed = codec.dumps(_plan("CREATE TABLE p AS SELECT k, COUNT(*) AS n FROM r GROUP BY k;"))
    assert '"window"' not in unwindowed  # plans without windows keep the shape they always had


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "SELECT k, COUNT(*) AS n FROM r WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY k, WINDOWEND",
            "Window bounds column WINDOWEND",
        ),
        (
            "SELECT k, COUNT(*) AS n FROM r WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY k HAVING WINDOWSTART > 0",
            "Window bounds column WINDOWSTART",
        ),
        (
            "SELECT k, MIN(WINDOWSTART) AS m FROM r WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY k",
            "Window bounds column WINDOWSTART",
        ),
        (
            "SELECT k, COUNT(*) AS n FROM r WINDOW HOPPING (SIZE 1 SECOND, ADVANCE BY 2 SECONDS) GROUP BY k",
            "advancement interval",
        ),
        (
            "SELECT k, COUNT(*) AS n FROM r WINDOW TUMBLING (SIZE 0 SECONDS) GROUP BY k",
            "Size must be positive",
        ),
        (
            "SELECT k, COUNT(*) AS n FROM t WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY k",
            "Windowing not supported for table aggregations.",
        ),
        (
            "SELECT k, COUNT(*) AS n FROM r GROUP BY k EMIT FINAL",
            "EMIT FINAL is only supported for windowed aggregations.",
        ),
    ],
)
def test_ksqldb_refuses_these_windowed_queries(query: str, message: str) -> None:
    with pytest.raises(StatementError, match=message):
        _plan(f"CREATE TABLE o AS {query};")


def test_window_bounds_outside_a_windowed_select_are_unknown_columns() -> None:
    with pytest.raises(StatementError, match="SELECT column 'WINDOWSTART' cannot be resolved"):
        _plan("CREATE TABLE o AS SELECT k, WINDOWSTART AS w, COUNT(*) AS n FROM r GROUP BY k;")


def test_emit_final_closes_windows_at_their_end_unless_a_grace_period_is_named() -> None:
    final = _aggregate(
        _plan("CREATE TABLE o AS SELECT k, COUNT(*) AS n FROM r WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY k EMIT FINAL;")
    )
    assert final.window.emit_final and final.window.grace_ms == 0 and final.window.retention_ms == 1000
    assert final.internal_formats.key_format.format == "KAFKA" and final.internal_formats.window is None


def test_having_over_sessions_filters_the_session_aggregate() -> None:
    plan = _plan(
        "CREATE TABLE o AS SELECT k, COUNT(*) AS n FROM r WINDOW SESSION (1 SECOND) GROUP BY k HAVING COUNT(*) > 1;"
    )
    having = plan.queries()[-1].physical_plan
    while not isinstance(having, s.TableFilterV2):
        having = having.source  # type: ignore[attr-defined]
    assert isinstance(having.source, s.StreamWindowedAggregateV1) and having.source.window.type == "SESSION"


def test_aggregating_a_windowed_source_groups_its_rows_again_without_their_windows() -> None:
    hourly = (
        "CREATE STREAM h (k VARCHAR KEY, v INT) "
        "WITH (kafka_topic='h', value_format='JSON', WINDOW_TYPE='TUMBLING', WINDOW_SIZE='1 HOUR');"
    )
    plan = _plan(hourly + "CREATE TABLE o AS SELECT k, SUM(v) AS total FROM h GROUP BY k;")
    sink = plan.queries()[-1].physical_plan
    assert isinstance(sink, s.TableSinkV1) and sink.formats.window is None
    daily = _aggregate(
        _plan(hourly + "CREATE TABLE o AS SELECT k, SUM(v) AS total FROM h WINDOW TUMBLING (SIZE 1 DAY) GROUP BY k;")
    )
    assert daily.window.size_ms == 86_400_000 and daily.internal_formats.window is None


@pytest.mark.parametrize("columns", ["(v INT)", "(v INT, w VARCHAR)"])
def test_a_windowed_stream_without_key_columns_is_refused(columns: str) -> None:
    statement = f"CREATE STREAM s {columns} WITH (kafka_topic='s', value_format='JSON', window_type='SESSION');"
    with pytest.raises(StatementError) as raised:
        plan_statements(parse_statements(statement))
    assert raised.value.message == "Windowed sources require a key column."


@pytest.mark.parametrize(
    ("group_by", "key_format"),
    [
        ("k", "KAFKA"),  # the source's key: no repartition, the source's format
        ("CAST(v AS STRING)", "KAFKA"),  # one column KAFKA holds
        ("k, v", "JSON"),  # several columns: KAFKA cannot hold them
        ("ARRAY[v]", "JSON"),  # a type KAFKA lacks
    ],
)
def test_a_windowed_aggregates_store_key_format_is_ksqldbs_sanitized_one(group_by: str, key_format: str) -> None:
    # ksqlDB's SchemaKStream.groupBy and SerdeFeaturesFactory.sanitizeKeyFormat; EMIT FINAL orders by these bytes
    query = (
        f"CREATE TABLE o WITH (KEY_FORMAT='JSON') AS SELECT {group_by}, COUNT(*) AS n FROM r "
        f"WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY {group_by};"
    )
    assert _aggregate(_plan(query)).internal_formats.key_format.format == key_format
