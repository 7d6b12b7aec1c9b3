"""The statement planner: DDL, C*AS, INSERT INTO, key rules, PARTITION BY and formats."""

from __future__ import annotations

import pytest

from qtt.errors import SqlError, SqlSyntaxError, StatementError, UnsupportedFeatureError
from qtt.plan.ddl.sql_schema import schema_from_sql
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.statements import PlannedCase, plan_statements
from qtt.sql import parse_statements

INPUT = "CREATE STREAM INPUT (ID INT KEY, NAME STRING, AGE INT) WITH (kafka_topic='input', value_format='JSON');"
MULTI_KEY = "CREATE STREAM INPUT (ID INT KEY, ID2 INT KEY, NAME STRING) WITH (kafka_topic='input', format='JSON');"


def plan(*statements: str, **properties: object) -> PlannedCase:
    return plan_statements(parse_statements("\n".join(statements)), properties)


def schema_of(planned: PlannedCase, name: str = "OUTPUT") -> str:
    return str(planned.sources[name].schema)


def fails(error: type[Exception], *statements: str, **properties: object) -> str:
    with pytest.raises(error) as raised:
        plan(*statements, **properties)
    return str(raised.value)


def steps_of(planned: PlannedCase) -> list[s.ExecutionStep]:
    return s.walk_steps(planned.plan.queries()[-1].physical_plan)


def same_schema(text: str) -> str:
    return str(schema_from_sql(text))


# ---------------------------------------------------------------------------- CREATE STREAM


def test_create_stream_records_schema_topic_and_formats() -> None:
    planned = plan(INPUT)
    source = planned.sources["INPUT"]
    assert str(source.schema) == "`ID` INTEGER KEY, `NAME` STRING, `AGE` INTEGER"
    assert source.topic == "input"
    assert source.formats.key_format.format == "KAFKA"
    assert source.formats.value_format.format == "JSON"


def test_keyless_source_keeps_its_declared_key_format() -> None:
    planned = plan("CREATE STREAM S (V INT) WITH (kafka_topic='t', format='JSON');")
    assert planned.sources["S"].formats.key_format.format == "JSON"


def test_default_formats_come_from_config() -> None:
    planned = plan(
        "CREATE STREAM S (K STRING KEY, V INT) WITH (kafka_topic='t');",
        **{
            "ksql.persistence.default.format.value": "delimited",
            "ksql.persistence.default.format.key": "json",
        },
    )
    formats = planned.sources["S"].formats
    assert (formats.key_format.format, formats.value_format.format) == ("JSON", "DELIMITED")


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        (
            "CREATE STREAM S (V INT) WITH (value_format='JSON');",
            'Missing required property "KAFKA_TOPIC"',
        ),
        ("CREATE STREAM S (V INT) WITH (kafka_topic='t');", "missing the 'VALUE_FORMAT' property"),
        (
            "CREATE STREAM S (ROWTIME INT) WITH (kafka_topic='t', value_format='JSON');",
            "'ROWTIME' is a reserved",
        ),
        (
            "CREATE STREAM S (V INT, V STRING) WITH (kafka_topic='t', value_format='JSON');",
            "Duplicate column",
        ),
        (
            "CREATE STREAM S (V INT) WITH (kafka_topic='t', format='JSON', value_format='JSON');",
            "Cannot supply both 'VALUE_FORMAT' and 'FORMAT' properties",
        ),
        (
            "CREATE STREAM S (V INT) WITH (kafka_topic='t', value_format='JSN');",
            "Unknown format: JSN",
        ),
        (
            "CREATE STREAM S (V INT) WITH (kafka_topic='t', value_format='JSON', foo=1);",
            "Invalid config",
        ),
        (
            "CREATE STREAM S (K INT PRIMARY KEY, V INT) WITH (kafka_topic='t', value_format='JSON');",
            "please use 'KEY' for streams",
        ),
    ],
)
def test_create_stream_errors(statement: str, message: str) -> None:
    assert message in fails(StatementError, statement)


def test_format_properties_are_checked_before_columns() -> None:
    message = fails(
        StatementError,
        "CREATE STREAM T WITH (kafka_topic='t', value_format='DELIMITED', value_delimiter='<~>');",
    )
    assert (
        "Failed to prepare statement: Configuration VALUE_DELIMITER is invalid: Invalid delimiter "
        "value: "
        "'<~>'. Delimiter must be a single character or TAB,SPACE\nExample valid value: ';'"
    ) in message
    message = fails(
        StatementError,
        "CREATE STREAM T WITH (kafka_topic='t', value_format='JSON', value_delimiter='|');",
    )
    assert "JSON does not support the following configs: [delimiter]" in message


@pytest.mark.parametrize("delimiter", ["", " ", "\t"])
def test_blank_delimiters_are_rejected(delimiter: str) -> None:
    statement = (
        f"CREATE STREAM T (V INT) WITH (kafka_topic='t', value_format='DELIMITED', value_delimiter='{delimiter}');"
    )
    assert "Delimiter cannot be empty, if you meant to have a tab or space" in fails(StatementError, statement)


def test_named_delimiters_are_kept_as_written() -> None:
    planned = plan(
        "CREATE STREAM T (V INT, W INT) WITH (kafka_topic='t', value_format='DELIMITED', value_delimiter='TAB');"
    )
    assert dict(planned.sources["T"].formats.value_format.properties) == {"delimiter": "TAB"}


def test_key_format_messages_name_the_persistence_schema() -> None:
    message = fails(
        StatementError,
        "CREATE STREAM S (K ARRAY<DOUBLE> KEY, V INT) WITH (kafka_topic='t', format='DELIMITED');",
    )
    assert (
        "Key format does not support schema.\nformat: DELIMITED\nschema: Persistence{columns=[`K` "
        "ARRAY<DOUBLE> "
        "KEY], features=[]}\nreason: The 'DELIMITED' format does not support type 'ARRAY', "
        "column: `K`"
    ) in message
    message = fails(
        StatementError,
        "CREATE STREAM S (A INT KEY, B INT KEY, V INT) WITH (kafka_topic='t', format='KAFKA');",
    )
    assert "The 'KAFKA' format only supports a single field. Got: [`A` INTEGER KEY, `B` INTEGER KEY]" in message


@pytest.mark.parametrize(
    ("with_clause", "message"),
    [
        (
            "WRAP_SINGLE_VALUE=true, value_format='DELIMITED'",
            "Format 'DELIMITED' does not support 'WRAP_SINGLE_VALUE' set to 'true'.",
        ),
        (
            "WRAP_SINGLE_VALUE=true, value_format='KAFKA'",
            "Format 'KAFKA' does not support 'WRAP_SINGLE_VALUE' set to 'true'.",
        ),
    ],
)
def test_wrap_single_value_support_is_per_format(with_clause: str, message: str) -> None:
    assert message in fails(
        StatementError,
        f"CREATE STREAM S (K STRING KEY, V INT) WITH (kafka_topic='t', {with_clause});",
    )


def test_wrap_single_value_needs_a_single_value_column() -> None:
    statement = "CREATE STREAM S (A INT, B INT) WITH (kafka_topic='t', value_format='JSON', WRAP_SINGLE_VALUE=false);"
    assert "'WRAP_SINGLE_VALUE' is only valid for single-field value schemas" in fails(StatementError, statement)


def test_map_keys_are_rejected() -> None:
    statement = "CREATE STREAM S (K MAP<STRING, INT> KEY, V INT) WITH (kafka_topic='t', format='JSON');"
    assert "Map keys, including types that contain maps, are not supported" in fails(StatementError, statement)


# ---------------------------------------------------------------------------- projection and keys


def test_select_star_puts_keys_first() -> None:
    planned = plan(INPUT, "CREATE STREAM OUTPUT AS SELECT * FROM INPUT;")
    assert schema_of(planned) == same_schema("ID INT KEY, NAME STRING, AGE INT")


def test_projected_keys_keep_the_source_key_order() -> None:
    planned = plan(MULTI_KEY, "CREATE STREAM OUTPUT AS SELECT ID2, NAME, ID FROM INPUT;")
    assert schema_of(planned) == same_schema("ID INT KEY, ID2 INT KEY, NAME STRING")


def test_a_key_column_may_be_renamed() -> None:
    planned = plan(INPUT, "CREATE STREAM OUTPUT AS SELECT ID AS K, NAME FROM INPUT;")
    assert schema_of(planned) == same_schema("K INT KEY, NAME STRING")


def test_missing_keys_lists_every_key_column() -> None:
    message = fails(StatementError, MULTI_KEY, "CREATE STREAM OUTPUT AS SELECT ID, NAME FROM INPUT;")
    assert (
        "The query used to build `OUTPUT` must include the key columns ID and ID2 in its "
        "projection "
        "(eg, SELECT ID, ID2...)."
    ) in message


def test_a_key_selected_twice_is_rejected() -> None:
    message = fails(StatementError, INPUT, "CREATE STREAM OUTPUT AS SELECT ID, ID AS K2, NAME FROM INPUT;")
    assert "The projection contains a key column (`ID`) more than once, aliased as: ID and K2." in message


def test_a_projection_needs_value_columns() -> None:
    assert "The projection contains no value columns." in fails(
        StatementError, INPUT, "CREATE STREAM OUTPUT AS SELECT ID FROM INPUT;"
    )


def test_generated_aliases_skip_source_column_names() -> None:
    source = "CREATE STREAM INPUT (ID INT KEY, KSQL_COL_0 INT) WITH (kafka_topic='input', value_format='JSON');"
    planned = plan(source, "CREATE STREAM OUTPUT AS SELECT ID, ABS(KSQL_COL_0), ID + 1 FROM INPUT;")
    assert schema_of(planned) == same_schema("ID INT KEY, KSQL_COL_1 INT, KSQL_COL_2 INT")


def test_duplicate_aliases_are_rejected() -> None:
    assert "Duplicate value columns found in schema: `A`" in fails(
        StatementError, INPUT, "CREATE STREAM OUTPUT AS SELECT ID, NAME AS A, AGE AS A FROM INPUT;"
    )


# ---------------------------------------------------------------------------- sink formats


def test_sink_inherits_formats_and_delimiter() -> None:
    source = (
        "CREATE STREAM T (K STRING KEY, A INT, B INT) WITH (kafka_topic='t', "
        "value_format='DELIMITED', value_delimiter='|');"
    )
    planned = plan(source, "CREATE STREAM OUTPUT AS SELECT * FROM T;")
    formats = planned.sources["OUTPUT"].formats
    assert formats.value_format.format == "DELIMITED"
    assert dict(formats.value_format.properties) == {"delimiter": "|"}
    override = plan(source, "CREATE STREAM OUTPUT WITH (value_delimiter='$') AS SELECT * FROM T;")
    assert dict(override.sources["OUTPUT"].formats.value_format.properties) == {"delimiter": "$"}
    to_json = plan(source, "CREATE STREAM OUTPUT WITH (value_format='JSON') AS SELECT * FROM T;")
    assert dict(to_json.sources["OUTPUT"].formats.value_format.properties) == {}


def test_protobuf_sink_inherits_only_the_full_schema_name() -> None:
    source = (
        "CREATE STREAM T (K STRING KEY, A INT) WITH (kafka_topic='t', format='PROTOBUF', "
        "value_schema_full_name='shed.Tool', value_protobuf_nullable_representation='OPTIONAL');"
    )
    planned = plan(source, "CREATE STREAM OUTPUT AS SELECT * FROM T;")
    value = planned.sources["OUTPUT"].formats.value_format
    assert dict(value.properties) == {"fullSchemaName": "shed.Tool", "unwrapPrimitives": "true"}
    override = plan(source, "CREATE STREAM OUTPUT WITH (value_schema_full_name='shed.Rake') AS SELECT * FROM T;")
    assert override.sources["OUTPUT"].formats.value_format.properties["fullSchemaName"] == "shed.Rake"
    to_json_sr = plan(source, "CREATE STREAM OUTPUT WITH (value_format='JSON_SR') AS SELECT * FROM T;")
    assert dict(to_json_sr.sources["OUTPUT"].formats.value_format.properties) == {}


def test_sink_does_not_inherit_value_wrapping() -> None:
    source = "CREATE STREAM I (V INT) WITH (kafka_topic='t', value_format='JSON', WRAP_SINGLE_VALUE=false);"
    assert plan(source).sources["I"].formats.value_features == ("UNWRAP_SINGLE_VALUE",)
    planned = plan(source, "CREATE STREAM OUTPUT AS SELECT * FROM I;")
    assert planned.sources["OUTPUT"].formats.value_features == ()
    explicit = plan(source, "CREATE STREAM OUTPUT WITH (WRAP_SINGLE_VALUE=false) AS SELECT * FROM I;")
    assert explicit.sources["OUTPUT"].formats.value_features == ("UNWRAP_SINGLE_VALUE",)


def test_wrap_config_applies_to_formats_that_support_it() -> None:
    config = {"ksql.persistence.wrap.single.values": "false"}
    planned = plan("CREATE STREAM I (V INT) WITH (kafka_topic='t', value_format='JSON');", **config)
    assert planned.sources["I"].formats.value_features == ("UNWRAP_SINGLE_VALUE",)
    wrapped = plan(
        "CREATE STREAM I (V INT) WITH (kafka_topic='t', value_format='KAFKA');",
        **{"ksql.persistence.wrap.single.values": "true"},
    )
    assert wrapped.sources["I"].formats.value_features == ()


def test_inherited_none_key_format_gives_way_to_the_default() -> None:
    source = "CREATE STREAM I (A INT, B INT) WITH (kafka_topic='t', key_format='NONE', value_format='JSON');"
    planned = plan(source, "CREATE STREAM OUTPUT AS SELECT * FROM I PARTITION BY A;")
    assert planned.sources["OUTPUT"].formats.key_format.format == "KAFKA"


def test_partition_by_null_drops_the_key_format() -> None:
    planned = plan(INPUT, "CREATE STREAM OUTPUT AS SELECT ID, NAME FROM INPUT PARTITION BY NULL;")
    assert planned.sources["OUTPUT"].formats.key_format.format == "NONE"
    assert schema_of(planned) == same_schema("ID INT, NAME STRING")
    message = fails(
        StatementError,
        INPUT,
        "CREATE STREAM OUTPUT WITH (key_format='JSON') AS SELECT ID, NAME FROM INPUT PARTITION BY NULL;",
    )
    assert "Key format specified for stream without key columns." in message


def test_sink_topic_uses_the_prefix_config() -> None:
    planned = plan(
        INPUT,
        "CREATE STREAM OUTPUT AS SELECT * FROM INPUT;",
        **{"ksql.output.topic.name.prefix": "p_"},
    )
    assert planned.sources["OUTPUT"].topic == "p_OUTPUT"


# ---------------------------------------------------------------------------- PARTITION BY


@pytest.mark.parametrize(
    ("query", "schema"),
    [
        ("SELECT * FROM INPUT PARTITION BY NAME", "NAME STRING KEY, AGE INT, ID INT"),
        (
            "SELECT * FROM INPUT PARTITION BY ABS(ID)",
            "KSQL_COL_0 INT KEY, NAME STRING, AGE INT, ID INT",
        ),
        (
            "SELECT NAME AS ID, AGE, ID AS OLD FROM INPUT PARTITION BY NAME",
            "ID STRING KEY, AGE INT, OLD INT",
        ),
        (
            "SELECT UCASE(NAME) AS K, AGE, ID FROM INPUT PARTITION BY UCASE(NAME)",
            "K STRING KEY, AGE INT, ID INT",
        ),
        ("SELECT * FROM INPUT PARTITION BY AGE, NAME", "AGE INT KEY, NAME STRING KEY, ID INT"),
        (
            "SELECT ID, NAME, AGE FROM INPUT PARTITION BY AGE, ID",
            "AGE INT KEY, ID INT KEY, NAME STRING",
        ),
    ],
)
def test_partition_by_names_and_orders_columns(query: str, schema: str) -> None:
    planned = plan(INPUT, f"CREATE STREAM OUTPUT WITH (key_format='JSON') AS {query};")
    assert schema_of(planned) == same_schema(schema)


def test_partition_by_a_struct_field_is_named_after_the_field() -> None:
    source = (
        "CREATE STREAM I (ID INT KEY, ADDRESS STRUCT<STREET STRING, TOWN STRING>) WITH "
        "(kafka_topic='t', value_format='JSON');"
    )
    planned = plan(source, "CREATE STREAM OUTPUT AS SELECT * FROM I PARTITION BY ADDRESS->TOWN;")
    assert schema_of(planned) == same_schema("TOWN STRING KEY, ADDRESS STRUCT<STREET STRING, TOWN STRING>, ID INT")


def test_partition_by_plans_a_select_key_step_then_the_projection() -> None:
    planned = plan(INPUT, "CREATE STREAM OUTPUT AS SELECT ABS(ID) AS K, NAME FROM INPUT PARTITION BY ABS(ID);")
    _source, select_key, select, sink = steps_of(planned)
    assert isinstance(select_key, s.StreamSelectKeyV1)
    assert [k.alias for k in select_key.key_expressions] == ["KSQL_COL_0"]
    assert isinstance(select, s.StreamSelectV1)
    assert select.key_column_names == ("K",)
    assert select.select_expressions[0].expression == e.ColumnRef(
        name="KSQL_COL_0", sql_type=select_key.key_expressions[0].expression.result_type
    )
    assert isinstance(sink, s.SinkStep)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "SELECT NAME, ID FROM INPUT PARTITION BY ABS(ID)",
            "The query used to build `OUTPUT` must include the partitioning expression "
            "ABS(INPUT.ID) in its projection "
            "(eg, SELECT ABS(INPUT.ID)...).",
        ),
        (
            "SELECT ID, NAME FROM INPUT PARTITION BY ID, AGE",
            "must include the partitioning expressions INPUT.ID and INPUT.AGE in its projection "
            "(eg, SELECT INPUT.ID, INPUT.AGE...).",
        ),
        (
            "SELECT NAME, NAME AS NAME2, ID FROM INPUT PARTITION BY NAME",
            "The projection contains a key column (`NAME`) more than once, aliased as: NAME and NAME2.",
        ),
        (
            "SELECT ID, NAME AS X FROM INPUT PARTITION BY X",
            "PARTITION BY column 'X' cannot be resolved. 'X' must be a column in the source "
            "schema since PARTITION BY "
            "is applied on the input.",
        ),
        (
            "SELECT ID, NAME FROM INPUT PARTITION BY NULL, ID",
            "Cannot PARTITION BY multiple columns including NULL",
        ),
        (
            "SELECT ID, NAME FROM INPUT PARTITION BY ()",
            "PARTITION BY requires at least one expression",
        ),
        (
            "SELECT ID, NAME, AGE FROM INPUT PARTITION BY ID, AGE",
            "Key format does not support schema.\nformat: KAFKA\nschema: "
            "Persistence{columns=[`ID` INTEGER KEY, "
            "`AGE` INTEGER KEY], features=[]}",
        ),
        (
            "SELECT * FROM INPUT PARTITION BY MAP(NAME:=AGE)",
            "Map keys, including types that contain maps",
        ),
    ],
)
def test_partition_by_errors(query: str, message: str) -> None:
    assert message in fails(StatementError, INPUT, f"CREATE STREAM OUTPUT AS {query};")


def test_partition_by_takes_value_expressions_only() -> None:
    with pytest.raises(SqlSyntaxError, match="Syntax Error"):
        parse_statements("CREATE STREAM OUTPUT AS SELECT * FROM INPUT PARTITION BY NAME AND AGE;")


@pytest.mark.parametrize(("pseudo", "type_"), [("ROWTIME", "BIGINT"), ("ROWPARTITION", "INT"), ("ROWOFFSET", "BIGINT")])
def test_partition_by_a_pseudo_column_names_the_key_after_it(pseudo: str, type_: str) -> None:
    planned = plan(INPUT, f"CREATE STREAM OUTPUT AS SELECT * FROM INPUT PARTITION BY {pseudo};")
    assert schema_of(planned) == same_schema(f"{pseudo} {type_} KEY, NAME STRING, AGE INT, ID INT")
    json_keys = INPUT.replace("value_format=", "format=")
    planned = plan(json_keys, f"CREATE STREAM OUTPUT AS SELECT * FROM INPUT PARTITION BY NAME, {pseudo};")
    assert schema_of(planned) == same_schema(f"NAME STRING KEY, {pseudo} {type_} KEY, AGE INT, ID INT")


def test_a_source_with_a_column_named_like_a_pseudo_column_is_unsupported() -> None:
    statements = [INPUT, "CREATE STREAM OUTPUT AS SELECT * FROM INPUT PARTITION BY ROWTIME;"]
    with pytest.raises(UnsupportedFeatureError, match=r"named like a pseudo column \(ROWTIME\)"):
        plan(*statements, "CREATE STREAM AGAIN AS SELECT * FROM OUTPUT;")


# ---------------------------------------------------------------------------- INSERT INTO


def test_insert_into_writes_to_the_target_topic() -> None:
    planned = plan(
        INPUT,
        "CREATE STREAM OTHER (ID INT KEY, NAME STRING, AGE INT) WITH (kafka_topic='other', value_format='JSON');",
        "CREATE STREAM OUTPUT AS SELECT * FROM INPUT;",
        "INSERT INTO OUTPUT SELECT * FROM OTHER;",
    )
    query = planned.plan.queries()[-1]
    assert query.query_id == "INSERTQUERY_1"
    assert query.physical_plan.topic == "OUTPUT"  # type: ignore[attr-defined]


def test_insert_into_needs_the_sink_schema() -> None:
    message = fails(
        StatementError,
        INPUT,
        "CREATE STREAM OTHER (ID INT KEY, NAME BIGINT, AGE INT) WITH (kafka_topic='other', value_format='JSON');",
        "CREATE STREAM OUTPUT AS SELECT * FROM INPUT;",
        "INSERT INTO OUTPUT SELECT * FROM OTHER;",
    )
    assert (
        "Incompatible schema between results and sink.\nResult schema is `ID` INTEGER KEY, `NAME` "
        "BIGINT, "
        "`AGE` INTEGER\nSink schema is `ID` INTEGER KEY, `NAME` STRING, `AGE` INTEGER"
    ) in message


def test_insert_into_an_unknown_stream_names_its_position() -> None:
    message = fails(SqlError, INPUT, "INSERT INTO UNKNOWN SELECT * FROM INPUT;")
    assert "Line: 2, Col: 13: Source `UNKNOWN` does not exist." in message


@pytest.mark.parametrize(
    ("target", "hint"),
    [
        (
            "input",
            'Did you mean "input"? Hint: wrap the source name in double quotes to make it case-sensitive.',
        ),
        ('"Input"', "Did you mean INPUT? Hint: try removing double quotes from the source name."),
    ],
)
def test_insert_values_into_an_unknown_stream_suggests_the_spelling(target: str, hint: str) -> None:
    source = INPUT if target.startswith('"') else INPUT.replace("STREAM INPUT", 'STREAM "input"')
    message = fails(SqlError, source, f"INSERT INTO {target} (ID, NAME) VALUES (1, 'a');")
    assert hint in message


@pytest.mark.parametrize(
    "statement",
    [
        "CREATE STREAM OUTPUT AS SELECT * FROM INPTU;",
        "INSERT INTO INPTU SELECT * FROM INPUT;",
        "DROP STREAM INPTU;",
    ],
)
def test_an_unknown_source_suggests_a_close_name(statement: str) -> None:
    with pytest.raises(SqlError) as raised:
        plan(INPUT, statement)
    assert "does not exist." in raised.value.message
    assert raised.value.hint == "Did you mean 'INPUT'?"


def test_an_unknown_with_property_suggests_a_close_name() -> None:
    with pytest.raises(StatementError) as raised:
        plan(INPUT.replace("value_format", "value_fromat"))
    expected = "Failed to prepare statement: Invalid config variable(s) in the WITH clause: VALUE_FROMAT"
    assert raised.value.message == expected
    assert raised.value.hint == "Did you mean 'VALUE_FORMAT'?"


def test_a_missing_topic_is_refused_before_an_unknown_with_property() -> None:
    # ksqlDB parses the properties it defines (KAFKA_TOPIC is required) before it looks for unknown ones
    with pytest.raises(StatementError) as raised:
        plan(INPUT.replace("kafka_topic", "kafka_topik"))
    assert raised.value.message.endswith('Missing required property "KAFKA_TOPIC" which has no default value.')


def test_an_unknown_column_suggests_a_close_name() -> None:
    with pytest.raises(StatementError) as raised:
        plan(INPUT, "CREATE STREAM OUTPUT AS SELECT ID, NAEM FROM INPUT;")
    assert raised.value.hint == "Did you mean 'NAME'?"


def test_an_aliased_source_is_known_by_its_alias_only() -> None:
    # ksqlDB's analyzer keys a source's schema by its alias (Analyzer.visitAliasedRelation)
    with pytest.raises(StatementError) as raised:
        plan(INPUT, "CREATE STREAM OUTPUT AS SELECT I.ID, INPUT.NAME FROM INPUT I;")
    assert raised.value.message == "SELECT column 'INPUT.NAME' cannot be resolved."
    planned = plan(INPUT, "CREATE STREAM OUTPUT AS SELECT I.ID, I.NAME FROM INPUT I;")
    assert schema_of(planned) == same_schema("ID INT KEY, NAME STRING")


def test_an_unknown_partition_by_column_keeps_its_suggestion() -> None:
    with pytest.raises(StatementError) as raised:
        plan(INPUT, "CREATE STREAM OUTPUT AS SELECT * FROM INPUT PARTITION BY AEG;")
    assert "PARTITION BY column 'AEG' cannot be resolved." in raised.value.message
    assert raised.value.hint == "Did you mean 'AGE'?"


def test_insert_values_rows_are_kept_in_statement_order_typed_by_their_target() -> None:
    planned = plan(
        INPUT,
        "INSERT INTO INPUT (ID, NAME, AGE, ROWTIME) VALUES (1, 'a', 2, 7);",
        "INSERT INTO INPUT (NAME, ID) VALUES ('b', 3);",
    )
    assert [(r.key, r.value, r.timestamp) for r in planned.inserts] == [((1,), ("a", 2), 7), ((3,), ("b", None), 0)]
    assert planned.plan.queries() == []


def test_insert_values_into_an_unknown_column_says_so() -> None:
    with pytest.raises(StatementError) as raised:
        plan(INPUT, "INSERT INTO INPUT (ID, HEIGHT) VALUES (1, 2);")
    assert raised.value.message == "Failed to insert values into 'INPUT'. Column name `HEIGHT` does not exist."


# ---------------------------------------------------------------------------- experimental planner


NEW_PLANNER = {"ksql.new.query.planner.enabled": "true"}


def test_new_planner_plans_star_as_the_default_planner_does() -> None:
    planned = plan(INPUT, "CREATE STREAM OUTPUT AS SELECT * FROM INPUT;", **NEW_PLANNER)
    assert schema_of(planned) == same_schema("ID INT KEY, NAME STRING, AGE INT")


def test_new_planner_keeps_the_projection_order_of_key_columns() -> None:
    planned = plan(MULTI_KEY, "CREATE STREAM OUTPUT AS SELECT NAME, ID2, ID FROM INPUT;", **NEW_PLANNER)
    assert schema_of(planned) == same_schema("ID2 INT KEY, ID INT KEY, NAME STRING")


def test_new_planner_lets_key_columns_go() -> None:
    planned = plan(MULTI_KEY, "CREATE STREAM OUTPUT AS SELECT ID2, NAME FROM INPUT;", **NEW_PLANNER)
    assert schema_of(planned) == same_schema("ID2 INT KEY, NAME STRING")
    planned = plan(INPUT, "CREATE STREAM OUTPUT AS SELECT NAME FROM INPUT;", **NEW_PLANNER)
    assert schema_of(planned) == same_schema("NAME STRING")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("SELECT * FROM INPUT WHERE AGE > 1", "New query planner does not support WHERE. Set ksql.new"),
        ("SELECT * FROM INPUT PARTITION BY NAME", "New query planner does not support PARTITION BY. Set"),
        ("SELECT ID, UCASE(NAME) AS N FROM INPUT", "New query planner only support column references, no"),
        ("SELECT ID, BOB FROM INPUT", "SELECT column 'BOB' cannot be resolved."),
    ],
)
def test_new_planner_rejects_what_it_does_not_plan(query: str, message: str) -> None:
    assert message in fails(StatementError, INPUT, f"CREATE STREAM OUTPUT AS {query};", **NEW_PLANNER)


def test_new_planner_aliases_are_a_skip() -> None:
    with pytest.raises(UnsupportedFeatureError, match="column aliases"):
        plan(INPUT, "CREATE STREAM OUTPUT AS SELECT ID, NAME AS N FROM INPUT;", **NEW_PLANNER)


@pytest.mark.parametrize(
    ("select", "message"),
    [
        ("ROWTIME, ID, NAME", "Reserved column name in select: `ROWTIME`. Please remove or alias"),
        ("ID, NAME AS ROWOFFSET", "`ROWOFFSET` is a reserved column name. You cannot use it as an"),
    ],
)
def test_pseudo_column_names_are_reserved_in_projections(select: str, message: str) -> None:
    query = f"CREATE STREAM OUTPUT AS SELECT {select} FROM INPUT;"
    assert message in fails(StatementError, INPUT, query)


def test_pseudo_columns_may_be_selected_under_an_alias() -> None:
    planned = plan(INPUT, "CREATE STREAM OUTPUT AS SELECT ID, ROWTIME AS RT FROM INPUT;")
    assert schema_of(planned) == same_schema("ID INT KEY, RT BIGINT")


@pytest.mark.parametrize(
    ("statements", "message"),
    [
        (
            ["CREATE STREAM I (K STRING KEY, V INT) WITH (kafka_topic='t', key_format='NONE', value_format='JSON');"],
            "The 'NONE' format can only be used when no columns are defined. Got: [`K` STRING KEY]",
        ),
        (
            ["CREATE STREAM I (V INT) WITH (kafka_topic='t', value_format='NONE');"],
            "The 'NONE' format can only be used when no columns are defined. Got: [`V` INTEGER]",
        ),
        (
            [
                "CREATE STREAM I (A INT, B INT) WITH (kafka_topic='t', value_format='JSON');",
                "CREATE STREAM OUTPUT WITH (key_format='NONE') AS SELECT * FROM I PARTITION BY B;",
            ],
            "The 'NONE' format can only be used when no columns are defined. Got: [`B` INTEGER",
        ),
    ],
)
def test_the_none_format_holds_no_columns(statements: list[str], message: str) -> None:
    assert message in fails(StatementError, *statements)


def test_the_default_key_format_replaces_an_inherited_none() -> None:
    planned = plan(
        "SET 'ksql.persistence.default.format.key' = 'JSON';",
        "CREATE STREAM I (A INT, B INT) WITH (kafka_topic='t', key_format='NONE', value_format='JSON');",
        "CREATE STREAM OUTPUT AS SELECT * FROM I PARTITION BY B;",
    )
    assert planned.sources["OUTPUT"].formats.key_format.format == "JSON"


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE STREAM w (k INT KEY, d DECIMAL(40, 2)) WITH (kafka_topic='w', value_format='JSON');",
        "CREATE STREAM w (k INT KEY, d ARRAY<DECIMAL(39, 0)>) WITH (kafka_topic='w', value_format='JSON');",
        "CREATE STREAM w (k INT KEY, d INT) WITH (kafka_topic='w', value_format='JSON');\n"
        "ALTER STREAM w ADD COLUMN e DECIMAL(40, 2);",
        "CREATE STREAM w (k INT KEY, d INT) WITH (kafka_topic='w', value_format='JSON');\n"
        "CREATE STREAM o AS SELECT k, CAST(d AS DECIMAL(40, 2)) AS e FROM w;",
    ],
)
def test_a_decimal_wider_than_sparks_is_an_unsupported_feature(sql: str) -> None:
    with pytest.raises(UnsupportedFeatureError, match=r"Spark's decimals hold at most 38 digits"):
        plan_statements(parse_statements(sql))


def test_a_new_plan_takes_the_avro_writer_that_writes_maps_as_ksqldb_does_only_where_a_map_is() -> None:
    planned = plan(
        "CREATE STREAM S (K STRING KEY, M MAP<STRING, INT>, N INT) WITH (kafka_topic='s', format='AVRO');",
        "CREATE STREAM J (K STRING KEY, M MAP<STRING, INT>) WITH (kafka_topic='j', value_format='JSON');",
        "CREATE STREAM OUTPUT AS SELECT K, N FROM S;",
    )
    formats = {name: source.formats for name, source in planned.sources.items()}
    assert (formats["S"].key_format.writer_version, formats["S"].value_format.writer_version) == (1, 2)
    assert formats["J"].value_format.writer_version == 1  # JSON has one writer
    assert formats["OUTPUT"].value_format.writer_version == 1  # no map left: the bytes never differed


def test_a_property_given_as_a_json_fraction_is_recorded_as_a_double_the_plan_writes_and_reads_back() -> None:
    from decimal import Decimal

    from qtt.plan.ir import codec

    planned = plan(INPUT, **{"ksql.functions.collect_list.limit": Decimal("2.9")})
    assert dict(planned.plan.config) == {"ksql.functions.collect_list.limit": 2.9}
    assert codec.loads(codec.dumps(planned.plan)) == planned.plan


def test_a_declared_topic_keeps_its_partition_count_over_the_create_naming_it() -> None:
    # ksqlDB's runner creates a case's declared topic first; a CREATE's PARTITIONS is not checked against it
    sql = "CREATE STREAM s (k VARCHAR KEY, v INT) WITH (kafka_topic='s', value_format='JSON', partitions=3);"
    assert plan_statements(parse_statements(sql), declared_partitions={"s": 2}).topic_partitions == {"s": 2}
    assert plan_statements(parse_statements(sql)).topic_partitions == {"s": 3}
