"""ksqlDB's persisted plans translated into qtt's (no Spark): on plans of our own in ksqlDB's
format (tests/fixtures/ksqldb_plans, written by tests/fixtures/make_ksqldb_plans.py)."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from qtt import sqltypes as t
from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.harness.ksqldb.replay import rowkey_named
from qtt.plan.ir import expressions as e
from qtt.plan.ir import join_steps as js
from qtt.plan.ir import steps as s
from qtt.plan.ir import suppress_steps as ss
from qtt.plan.ir.schema import LogicalSchema
from qtt.plan.ksqldb import fields
from qtt.plan.ksqldb.context import Translated, Untranslatable
from qtt.plan.ksqldb.expressions import split_alias
from qtt.plan.ksqldb.joins import rekeyed_as_join_key
from qtt.plan.ksqldb.plans import translate_plan
from qtt.plan.statements import PlannedCase

PLANS = Path(__file__).parent.parent / "fixtures" / "ksqldb_plans"


def _folder(case: str) -> Path:
    (version,) = sorted((PLANS / case).iterdir())[:1]
    return version


def _read(case: str) -> tuple[dict[str, Any], dict[str, Any]]:
    folder = _folder(case)
    plan = json.loads((folder / "plan.json").read_text())
    spec = json.loads((folder / "spec.json").read_text())
    return plan, spec


def _translate(plan: dict[str, Any], spec: dict[str, Any]) -> PlannedCase:
    recorded = {name: entry["schema"] for name, entry in spec["schemas"].items()}
    return translate_plan(plan, release=spec["version"], recorded=recorded, partitions={}, properties={})


def _query_steps(planned: PlannedCase) -> list[s.ExecutionStep]:
    (query,) = planned.plan.queries()
    return s.walk_steps(query.physical_plan)


def test_a_filter_and_projection_become_qtt_steps_with_the_key_passed_through() -> None:
    planned = _translate(*_read("parcels_-_heavy_parcels"))
    source, where, project, sink = _query_steps(planned)
    assert isinstance(source, s.StreamSourceV1) and source.source_name == "PARCELS"
    assert isinstance(where, s.StreamFilterV1)
    assert where.filter_expression == e.Comparison(
        op=">", left=e.ColumnRef(name="WEIGHT", sql_type=t.INTEGER), right=e.Literal(value=10, sql_type=t.INTEGER)
    )
    assert isinstance(project, s.StreamSelectV1)
    assert project.key_column_names == ("ID",)
    assert [x.alias for x in project.select_expressions] == ["ID", "DEPOT", "GRAMS"]
    assert isinstance(sink, s.StreamSinkV2) and sink.partitions == 1
    assert planned.sources["HEAVY"].schema.names() == ["ID", "DEPOT", "GRAMS"]


def test_an_aggregate_reads_its_grouping_expression_back_as_its_key() -> None:
    planned = _translate(*_read("parcels_-_weight_per_depot"))
    steps = _query_steps(planned)
    group_by = next(x for x in steps if isinstance(x, s.StreamGroupByV1))
    assert [g.alias for g in group_by.group_by_expressions] == ["KSQL_COL_0"]  # as spec.json recorded it
    aggregate = next(x for x in steps if isinstance(x, s.StreamAggregateV1))
    assert [(c.function, c.return_type) for c in aggregate.aggregations] == [("SUM", t.INTEGER), ("COUNT", t.BIGINT)]
    project = next(x for x in steps if isinstance(x, s.TableSelectV1))
    name = next(x.expression for x in project.select_expressions if x.alias == "NAME")
    # LCASE(UCASE(DEPOT)) over the latest row's DEPOT is LCASE of the key UCASE(DEPOT) made
    assert name == e.Call(name="LCASE", args=(e.ColumnRef(name="KSQL_COL_0", sql_type=t.STRING),), sql_type=t.STRING)


def test_a_non_aggregate_column_that_copies_no_key_does_not_translate() -> None:
    plan, spec = _read("parcels_-_weight_per_depot")
    project = plan["plan"][1]["queryPlan"]["physicalPlan"]["source"]
    project["selectExpressions"].append("WEIGHT AS LAST_WEIGHT")
    with pytest.raises(Untranslatable, match="tableSelectV1: reads a non-aggregate column"):
        _translate(plan, spec)


def test_a_window_written_as_text_keeps_ksqldb_defaults() -> None:
    planned = _translate(*_read("parcels_-_heaviest_per_hour"))
    aggregate = next(x for x in _query_steps(planned) if isinstance(x, s.StreamWindowedAggregateV1))
    assert (aggregate.window.type, aggregate.window.size_ms, aggregate.window.grace_ms) == (
        "TUMBLING",
        3_600_000,
        24 * 3_600_000 - 3_600_000,
    )
    assert planned.sources["HOURLY"].formats.window == s.WindowInfo(type="TUMBLING", size_ms=3_600_000)


def test_a_stream_table_join_repartitions_its_rekeyed_stream_side() -> None:
    planned = _translate(*_read("parcels_-_parcels_routed_to_their_depot_city"))
    join = next(x for x in _query_steps(planned) if isinstance(x, js.StreamTableJoinV1))
    assert (join.join_type, join.key_col_name) == ("LEFT", "P_DEPOT")
    left = join.left_source
    assert isinstance(left, s.StreamSelectV1)
    # ksqlDB's copy of the key into the value (DEPOT AS P_DEPOT) is the key column itself
    assert [x.alias for x in left.select_expressions].count("P_DEPOT") == 1
    assert isinstance(left.source, s.StreamSelectKeyV2) and left.source.repartition_name == "Join"


def test_a_join_of_5_5_keeps_the_implicit_rowkey_as_its_key_and_each_side_s_copy() -> None:
    planned = _translate(*_read("parcels_-_scans_matched_with_labels"))
    join = next(x for x in _query_steps(planned) if isinstance(x, js.StreamStreamJoinV1))
    assert join.key_col_name == "ROWKEY"
    for side, copy_ in ((join.left_source, "S_ROWKEY"), (join.right_source, "L_ROWKEY")):
        assert isinstance(side, s.StreamSelectV1) and side.key_column_names == ("ROWKEY",)
        assert copy_ in [x.alias for x in side.select_expressions]


def test_a_table_re_keyed_by_another_column_is_untranslatable_and_names_the_step() -> None:
    with pytest.raises(Untranslatable, match="tableSelectKeyV1: re-keying a table by other than its own key"):
        _translate(*_read("parcels_-_depots_by_city"))


def test_a_joined_table_re_keyed_by_its_own_key_into_the_join_s_key_format_is_read_as_it_is() -> None:
    plan, spec = _read("parcels_-_parcels_routed_to_their_depot_city")
    before = _query_steps(_translate(copy.deepcopy(plan), spec))
    aliased = plan["plan"][2]["queryPlan"]["physicalPlan"]["source"]["source"]["rightSource"]
    aliased["source"] = {
        "@type": "tableSelectKeyV1",
        "properties": {"queryContext": "RightSourceKeyed"},
        "internalFormats": aliased["internalFormats"],
        "keyExpression": ["NAME"],
        "source": aliased["source"],
    }
    assert _query_steps(_translate(plan, spec)) == before


def _windowed_join(rekey: list[str] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scans-and-labels join over windowed streams, each side re-keyed by ``rekey`` first
    (None: not re-keyed), as ksqlDB moves a join side into a registry key format."""
    plan, spec = _read("parcels_-_scans_matched_with_labels")
    join = plan["plan"][2]["queryPlan"]["physicalPlan"]["source"]["source"]
    for side, name in (("leftSource", "Left"), ("rightSource", "Right")):
        aliased = join[side]
        aliased["source"].update({"@type": "windowedStreamSourceV1", "windowInfo": {"type": "TUMBLING", "size": 60.0}})
        if rekey is not None:
            aliased["source"] = {
                "@type": "streamSelectKeyV2",
                "properties": {"queryContext": f"{name}SourceKeyed"},
                "keyExpression": rekey,
                "source": aliased["source"],
            }
    return plan, spec


def test_a_windowed_join_side_re_keyed_by_its_own_key_keeps_its_windowed_key_and_rows() -> None:
    assert _query_steps(_translate(*_windowed_join(["ROWKEY"]))) == _query_steps(_translate(*_windowed_join(None)))
    with pytest.raises(Untranslatable, match="streamSelectKeyV2: re-keying a windowed stream by other than its own"):
        _translate(*_windowed_join(["GATE"]))


def test_a_side_re_keyed_for_a_later_outer_join_gives_up_the_earlier_join_s_synthetic_rowkey() -> None:
    formats = s.Formats(key_format=s.FormatInfo(format="KAFKA"), value_format=s.FormatInfo(format="JSON"))
    earlier = LogicalSchema.parse("`ROWKEY` INTEGER KEY, `S1_ID` INTEGER, `S1_V0` BIGINT, `S2_ID` INTEGER")
    source = s.StreamSourceV1(context="Src", topic="t", source_name="T", source_schema=earlier, formats=formats)
    s1_id = e.ColumnRef(name="S1_ID", sql_type=t.INTEGER)
    rekey = s.StreamSelectKeyV2(
        context="LeftSourceKeyed",
        source=source,
        key_expressions=(s.SelectExpression(alias="S1_ID", expression=s1_id),),
        repartition_name="Join-left",
    )
    # ksqlDB's re-key keeps the column's name, and the earlier join's ROWKEY in the value
    side = Translated(
        rekey, LogicalSchema.parse("`S1_ID` INTEGER KEY, `S1_V0` BIGINT, `S2_ID` INTEGER, `ROWKEY` INTEGER")
    )
    renamed = rekeyed_as_join_key(side, "ROWKEY")
    assert isinstance(renamed.step, s.StreamSelectKeyV2)
    assert renamed.step.key_expressions == (s.SelectExpression(alias="ROWKEY", expression=s1_id),)
    assert str(renamed.schema) == "`ROWKEY` INTEGER KEY, `S1_ID` INTEGER, `S1_V0` BIGINT, `S2_ID` INTEGER"
    # a join keyed by the re-key's own column, or a side without a column named like the key: as it is
    assert rekeyed_as_join_key(side, "S1_ID") is side
    assert rekeyed_as_join_key(
        dataclasses.replace(side, schema=LogicalSchema.parse("`S1_ID` INTEGER KEY")), "ROWKEY"
    ).schema == (LogicalSchema.parse("`S1_ID` INTEGER KEY"))


def test_a_suppression_after_the_projection_is_qtt_s_suppress_step_over_every_change() -> None:
    steps = _query_steps(_translate(*_read("parcels_-_final_heaviest_per_hour")))
    aggregate = next(x for x in steps if isinstance(x, s.StreamWindowedAggregateV1))
    # before 0.28 the aggregate emitted every change and Kafka Streams' suppress buffer, whose
    # rule differs from the later emit-on-window-close, held them back
    assert not aggregate.window.emit_final
    assert [type(x).type_tag for x in steps[-3:]] == ["tableSelectV1", "tableSuppressV1", "tableSinkV1"]
    suppress = steps[-2]
    assert isinstance(suppress, ss.TableSuppressV1) and suppress.window == aggregate.window
    assert suppress.window.grace_ms == 0


def test_a_suppression_over_session_windows_is_qtt_s_suppress_step_over_the_sessions() -> None:
    steps = _query_steps(_translate(*_read("parcels_-_final_heaviest_per_session")))
    suppress = steps[-2]
    assert isinstance(suppress, ss.TableSuppressV1)
    assert suppress.window.type == "SESSION" and (suppress.window.size_ms, suppress.window.grace_ms) == (10000, 5000)


def test_a_join_on_the_key_field_copies_joins_on_the_key_named_after_the_left_copy() -> None:
    steps = _query_steps(_translate(*_read("parcels_-_scans_matched_by_key_field")))
    join = next(x for x in steps if isinstance(x, js.StreamStreamJoinV1))
    assert join.key_col_name == "S_PARCEL"
    left, right = join.left_source, join.right_source
    # the left side's ROWKEY is the join key, its copy of it gone from the value; the right
    # side keeps its key and its copy, the output's only ROWKEY
    assert isinstance(left, s.StreamSelectV1) and left.key_column_names == ("S_PARCEL",)
    assert sorted(x.alias for x in left.select_expressions) == ["S_GATE", "S_PARCEL", "S_ROWKEY", "S_ROWTIME"]
    assert isinstance(right, s.StreamSelectV1) and right.key_column_names == ("ROWKEY",)
    assert "L_PARCEL" in [x.alias for x in right.select_expressions]


def test_a_side_keyed_by_a_named_key_keeps_it_when_its_key_field_copy_leaves_the_value() -> None:
    plan, spec = _read("parcels_-_scans_matched_by_key_field")
    renamed = json.loads(json.dumps(plan).replace("ROWKEY", "K"))
    steps = _query_steps(_translate(renamed, spec))
    join = next(x for x in steps if isinstance(x, js.StreamStreamJoinV1))
    left = join.left_source
    assert isinstance(left, s.StreamSelectV1) and left.key_column_names == ("S_K",)
    assert "S_PARCEL" not in [x.alias for x in left.select_expressions]


def test_grouping_by_two_strings_in_one_string_key_before_6_1_does_not_translate() -> None:
    plan, spec = _read("parcels_-_weight_per_depot")
    old = copy.deepcopy(plan)
    group_by = old["plan"][1]["queryPlan"]["physicalPlan"]["source"]["source"]["source"]
    group_by["groupByExpressions"] = ["DEPOT", "LCASE(DEPOT)"]  # ('a|+|b', 'c') and ('a', 'b|+|c') print alike
    with pytest.raises(Untranslatable, match="streamGroupByV1: several STRING grouping values in one STRING key"):
        _translate(old, spec)


def test_a_table_filter_of_a_later_release_over_a_source_table_keeps_the_previous_row() -> None:
    plan, spec = _read("parcels_-_parcels_routed_to_their_depot_city")
    right = plan["plan"][2]["queryPlan"]["physicalPlan"]["source"]["source"]["rightSource"]
    right["source"] = {
        "@type": "tableFilterV1",
        "properties": {"queryContext": "WhereFilter"},
        "filterExpression": "(CITY IS NOT NULL)",
        "source": right["source"],
    }
    steps = _query_steps(_translate(plan, spec))  # after KAFKA-10077: a delete only after a passing row
    assert any(isinstance(x, s.TableFilterV3) for x in steps)
    spec["version"] = "6.0.0"  # before KAFKA-10077: every failing row deletes its key, qtt's TableFilterV1
    steps = _query_steps(_translate(plan, spec))
    assert any(isinstance(x, s.TableFilterV1) for x in steps)


def test_an_expression_that_does_not_type_is_a_statement_error() -> None:
    plan, spec = _read("parcels_-_heavy_parcels")
    plan["plan"][1]["queryPlan"]["physicalPlan"]["source"]["source"]["filterExpression"] = "(NO_SUCH_COLUMN > 1)"
    with pytest.raises(StatementError, match="NO_SUCH_COLUMN"):
        _translate(plan, spec)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ID AS KSQL_INTERNAL_COL_0", ("ID", "KSQL_INTERNAL_COL_0")),
        ("CAST(X AS INTEGER) AS Y", ("CAST(X AS INTEGER)", "Y")),
        ("ROUND(V, -1) AS 1R", ("ROUND(V, -1)", "1R")),
        ("'a AS b' AS `odd name`", ("'a AS b'", "odd name")),
    ],
)
def test_a_select_expression_splits_at_its_last_alias(text: str, expected: tuple[str, str]) -> None:
    assert split_alias(text) == expected


def test_a_window_of_later_releases_is_json_and_durations_are_seconds() -> None:
    window = fields.window(
        {
            "windowType": "HOPPING",
            "size": {"value": 30, "timeUnit": "SECONDS"},
            "advanceBy": {"value": 10, "timeUnit": "SECONDS"},
            "gracePeriod": {"value": 0, "timeUnit": "MILLISECONDS"},
            "retention": None,
            "emitStrategy": "FINAL",
        }
    )
    assert (window.size_ms, window.advance_ms, window.grace_ms, window.emit_final) == (30_000, 10_000, 0, True)
    assert fields.seconds_ms(0.002) == 2 and fields.seconds_ms("30.000000000") == 30_000
    older = {"keyFormat": {"format": "KAFKA"}, "valueFormat": {"format": "JSON"}, "options": ["UNWRAP_SINGLE_VALUES"]}
    later = {"keyFormat": {"format": "JSON"}, "valueFormat": {"format": "JSON"}, "keyFeatures": ["UNWRAP_SINGLES"]}
    assert fields.formats(older).value_features == ("UNWRAP_SINGLE_VALUE",)
    assert fields.formats({**later, "valueFeatures": ["WRAP_SINGLES"]}).value_features == ("WRAP_SINGLE_VALUE",)
    assert fields.formats(later).key_features == ()


def test_a_decimal_wider_than_spark_s_is_a_skip_naming_it() -> None:
    assert fields.schema("`K` DECIMAL(38, 2) KEY").columns[0].type == t.Decimal(38, 2)
    with pytest.raises(UnsupportedFeatureError, match=r"DECIMAL\(64, 2\): Spark's decimals hold at most 38 digits"):
        fields.schema("`K` STRING KEY, `V` ARRAY<DECIMAL(64, 2)>")


def test_a_re_key_by_a_struct_field_names_the_key_after_the_field_when_ksqldb_recorded_no_schema() -> None:
    from qtt.plan.ksqldb.context import StepContext
    from qtt.plan.ksqldb.projections import key_names

    struct = t.Struct((("DEPOT", t.STRING),))
    field = e.FieldRef(base=e.ColumnRef(name="ROUTE", sql_type=struct), name="DEPOT", sql_type=t.STRING)
    column = e.ColumnRef(name="ID", sql_type=t.STRING)
    call = e.Call(name="UCASE", args=(column,), sql_type=t.STRING)
    raw = {"properties": {"queryContext": "LeftSourceKeyed"}}
    assert key_names(StepContext(query_id="CSAS_OUT_0"), raw, [field]) == ["DEPOT"]
    assert key_names(StepContext(query_id="CSAS_OUT_0"), raw, [column, call]) == ["ID", "KSQL_COL_1"]


def test_a_table_function_becomes_qtt_s_flat_map_with_ksqldb_s_synthesised_column() -> None:
    steps = _query_steps(_translate(*_read("parcels_-_items_of_each_shipment")))
    flat_map = next(x for x in steps if isinstance(x, s.StreamFlatMapV1))
    (call,) = flat_map.table_functions
    assert call.alias == "KSQL_SYNTH_0"
    assert isinstance(call.expression, e.Call) and call.expression.name == "EXPLODE"
    project = next(x for x in steps if isinstance(x, s.StreamSelectV1))
    assert [(x.alias, type(x.expression).__name__) for x in project.select_expressions][1] == ("ITEM", "ColumnRef")


def test_a_table_function_that_is_not_a_call_does_not_translate() -> None:
    plan, spec = _read("parcels_-_items_of_each_shipment")
    flat_map = plan["plan"][1]["queryPlan"]["physicalPlan"]["source"]["source"]
    flat_map["tableFunctions"] = ["ITEMS"]
    with pytest.raises(Untranslatable, match="streamFlatMapV1: a table function that is not a call: ITEMS"):
        _translate(plan, spec)


@pytest.mark.parametrize("field", ["leftJoinExpression", "leftJoinColumnName"])
def test_a_foreign_key_join_is_keyed_by_the_left_key_and_reads_its_foreign_key_over_the_left(field: str) -> None:
    plan, spec = _read("parcels_-_orders_named_by_customer")
    raw = plan["plan"][2]["queryPlan"]["physicalPlan"]["source"]["source"]
    raw[field] = raw.pop("leftJoinExpression")  # the first releases named a column, later ones an expression
    join = next(x for x in _query_steps(_translate(plan, spec)) if isinstance(x, js.ForeignKeyTableTableJoinV1))
    assert (join.join_type, join.key_col_name) == ("LEFT", "O_ID")
    assert join.left_join_expression == e.ColumnRef(name="O_CUSTOMER", sql_type=t.STRING)


@pytest.mark.parametrize("value_format", ["AVRO", "PROTOBUF"])
def test_ksqldb_s_avro_and_protobuf_formats_take_the_writer_that_writes_maps_as_connect_s_entries(
    value_format: str,
) -> None:
    raw = {"keyFormat": {"format": "KAFKA"}, "valueFormat": {"format": value_format}}
    formats = fields.formats(raw)
    assert (formats.key_format.writer_version, formats.value_format.writer_version) == (1, 2)


def test_a_having_of_an_early_release_deletes_only_a_group_that_had_passed() -> None:
    plan, spec = _read("parcels_-_weight_per_depot")
    project = plan["plan"][1]["queryPlan"]["physicalPlan"]["source"]
    assert project["source"]["@type"] == "streamAggregateV1"
    project["source"] = {
        "@type": "tableFilterV1",
        "properties": {"queryContext": "Aggregate/HavingFilter"},
        "filterExpression": "(KSQL_AGG_VARIABLE_0 > 10)",
        "source": project["source"],
    }
    spec["version"] = "6.0.0"  # before KAFKA-10077, and still: an aggregate sends the filter its old rows
    steps = _query_steps(_translate(plan, spec))
    assert any(isinstance(x, s.TableFilterV2) for x in steps)
    assert not any(isinstance(x, s.TableFilterV1) for x in steps)


def test_a_join_that_names_no_key_takes_the_rowkey_ksqldb_recorded_even_over_a_side_re_keyed_by_a_column() -> None:
    plan, spec = _read("parcels_-_parcels_routed_to_their_depot_city")
    join = plan["plan"][2]["queryPlan"]["physicalPlan"]["source"]["source"]
    del join["keyColName"]  # as before 0.10, where every key was ROWKEY
    query_id = plan["plan"][2]["queryPlan"]["queryId"]
    spec["schemas"][f"{query_id}.Join"] = {"schema": "`ROWKEY` STRING KEY, `P_DEPOT` STRING, `P_ID` STRING"}
    translated = next(x for x in _query_steps(_translate(plan, spec)) if isinstance(x, js.StreamTableJoinV1))
    assert translated.key_col_name == "ROWKEY"
    del spec["schemas"][f"{query_id}.Join"]  # nothing recorded: the left side's key names it
    translated = next(x for x in _query_steps(_translate(plan, spec)) if isinstance(x, js.StreamTableJoinV1))
    assert translated.key_col_name == "P_DEPOT"


def _partitioned_parcels(rekey: str) -> dict[str, Any]:
    """The heavy parcels' plan re-keyed by WEIGHT (``PARTITION BY WEIGHT``) with step ``rekey``."""
    plan, _ = _read("parcels_-_heavy_parcels")
    project = plan["plan"][1]["queryPlan"]["physicalPlan"]["source"]
    where = project["source"]
    project["source"] = {
        "@type": rekey,
        "properties": {"queryContext": "PartitionBy"},
        "source": where,
        "keyExpression": "WEIGHT" if rekey == "streamSelectKeyV1" else ["WEIGHT"],
    }
    project.pop("keyColumnNames")
    return plan


def test_a_first_release_re_key_drops_a_row_whose_new_key_is_null_and_names_the_key_rowkey() -> None:
    planned = translate_plan(
        _partitioned_parcels("streamSelectKeyV1"), release="5.5.0", recorded={}, partitions={}, properties={}
    )
    rekey = next(x for x in _query_steps(planned) if isinstance(x, s.StreamSelectKeyV1))
    assert [k.alias for k in rekey.key_expressions] == ["ROWKEY"]
    assert isinstance(rekey.source, s.StreamFilterV1)
    assert rekey.source.filter_expression == e.IsNull(
        operand=e.ColumnRef(name="WEIGHT", sql_type=t.INTEGER), negated=True
    )
    assert isinstance(rekey.source.source, s.StreamFilterV1)  # the WHERE, then the null-key filter

    later = translate_plan(
        _partitioned_parcels("streamSelectKeyV2"), release="6.0.0", recorded={}, partitions={}, properties={}
    )
    rekey = next(x for x in _query_steps(later) if isinstance(x, s.StreamSelectKeyV1))
    assert [k.alias for k in rekey.key_expressions] == ["WEIGHT"]
    assert isinstance(rekey.source, s.StreamFilterV1) and rekey.source.context == "WhereFilter"


def test_a_first_release_projection_that_outputs_its_key_in_the_value_too_keys_it_as_rowkey() -> None:
    plan, spec = _read("parcels_-_weight_per_depot")
    project = plan["plan"][1]["queryPlan"]["physicalPlan"]["source"]
    project.pop("keyColumnNames")  # a plan of ksqlDB before 0.10
    # the grouping key (KSQL_COL_0) copied into the value, and a count named like it
    for values in (["KSQL_COL_0 AS KSQL_COL_0", "KSQL_AGG_VARIABLE_0 AS TOTAL"], ["KSQL_AGG_VARIABLE_1 AS KSQL_COL_0"]):
        project["selectExpressions"] = values
        select = next(x for x in _query_steps(_translate(plan, spec)) if isinstance(x, s.TableSelectV1))
        assert select.key_column_names == ("ROWKEY",)
        assert [x.alias for x in select.select_expressions] == ["ROWKEY", *(v.rpartition(" AS ")[2] for v in values)]
    # a later plan names its key as it says
    plan, spec = _read("parcels_-_weight_per_depot")
    select = next(x for x in _query_steps(_translate(plan, spec)) if isinstance(x, s.TableSelectV1))
    assert select.key_column_names == ("DEPOT",)


def test_a_recorded_schema_with_its_key_named_like_a_value_column_compares_with_the_key_as_rowkey() -> None:
    assert rowkey_named("`ID` BIGINT KEY, `ID` BIGINT, `N` INTEGER") == "`ROWKEY` BIGINT KEY, `ID` BIGINT, `N` INTEGER"
    assert rowkey_named("`ID` BIGINT KEY, `N` INTEGER") == "`ID` BIGINT KEY, `N` INTEGER"
    assert rowkey_named("`A` INT KEY, `B` INT KEY, `A` INT") == "`A` INT KEY, `B` INT KEY, `A` INT"
    assert rowkey_named("not a schema") == "not a schema"
