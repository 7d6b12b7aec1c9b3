"""Planning joins: ksqlDB's column names, key column, contexts and errors."""

from __future__ import annotations

import re

import pytest

from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.ir import join_steps as js
from qtt.plan.ir import steps as s
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

SOURCES = (
    "CREATE STREAM s (k INT KEY, v INT, w VARCHAR) WITH (kafka_topic='s', value_format='JSON');"
    "CREATE TABLE t (id INT PRIMARY KEY, v INT, x BIGINT) WITH (kafka_topic='t', value_format='JSON');"
    "CREATE TABLE u (id INT PRIMARY KEY, y VARCHAR) WITH (kafka_topic='u', value_format='JSON');"
)


def _query(sql: str) -> s.QueryPlan:
    return plan_statements(parse_statements(SOURCES + sql)).plan.queries()[-1]


def _schema(sql: str) -> str:
    plan = plan_statements(parse_statements(SOURCES + sql))
    return str(plan.sources[plan.plan.queries()[-1].sink].schema)


def _steps(query: s.QueryPlan) -> list[tuple[str, str]]:
    return [(step.type_tag, step.context) for step in s.walk_steps(query.physical_plan)]


def test_a_stream_table_join_on_the_stream_key_reads_both_sides_renamed_and_joins_them() -> None:
    query = _query("CREATE STREAM o AS SELECT s.k, s.v, t.v, w, x FROM s JOIN t ON s.k = t.id;")
    assert _steps(query) == [
        ("streamSourceV1", "KafkaTopic_Left/Source"),
        ("streamSelectV1", "PrependAliasLeft"),
        ("tableSourceV1", "KafkaTopic_Right/Source"),
        ("tableSelectV1", "PrependAliasRight"),
        ("streamTableJoinV1", "Join"),
        ("streamSelectV1", "Project"),
        ("streamSinkV2", "KsqlTopic/Sink"),
    ]
    assert query.sources == ("S", "T")
    join = query.physical_plan.source.source  # type: ignore[attr-defined]
    assert isinstance(join, js.StreamTableJoinV1) and (join.join_type, join.key_col_name) == ("INNER", "S_K")


def test_only_names_that_several_sources_have_take_their_source_as_prefix() -> None:
    schema = _schema("CREATE STREAM o AS SELECT s.k, s.v, t.v, w, x FROM s JOIN t ON s.k = t.id;")
    assert schema == "`K` INTEGER KEY, `S_V` INTEGER, `T_V` INTEGER, `W` STRING, `X` BIGINT"


def test_star_lists_the_key_then_each_side_prefixed() -> None:
    schema = _schema("CREATE STREAM o AS SELECT * FROM s LEFT JOIN t ON s.k = t.id;")
    assert schema == "`S_K` INTEGER KEY, `S_V` INTEGER, `S_W` STRING, `T_ID` INTEGER, `T_V` INTEGER, `T_X` BIGINT"


def test_a_join_on_a_stream_value_rekeys_the_stream_and_names_the_key_after_it() -> None:
    query = _query("CREATE STREAM o AS SELECT s.v, w, x FROM s JOIN t ON s.v = t.id;")
    assert ("streamSelectKeyV2", "LeftSourceKeyed") in _steps(query)
    rekey = next(x for x in s.walk_steps(query.physical_plan) if isinstance(x, s.StreamSelectKeyV2))
    assert rekey.repartition_name == "Join"  # a stream-table join's one repartition
    assert _schema("CREATE STREAM o AS SELECT s.v, w, x FROM s JOIN t ON s.v = t.id;").startswith("`S_V` INTEGER KEY")


def test_any_join_expression_in_the_projection_stands_for_the_key() -> None:
    schema = _schema("CREATE TABLE o AS SELECT u.id, x, y FROM t JOIN u ON t.id = u.id;")
    assert schema == "`U_ID` INTEGER KEY, `X` BIGINT, `Y` STRING"


def test_a_full_outer_join_has_a_synthetic_key() -> None:
    schema = _schema("CREATE TABLE o AS SELECT ROWKEY AS id, x, y FROM t FULL OUTER JOIN u ON t.id = u.id;")
    assert schema == "`ID` INTEGER KEY, `X` BIGINT, `Y` STRING"


def test_a_stream_stream_join_keeps_its_window_and_rekeys_either_side() -> None:
    query = _query(
        "CREATE STREAM s2 (k INT KEY, z INT) WITH (kafka_topic='s2', value_format='JSON');"
        "CREATE STREAM o AS SELECT s.v, w, z FROM s LEFT JOIN s2 WITHIN (1 SECOND, 2 SECONDS) ON s.v = s2.z;"
    )
    steps = _steps(query)
    assert ("streamSelectKeyV2", "LeftSourceKeyed") in steps and ("streamSelectKeyV2", "RightSourceKeyed") in steps
    names = {x.repartition_name for x in s.walk_steps(query.physical_plan) if isinstance(x, s.StreamSelectKeyV2)}
    assert names == {"Join-left", "Join-right"}
    join = next(x for x in s.walk_steps(query.physical_plan) if isinstance(x, js.StreamStreamJoinV1))
    assert (join.join_type, join.key_col_name, join.before_ms, join.after_ms) == ("LEFT", "S_V", 1000, 2000)


def test_a_grace_period_plans_the_join_with_the_spurious_result_fix() -> None:
    query = _query(
        "CREATE STREAM s2 (k INT KEY, z INT) WITH (kafka_topic='s2', value_format='JSON');"
        "CREATE STREAM o AS SELECT ROWKEY AS id, w, z FROM s FULL OUTER JOIN s2 WITHIN 3 SECONDS "
        "GRACE PERIOD 2 SECONDS "
        "ON s.k = s2.k;"
    )
    join = next(x for x in s.walk_steps(query.physical_plan) if isinstance(x, js.JoinStep))
    assert isinstance(join, js.StreamStreamJoinV2)
    assert (join.join_type, join.before_ms, join.after_ms, join.grace_ms) == ("OUTER", 3000, 3000, 2000)


def test_a_join_of_a_join_prefixes_the_inner_contexts() -> None:
    query = _query("CREATE STREAM o AS SELECT s.k, w, x, y FROM s JOIN t ON s.k = t.id LEFT JOIN u ON s.k = u.id;")
    contexts = [context for _, context in _steps(query)]
    inner = ["L_KafkaTopic_Left/Source", "L_PrependAliasLeft", "L_KafkaTopic_Right/Source", "L_PrependAliasRight"]
    assert contexts[:5] == [*inner, "L_Join"]
    assert "Join" in contexts


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "CREATE TABLE o AS SELECT t.id, w FROM t JOIN s ON t.id = s.k;",
            "Invalid join order: table-stream joins are not supported; only stream-table joins. Got T [INNER] JOIN S.",
        ),
        (
            "CREATE STREAM o AS SELECT s.k, x FROM s RIGHT JOIN t ON s.k = t.id;",
            # ksqlDB's JoinNode builds no RIGHT stream-table join
            "Invalid join type encountered: RIGHT [OUTER] JOIN",
        ),
        (
            "CREATE STREAM o AS SELECT s.k, x FROM s JOIN t ON s.v = t.v;",
            "stream-table joins require to join on the table's primary key. Got S.V = T.V.",
        ),
        (
            "CREATE TABLE o AS SELECT t.id, y FROM t JOIN u ON t.id = u.y;",
            # ksqlDB checks the right table's key before the types
            "Invalid join condition: table-table joins require to join on the primary key of the right input "
            "table. Got T.ID = U.Y.",
        ),
        (
            "CREATE STREAM o AS SELECT w, x FROM s JOIN t ON s.k = t.id;",
            "must include the join expressions S.K or T.ID in its projection (eg, SELECT S.K...).",
        ),
        (
            "CREATE STREAM o AS SELECT s.k, x FROM s JOIN t ON v = t.id;",
            "Column 'V' is ambiguous. Could be S.V or T.V.",
        ),
        ("CREATE STREAM o AS SELECT s.k FROM s JOIN s ON s.k = s.k;", "self joins are not yet supported"),
        (
            "CREATE STREAM o AS SELECT s.k, x FROM s JOIN t ON s.k = 1;",
            "Invalid comparison expression '1' in join '(S.K = 1)'.",
        ),
    ],
)
def test_join_errors_are_ksqldbs(sql: str, message: str) -> None:
    with pytest.raises(StatementError) as raised:
        _query(sql)
    assert message in str(raised.value)


def test_a_table_joined_on_a_non_key_expression_is_a_foreign_key_join_keyed_by_the_left_key() -> None:
    query = _query("CREATE TABLE o AS SELECT t.id, u.id AS uid, y FROM t LEFT JOIN u ON t.v + 1 = u.id;")
    assert _steps(query) == [
        ("tableSourceV1", "KafkaTopic_Left/Source"),
        ("tableSelectV1", "PrependAliasLeft"),
        ("tableSourceV1", "KafkaTopic_Right/Source"),
        ("tableSelectV1", "PrependAliasRight"),
        ("fkTableTableJoinV1", "Join"),
        ("tableSelectV1", "Project"),
        ("tableSinkV1", "KsqlTopic/Sink"),
    ]
    join = next(x for x in s.walk_steps(query.physical_plan) if isinstance(x, js.ForeignKeyTableTableJoinV1))
    assert (join.join_type, join.key_col_name) == ("LEFT", "T_ID")
    assert "T_V" in str(join.left_join_expression)
    schema = _schema("CREATE TABLE o AS SELECT t.id, u.id AS uid, y FROM t LEFT JOIN u ON t.v + 1 = u.id;")
    assert schema == "`T_ID` INTEGER KEY, `UID` INTEGER, `Y` STRING"
    star = _schema("CREATE TABLE o AS SELECT * FROM t JOIN u ON t.v = u.id;")
    assert star == "`T_ID` INTEGER KEY, `T_V` INTEGER, `T_X` BIGINT, `U_ID` INTEGER, `U_Y` STRING"


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "CREATE TABLE o AS SELECT t.id, y FROM t RIGHT JOIN u ON t.v = u.id;",
            "RIGHT OUTER JOIN on a foreign key is not supported",
        ),
        (
            "CREATE TABLE o AS SELECT t.id, y FROM t FULL OUTER JOIN u ON t.v = u.id;",
            "Invalid join type: full-outer join not supported for foreign-key table-table join. "
            "Got T [FULL] OUTER JOIN U.",
        ),
        (
            "CREATE TABLE o AS SELECT x, y FROM t JOIN u ON t.v = u.id;",
            "Primary key column missing in projection. For foreign-key table-table joins, the projection must "
            "include all primary key columns from the left input table (`T`). Missing column: `ID`.",
        ),
        (
            "CREATE TABLE o AS SELECT t.id, y FROM t JOIN u ON CAST(t.v AS STRING) = u.id;",
            "Invalid join condition: types don't match.",
        ),
        (
            "CREATE TABLE w (id INT PRIMARY KEY, z INT) WITH (kafka_topic='w', value_format='JSON');"
            "CREATE TABLE o AS SELECT t.id, y, z FROM t JOIN u ON t.id = u.id JOIN w ON t.v = w.id;",
            "Invalid join condition: foreign-key table-table joins are not supported as part of n-way joins. "
            "Got T.V = W.ID.",
        ),
    ],
)
def test_foreign_key_join_errors_are_ksqldbs(sql: str, message: str) -> None:
    with pytest.raises(StatementError) as raised:
        _query(sql)
    assert message in str(raised.value)


def test_a_table_with_several_key_columns_joins_by_foreign_key_and_keys_the_result_by_all_of_them() -> None:
    lines = "CREATE TABLE l (a INT PRIMARY KEY, b INT PRIMARY KEY, v INT) WITH (kafka_topic='l', format='JSON');"
    schema = _schema(lines + "CREATE TABLE o AS SELECT y, l.b, l.a FROM l JOIN u ON l.b = u.id;")
    assert schema == "`B` INTEGER KEY, `A` INTEGER KEY, `Y` STRING"
    with pytest.raises(StatementError, match=r"\(`L`\). Missing column: `A`."):
        _query(lines + "CREATE TABLE o AS SELECT l.b, y FROM l JOIN u ON l.b = u.id;")
    with pytest.raises(StatementError, match="join on the primary key of the right input table"):
        _query(lines + "CREATE TABLE o AS SELECT t.id, t.v FROM t JOIN l ON t.v = l.a;")


def test_a_where_over_a_foreign_key_join_keeps_each_keys_previous_row_itself() -> None:
    query = _query("CREATE TABLE o AS SELECT t.id, y FROM t JOIN u ON t.v = u.id WHERE x > 1;")
    where = query.physical_plan.source.source  # type: ignore[attr-defined]  # sink, projection, filter
    assert isinstance(where, s.TableFilterV3) and isinstance(where.source, js.ForeignKeyTableTableJoinV1)


def test_a_foreign_key_join_can_be_the_first_join_of_a_multi_way_join() -> None:
    query = _query(
        "CREATE TABLE w (id INT PRIMARY KEY, z INT) WITH (kafka_topic='w', value_format='JSON');"
        "CREATE TABLE o AS SELECT t.id, y, z FROM t JOIN u ON t.v = u.id JOIN w ON t.id = w.id;"
    )
    assert ("fkTableTableJoinV1", "L_Join") in _steps(query) and ("tableTableJoinV1", "Join") in _steps(query)


WINDOWED = (
    "CREATE STREAM gusts (site INT KEY, kph INT) WITH (kafka_topic='gusts', value_format='JSON', "
    "WINDOW_TYPE='SESSION');"
    "CREATE STREAM lulls (site INT KEY, kph INT) WITH (kafka_topic='lulls', value_format='JSON', "
    "WINDOW_TYPE='SESSION');"
    "CREATE STREAM hours (site INT KEY, n INT) WITH (kafka_topic='hours', value_format='JSON', "
    "WINDOW_TYPE='TUMBLING', WINDOW_SIZE='1 HOUR');"
    "CREATE STREAM days (site INT KEY, n INT) WITH (kafka_topic='days', value_format='JSON', "
    "WINDOW_TYPE='HOPPING', WINDOW_SIZE='1 DAY');"
    "CREATE STREAM calm (site INT KEY, kph INT) WITH (kafka_topic='calm', value_format='JSON');"
)


@pytest.mark.parametrize(
    ("join", "message"),
    [
        ("gusts g JOIN calm c WITHIN 1 MINUTE ON g.site = c.site", "`G` is SESSION windowed\n`C` is not windowed"),
        ("calm c JOIN gusts g WITHIN 1 MINUTE ON c.site = g.site", "`C` is not windowed\n`G` is SESSION windowed"),
        ("gusts g JOIN hours h WITHIN 1 MINUTE ON g.site = h.site", "Left source: SESSION\nRight source: TUMBLING"),
        ("gusts g JOIN lulls l WITHIN 1 MINUTE ON g.kph = l.site", "Implicit repartitioning of windowed sources"),
        # a time-windowed key of another size is another key format: a KAFKA key cannot be moved to it
        ("hours h JOIN days d WITHIN 1 MINUTE ON h.site = d.site", "Implicit repartitioning of windowed sources"),
    ],
)
def test_windowed_sources_join_only_compatible_windowed_sources_on_their_keys(join: str, message: str) -> None:
    sql = WINDOWED + f"CREATE STREAM o AS SELECT * FROM {join};"
    with pytest.raises(StatementError) as raised:
        plan_statements(parse_statements(SOURCES + sql))
    assert message in str(raised.value)


def test_a_join_of_matching_windowed_keys_keeps_the_windows_and_lists_their_bounds() -> None:
    sql = WINDOWED + "CREATE STREAM o AS SELECT * FROM gusts g JOIN lulls l WITHIN 1 MINUTE ON g.site = l.site;"
    plan = plan_statements(parse_statements(SOURCES + sql))
    sink = plan.sources[plan.plan.queries()[-1].sink]
    assert str(sink.schema).startswith("`G_SITE` INTEGER KEY, `G_WINDOWSTART` BIGINT, `G_WINDOWEND` BIGINT, `G_KPH`")
    assert sink.formats.window is not None and sink.formats.window.type == "SESSION"


def test_a_windowed_join_with_a_grace_period_is_named_as_not_yet_run() -> None:
    sql = WINDOWED + "CREATE STREAM o AS SELECT g.site, g.kph, l.kph AS lull FROM gusts g JOIN lulls l "
    with pytest.raises(UnsupportedFeatureError, match="joining windowed sources with a GRACE PERIOD"):
        plan_statements(parse_statements(SOURCES + sql + "WITHIN 1 MINUTE GRACE PERIOD 1 SECOND ON g.site = l.site;"))


def test_a_join_of_a_rekeyed_join_names_each_repartition_after_its_own_join() -> None:
    query = _query(
        "CREATE STREAM s2 (k INT KEY, z INT) WITH (kafka_topic='s2', value_format='JSON');"
        "CREATE STREAM o AS SELECT s2.k, s.v, w, z, x FROM s JOIN s2 WITHIN 1 SECOND ON s.v = s2.z "
        "JOIN t ON s2.k = t.id;"
    )
    names = {x.repartition_name for x in s.walk_steps(query.physical_plan) if isinstance(x, s.StreamSelectKeyV2)}
    assert names == {"L_Join-left", "L_Join-right", "Join"}


def test_the_key_column_itself_wins_over_an_equal_join_expression_selected_before_it() -> None:
    schema = _schema(
        "CREATE STREAM s2 (k INT KEY, z INT) WITH (kafka_topic='s2', value_format='JSON');"
        "CREATE STREAM o AS SELECT s2.*, s.k FROM s JOIN s2 WITHIN 1 SECOND ON s2.k = s.k;"
    )
    # S2_K equals the key but comes first: beside the key itself it is an ordinary value column
    assert schema == "`S_K` INTEGER KEY, `S2_K` INTEGER, `S2_Z` INTEGER"


def test_a_synthetic_key_past_taken_names_can_be_selected_by_its_name() -> None:
    schema = _schema(
        "CREATE TABLE a (rowkey INT PRIMARY KEY, rowkey_1 INT) WITH (kafka_topic='a', value_format='JSON');"
        "CREATE TABLE b (rowkey_2 INT PRIMARY KEY, v INT) WITH (kafka_topic='b', value_format='JSON');"
        "CREATE TABLE o AS SELECT rowkey_3, a.rowkey_1, v FROM a FULL OUTER JOIN b ON a.rowkey = b.rowkey_2;"
    )
    assert schema == "`ROWKEY_3` INTEGER KEY, `ROWKEY_1` INTEGER, `V` INTEGER"


def test_a_column_numbered_zero_takes_the_bare_synthetic_key_name() -> None:
    # ksqlDB's generateSyntheticJoinKey reads ROWKEY_0 (and ROWKEY_00) as number 0 of ROWKEY
    schema = _schema(
        "CREATE TABLE a (id INT PRIMARY KEY, rowkey_00 INT) WITH (kafka_topic='a', value_format='JSON');"
        "CREATE TABLE b (id INT PRIMARY KEY, v INT) WITH (kafka_topic='b', value_format='JSON');"
        "CREATE TABLE o AS SELECT * FROM a FULL OUTER JOIN b ON a.id = b.id;"
    )
    assert schema.startswith("`ROWKEY_1` INTEGER KEY, `A_ID` INTEGER, `A_ROWKEY_00` INTEGER")


def test_an_earlier_joins_synthetic_key_does_not_take_the_name_of_the_next() -> None:
    schema = _schema(
        "CREATE STREAM s2 (k INT KEY, z INT) WITH (kafka_topic='s2', value_format='JSON');"
        "CREATE STREAM s3 (k INT KEY, q INT) WITH (kafka_topic='s3', value_format='JSON');"
        "CREATE STREAM o AS SELECT ROWKEY, z, q FROM s FULL OUTER JOIN s2 WITHIN 1 SECOND ON s.k = s2.k "
        "FULL OUTER JOIN s3 WITHIN 1 SECOND ON s.k = s3.k;"
    )
    assert schema == "`ROWKEY` INTEGER KEY, `Z` INTEGER, `Q` INTEGER"


def test_star_over_a_rekeyed_full_outer_join_leaves_out_its_synthetic_key() -> None:
    schema = _schema(
        "CREATE STREAM s2 (k INT KEY, z INT) WITH (kafka_topic='s2', value_format='JSON');"
        "CREATE STREAM o AS SELECT * FROM s FULL OUTER JOIN s2 WITHIN 1 SECOND ON s.k = s2.k "
        "JOIN t ON s.k = t.id;"
    )
    assert "ROWKEY" not in schema and schema.startswith("`S_K` INTEGER KEY")


def test_group_by_over_a_stream_table_join_aggregates_the_joined_rows() -> None:
    query = _query(
        "CREATE TABLE o AS SELECT t.x, COUNT(*) AS n, SUM(s.v) AS total FROM s JOIN t ON s.k = t.id GROUP BY t.x;"
    )
    steps = [tag for tag, _ in _steps(query)]
    assert steps[steps.index("streamTableJoinV1") + 1 :] == [
        "streamGroupByV1",
        "streamAggregateV1",
        "tableSelectV1",
        "tableSinkV1",
    ]
    schema = _schema(
        "CREATE TABLE o AS SELECT t.x, COUNT(*) AS n, SUM(s.v) AS total FROM s JOIN t ON s.k = t.id GROUP BY t.x;"
    )
    assert schema == "`X` BIGINT KEY, `N` BIGINT, `TOTAL` INTEGER"


def test_group_by_over_a_table_table_join_is_a_table_aggregation() -> None:
    query = _query("CREATE TABLE o AS SELECT u.y, COUNT(*) AS n FROM t LEFT JOIN u ON t.id = u.id GROUP BY u.y;")
    assert ("tableGroupByV1", "Aggregate/GroupBy") in _steps(query)
    assert ("tableAggregateV2", "Aggregate/Aggregate") in _steps(query)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "CREATE TABLE o AS SELECT t.x, COUNT(*) AS n FROM t JOIN u ON t.id = u.id "
            "WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY t.x;",
            "Windowing not supported for table aggregations.",
        ),
        (
            "CREATE TABLE o AS SELECT t.x, COUNT(*) AS n, WINDOWSTART AS ws FROM s JOIN t ON s.k = t.id "
            "WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY t.x;",
            "SELECT column 'WINDOWSTART' cannot be resolved.",
        ),
        (
            "CREATE STREAM o AS SELECT s.k, w FROM s JOIN t ON s.k = t.id WINDOW TUMBLING (SIZE 1 MINUTE);",
            "WINDOW clause requires a GROUP BY clause",
        ),
    ],
)
def test_aggregating_a_join_keeps_ksqldbs_rules(sql: str, message: str) -> None:
    with pytest.raises(StatementError, match=re.escape(message)):
        _query(sql)


def test_partition_by_over_a_join_rekeys_the_joined_rows() -> None:
    sql = "CREATE STREAM o AS SELECT t.x, s.v FROM s JOIN t ON s.k = t.id PARTITION BY t.x;"
    steps = [tag for tag, _ in _steps(_query(sql))]
    assert steps[-4:] == ["streamTableJoinV1", "streamSelectKeyV1", "streamSelectV1", "streamSinkV2"]
    assert _schema(sql) == "`X` BIGINT KEY, `S_V` INTEGER"


def test_star_after_partition_by_over_a_join_lists_every_column_of_the_joined_rows() -> None:
    schema = _schema("CREATE STREAM o AS SELECT * FROM s JOIN t ON s.k = t.id PARTITION BY s.w;")
    # each side's value columns, its pseudo columns and its key copy, as ksqlDB's join schema holds them
    assert schema.startswith("`S_W` STRING KEY, `S_V` INTEGER, `S_ROWTIME` BIGINT, ")
    assert "`S_K` INTEGER" in schema and "`T_ID` INTEGER" in schema and "`T_ROWOFFSET` BIGINT" in schema


def test_partition_by_over_a_join_must_select_its_expression() -> None:
    with pytest.raises(StatementError, match="Key missing from projection"):
        _query("CREATE STREAM o AS SELECT s.k, s.v FROM s JOIN t ON s.k = t.id PARTITION BY t.x;")


def test_an_earlier_joins_criteria_make_its_columns_stand_for_a_later_key() -> None:
    # s2.z equals s.v through the first join, and the second join is on s2.z: s.v may be the key
    schema = _schema(
        "CREATE STREAM s2 (k INT KEY, z INT) WITH (kafka_topic='s2', value_format='JSON');"
        "CREATE STREAM o AS SELECT s.v, w, x FROM s JOIN s2 WITHIN 1 SECOND ON s.v = s2.z JOIN t ON s2.z = t.id;"
    )
    assert schema.startswith("`S_V` INTEGER KEY")


def test_a_key_only_an_earlier_join_makes_a_column_is_not_synthetic() -> None:
    # neither criterion of the second join is a column, but ABS(s2.k) equals s.k through the first
    schema = _schema(
        "CREATE STREAM s2 (k INT KEY, z INT) WITH (kafka_topic='s2', value_format='JSON');"
        "CREATE STREAM s3 (k INT KEY, q INT) WITH (kafka_topic='s3', value_format='JSON');"
        "CREATE STREAM o AS SELECT s.k, z, q FROM s JOIN s2 WITHIN 1 SECOND ON s.k = ABS(s2.k) "
        "JOIN s3 WITHIN 1 SECOND ON ABS(s2.k) = ABS(s3.k);"
    )
    assert schema == "`S_K` INTEGER KEY, `Z` INTEGER, `Q` INTEGER"


def test_partition_counts_come_from_the_declared_topics_then_partitions_then_four() -> None:
    join = "CREATE STREAM o AS SELECT s.k, s.v, t.x FROM s JOIN t ON s.k = t.id;"
    plan_statements(parse_statements(SOURCES + join), declared_partitions={"s": 4})
    with pytest.raises(StatementError, match="`S` partitions = 2; `T` partitions = 4"):
        plan_statements(parse_statements(SOURCES + join), declared_partitions={"s": 2})
    declared = SOURCES.replace("kafka_topic='t'", "kafka_topic='t', partitions=2")
    plan_statements(parse_statements(declared + join), declared_partitions={"s": 2})
    # ksqlDB's runner creates a topic of the case's topics section before the CREATE naming it
    with pytest.raises(StatementError, match="`S` partitions = 2; `T` partitions = 5"):
        plan_statements(parse_statements(declared + join), declared_partitions={"s": 2, "t": 5})
