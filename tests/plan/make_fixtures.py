"""Add the missing tests/plan/fixtures/tags/*.json: one canonical example per registered tag.

Run by hand after adding a tag (`python tests/plan/make_fixtures.py`). It writes a fixture only
for a tag that has none and never rewrites one: a fixture is the frozen shape of a shipped tag,
so a change to that shape fails its round trip instead of following the code.
"""

from __future__ import annotations

from pathlib import Path

from qtt import sqltypes as t
from qtt.plan.ir import codec
from qtt.plan.ir import expressions as e
from qtt.plan.ir import gate_steps as gs
from qtt.plan.ir import join_steps as js
from qtt.plan.ir import steps as s
from qtt.plan.ir import suppress_steps as ss
from qtt.plan.ir.schema import LogicalSchema

HERE = Path(__file__).parent / "fixtures" / "tags"

FORMATS = s.Formats(key_format=s.FormatInfo(format="KAFKA"), value_format=s.FormatInfo(format="JSON"))
SCHEMA = LogicalSchema.parse("`K` STRING KEY, `ID` BIGINT, `NAME` STRING")
SOURCE = s.StreamSourceV1(
    context="KsqlTopic/Source", topic="in", source_name="IN", source_schema=SCHEMA, formats=FORMATS
)
ID = e.ColumnRef(name="ID", sql_type=t.BIGINT)
NAME = e.ColumnRef(name="NAME", sql_type=t.STRING)
ONE = e.Literal(value=1, sql_type=t.INTEGER)


def examples() -> dict[str, object]:
    arr = e.CreateArray(items=(ONE,), sql_type=t.Array(t.INTEGER))
    return {
        # steps
        "streamSourceV1": SOURCE,
        "streamFilterV1": s.StreamFilterV1(
            context="WhereFilter", source=SOURCE, filter_expression=e.Comparison(op=">", left=ID, right=ONE)
        ),
        "streamSelectV1": s.StreamSelectV1(
            context="Project",
            source=SOURCE,
            key_column_names=("K",),
            select_expressions=(s.SelectExpression(alias="NAME", expression=NAME),),
        ),
        "streamSelectKeyV1": s.StreamSelectKeyV1(
            context="PartitionBy", source=SOURCE, key_expressions=(s.SelectExpression(alias="ID", expression=ID),)
        ),
        "streamSelectKeyV2": s.StreamSelectKeyV2(
            context="LeftSourceKeyed",
            source=SOURCE,
            key_expressions=(s.SelectExpression(alias="ID", expression=ID),),
            repartition_name="Join",
        ),
        "streamFlatMapV1": s.StreamFlatMapV1(
            context="FlatMap",
            source=SOURCE,
            table_functions=(
                s.SelectExpression(
                    alias="KSQL_SYNTH_0", expression=e.Call(name="EXPLODE", args=(arr,), sql_type=t.INTEGER)
                ),
            ),
        ),
        "streamSinkV1": s.StreamSinkV1(context="KsqlTopic/Sink", source=SOURCE, topic="out", formats=FORMATS),
        "streamSinkV2": s.StreamSinkV2(
            context="KsqlTopic/Sink", source=SOURCE, topic="out", formats=FORMATS, partitions=4
        ),
        "tableSourceV1": s.TableSourceV1(
            context="KsqlTopic/Source", topic="in", source_name="IN", source_schema=SCHEMA, formats=FORMATS
        ),
        "tableFilterV1": s.TableFilterV1(
            context="WhereFilter", source=SOURCE, filter_expression=e.Comparison(op=">", left=ID, right=ONE)
        ),
        "tableFilterV2": s.TableFilterV2(
            context="WhereFilter", source=SOURCE, filter_expression=e.Comparison(op=">", left=ID, right=ONE)
        ),
        "tableFilterV3": s.TableFilterV3(
            context="WhereFilter", source=SOURCE, filter_expression=e.Comparison(op=">", left=ID, right=ONE)
        ),
        "tableSelectV1": s.TableSelectV1(
            context="Project",
            source=SOURCE,
            key_column_names=("K",),
            select_expressions=(s.SelectExpression(alias="NAME", expression=NAME),),
        ),
        "tableSinkV1": s.TableSinkV1(
            context="KsqlTopic/Sink", source=SOURCE, topic="out", formats=FORMATS, partitions=2
        ),
        "streamGroupByV1": s.StreamGroupByV1(
            context="Aggregate/GroupBy",
            source=SOURCE,
            group_by_expressions=(s.SelectExpression(alias="NAME", expression=NAME),),
        ),
        "streamAggregateV1": s.StreamAggregateV1(
            context="Aggregate/Aggregate",
            source=SOURCE,
            aggregations=(
                s.AggregateCall(
                    alias="KSQL_AGG_VARIABLE_0",
                    function="TOPK",
                    args=(ID,),
                    params=(2,),
                    return_type=t.Array(t.BIGINT),
                    state_type=t.Array(t.BIGINT),
                ),
            ),
        ),
        "tableGroupByV1": s.TableGroupByV1(
            context="Aggregate/GroupBy",
            source=SOURCE,
            group_by_expressions=(s.SelectExpression(alias="NAME", expression=NAME),),
            argument_expressions=(s.SelectExpression(alias="KSQL_INTERNAL_COL_0", expression=ID),),
        ),
        "tableAggregateV1": s.TableAggregateV1(
            context="Aggregate/Aggregate",
            source=SOURCE,
            aggregations=(
                s.AggregateCall(
                    alias="KSQL_AGG_VARIABLE_0",
                    function="COUNT",
                    args=(),
                    params=(),
                    return_type=t.BIGINT,
                    state_type=t.BIGINT,
                ),
            ),
        ),
        # commands
        "tableAggregateV2": s.TableAggregateV2(
            context="Aggregate/Aggregate",
            source=SOURCE,
            aggregations=(
                s.AggregateCall(
                    alias="KSQL_AGG_VARIABLE_0",
                    function="COUNT",
                    args=(),
                    params=(),
                    return_type=t.BIGINT,
                    state_type=t.BIGINT,
                ),
            ),
        ),
        "streamWindowedAggregateV1": s.StreamWindowedAggregateV1(
            context="Aggregate/Aggregate",
            source=SOURCE,
            aggregations=(
                s.AggregateCall(
                    alias="KSQL_AGG_VARIABLE_0",
                    function="MAX",
                    args=(ID,),
                    params=(),
                    return_type=t.BIGINT,
                    state_type=t.BIGINT,
                ),
            ),
            window=s.WindowExpression(
                type="HOPPING", size_ms=30_000, advance_ms=10_000, grace_ms=60_000, retention_ms=90_000
            ),
            internal_formats=FORMATS,
        ),
        "startGateV1": gs.StartGateV1(context="StartGate", source=SOURCE, replaces="CSAS_OUT_0", source_topics=("in",)),
        "stopGateV1": gs.StopGateV1(context="StopGate", source=SOURCE, offsets=((0, 7), (1, 3))),
        "tableSuppressV1": ss.TableSuppressV1(
            context="Suppress",
            source=SOURCE,
            window=s.WindowExpression(
                type="TUMBLING", size_ms=60_000, advance_ms=60_000, grace_ms=0, retention_ms=60_000
            ),
            internal_formats=FORMATS,
        ),
        "streamTableJoinV1": js.StreamTableJoinV1(
            context="Join",
            left_source=SOURCE,
            right_source=s.TableSourceV1(
                context="KafkaTopic_Right/Source", topic="t", source_name="T", source_schema=SCHEMA, formats=FORMATS
            ),
            join_type="LEFT",
            key_col_name="K",
            internal_formats=FORMATS,
        ),
        "streamStreamJoinV1": js.StreamStreamJoinV1(
            context="Join",
            left_source=SOURCE,
            right_source=s.StreamSourceV1(
                context="KafkaTopic_Right/Source", topic="u", source_name="U", source_schema=SCHEMA, formats=FORMATS
            ),
            join_type="INNER",
            key_col_name="K",
            before_ms=1000,
            after_ms=2000,
            internal_formats=FORMATS,
        ),
        "streamStreamJoinV2": js.StreamStreamJoinV2(
            context="Join",
            left_source=SOURCE,
            right_source=s.StreamSourceV1(
                context="KafkaTopic_Right/Source", topic="u", source_name="U", source_schema=SCHEMA, formats=FORMATS
            ),
            join_type="OUTER",
            key_col_name="K",
            before_ms=1000,
            after_ms=2000,
            grace_ms=500,
            internal_formats=FORMATS,
        ),
        "tableTableJoinV1": js.TableTableJoinV1(
            context="Join",
            left_source=s.TableSourceV1(
                context="KafkaTopic_Left/Source", topic="t", source_name="T", source_schema=SCHEMA, formats=FORMATS
            ),
            right_source=s.TableSourceV1(
                context="KafkaTopic_Right/Source", topic="u", source_name="U", source_schema=SCHEMA, formats=FORMATS
            ),
            join_type="OUTER",
            key_col_name="ROWKEY",
        ),
        "fkTableTableJoinV1": js.ForeignKeyTableTableJoinV1(
            context="Join",
            left_source=s.TableSourceV1(
                context="KafkaTopic_Left/Source", topic="t", source_name="T", source_schema=SCHEMA, formats=FORMATS
            ),
            right_source=s.TableSourceV1(
                context="KafkaTopic_Right/Source", topic="u", source_name="U", source_schema=SCHEMA, formats=FORMATS
            ),
            join_type="LEFT",
            key_col_name="T_K",
            left_join_expression=ID,
            internal_formats=FORMATS,
        ),
        # commands
        "createTableV1": s.CreateTableV1(source_name="T", schema=SCHEMA, topic="t", formats=FORMATS),
        "createStreamV1": s.CreateStreamV1(source_name="IN", schema=SCHEMA, topic="in", formats=FORMATS),
        "dropSourceV1": s.DropSourceV1(source_name="IN"),
        "ksqlPlanV1": s.KsqlPlanV1(statement_text="DROP STREAM IN", ddl_command=s.DropSourceV1(source_name="IN")),
        # expressions
        "column": ID,
        "literal": e.Literal(value="1.50", sql_type=t.Decimal(3, 2)),
        "arithmetic": e.Arithmetic(op="+", left=ID, right=ONE, sql_type=t.BIGINT),
        "negate": e.Negate(operand=ID, sql_type=t.BIGINT),
        "comparison": e.Comparison(op="<=", left=ID, right=ONE),
        "distinctFrom": e.DistinctFrom(left=ID, right=ONE, negated=True),
        "and": e.And(
            left=e.IsNull(operand=ID, negated=False), right=e.Not(operand=e.IsNull(operand=NAME, negated=True))
        ),
        "or": e.Or(left=e.IsNull(operand=ID, negated=False), right=e.IsNull(operand=NAME, negated=False)),
        "not": e.Not(operand=e.IsNull(operand=ID, negated=False)),
        "isNull": e.IsNull(operand=NAME, negated=True),
        "like": e.Like(value=NAME, pattern=e.Literal(value="a%", sql_type=t.STRING), escape="!", negated=False),
        "between": e.Between(value=ID, low=ONE, high=ONE, negated=False),
        "in": e.InList(value=ID, items=(ONE,), negated=True),
        "structuredIn": e.StructuredInList(value=arr, items=(arr,), negated=False),
        "mixedEquality": e.MixedEquality(
            op="=", left=arr, right=e.CreateArray(items=(ID,), sql_type=t.Array(t.BIGINT))
        ),
        "case": e.Case(
            whens=(e.When(condition=e.IsNull(operand=ID, negated=False), result=NAME),), default=None, sql_type=t.STRING
        ),
        "cast": e.Cast(operand=ID, sql_type=t.STRING),
        "call": e.Call(name="UCASE", args=(NAME,), sql_type=t.STRING),
        "subscript": e.Subscript(base=arr, index=ONE, sql_type=t.INTEGER),
        "field": e.FieldRef(
            base=e.CreateStruct(
                fields=(e.StructFieldValue(name="A", value=ONE),), sql_type=t.Struct((t.Field("A", t.INTEGER),))
            ),
            name="A",
            sql_type=t.INTEGER,
        ),
        "array": arr,
        "map": e.CreateMap(entries=(e.MapEntry(key=NAME, value=ONE),), sql_type=t.Map(t.STRING, t.INTEGER)),
        "struct": e.CreateStruct(
            fields=(e.StructFieldValue(name="A", value=ONE),), sql_type=t.Struct((t.Field("A", t.INTEGER),))
        ),
        "lambdaVariable": e.LambdaVariable(name="X", sql_type=t.INTEGER),
        "lambda": e.Lambda(params=("X",), body=e.LambdaVariable(name="X", sql_type=t.INTEGER), sql_type=t.INTEGER),
        "intervalUnit": e.IntervalUnit(unit="SECOND"),
    }


def write_missing(folder: Path = HERE) -> list[str]:
    """Write the fixture of every tag that has none in ``folder``; return the tags written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for tag, value in examples().items():
        path = folder / f"{tag}.json"
        if not path.exists():
            path.write_text(codec.dumps(value), encoding="utf-8")
            written.append(tag)
    return written


if __name__ == "__main__":
    added = write_missing()
    print(f"added {len(added)} fixture(s): {', '.join(added) or 'none'}; existing fixtures are never rewritten")
