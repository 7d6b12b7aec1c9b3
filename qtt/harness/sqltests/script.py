"""Interpret a SQL test's statements in order, without Spark.

DDL and persistent queries are planned as in a case (:mod:`qtt.plan.statements`). ``INSERT
INTO ... VALUES`` rows become input records, typed by the target's columns. ``ASSERT`` statements
become checks, each seeing only the records that the inserts before it caused. Where the plan
changes after records were inserted (``CREATE OR REPLACE`` of a running query), a new *epoch*
begins: its plan resumes each query's offsets and state where the epoch before left them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from qtt import sqltypes as t
from qtt.errors import AssertionFailedError, QttError, SqlError, StatementError, UnsupportedFeatureError
from qtt.harness.replay.runner import evaluate_constant
from qtt.harness.sqltests.files import SqlTest
from qtt.plan.analysis.expression_errors import with_error_scope
from qtt.plan.ddl.metastore import TABLE, DataSource
from qtt.plan.ddl.replaced import current_plan
from qtt.plan.ddl.sql_schema import namespace_of
from qtt.plan.inserts import PSEUDO_COLUMNS, Insert, inserted_row, typed_values
from qtt.plan.ir import steps as s
from qtt.plan.ir.depth import deep_call
from qtt.plan.ir.schema import Column, LogicalSchema
from qtt.plan.statements import Planner, start_gate
from qtt.sql import ast, parse_statements
from qtt.sql.formatter import format_expr


@dataclass(frozen=True)
class Check:
    """An ``ASSERT VALUES`` or ``ASSERT NULL VALUES``: the source's next record, typed.

    ``expected`` maps each asserted column (``ROWTIME`` too) to its typed value; a tombstone
    check expects a null value. The check sees the records of the first ``seen`` inserts.
    """

    statement: ast.Statement
    source: DataSource
    expected: dict[str, Any]
    tombstone: bool
    seen: int


@dataclass
class Epoch:
    """The inserts from ``first`` on, replayed through ``plan`` until the plan changes.

    ``controls`` are the control events a swap-in-place upgrade writes before the epoch's first
    insert: per source topic of a query swapped in, its name and partition count (one control
    event per partition).
    """

    plan: s.Plan
    first: int
    controls: tuple[tuple[str, int], ...] = ()


@dataclass
class Script:
    """A SQL test, interpreted: its epochs, inserts and checks, and the error that ended it."""

    test: SqlTest
    epochs: list[Epoch] = field(default_factory=list)
    inserts: list[Insert] = field(default_factory=list)
    #: checks and failed ``ASSERT STREAM|TABLE`` statements, in statement order
    checks: list[Check | QttError] = field(default_factory=list)
    #: the error of the statement that ended the test early, if one did
    error: QttError | None = None


def interpret(test: SqlTest) -> Script:
    """Plan the test's statements in order.

    Raises:
        SqlSyntaxError: the test does not parse.
        UnsupportedFeatureError: a statement needs what qtt's SQL tests cannot do yet.
    """
    statements = deep_call(lambda: parse_statements(test.script))
    script = Script(test)
    planner = Planner({}, evaluate=evaluate_constant)
    planned: list[s.StatementPlan] = []
    for statement in statements:
        try:
            _step(script, planner, planned, statement)
        except QttError as error:
            if statement.pos is not None and error.line is None:
                error.at(line=statement.pos.line, column=statement.pos.column)
            if isinstance(error, UnsupportedFeatureError):
                raise
            script.error = error
            break
    return script


def _step(script: Script, planner: Planner, planned: list[s.StatementPlan], statement: ast.Statement) -> None:
    if isinstance(statement, ast.InsertValues):
        plan = with_error_scope(current_plan(planner.config, planned))
        if not script.epochs or script.epochs[-1].plan != plan:
            _begin_epoch(script, plan, planner.topic_partitions)
        script.inserts.append(inserted_row(planner.insert_values_target(statement), statement, planner.evaluate))
    elif isinstance(statement, ast.AssertValues | ast.AssertTombstone):
        script.checks.append(_check(planner, statement, len(script.inserts)))
    elif isinstance(statement, ast.AssertSource):
        problem = _source_problem(planner, statement)
        if problem is not None:
            script.checks.append(problem.at(line=statement.pos.line if statement.pos else None))
    elif isinstance(statement, ast.RunScript):
        raise UnsupportedFeatureError(f"RUN SCRIPT {statement.path!r} (the script is not part of the test file)")
    else:
        statement_plan = planner.plan(statement)
        if statement_plan is not None:
            planned.append(statement_plan)


def _begin_epoch(script: Script, plan: s.Plan, partitions: dict[str, int]) -> None:
    """A new plan from the next insert on. A query it starts reads only the records inserted from
    then on, as in ksqlDB's test driver, which pipes each record to the queries running then;
    a query swapped in place reads them all, and the control events are written first."""
    first = len(script.inserts)
    before = {q.query_id for q in script.epochs[-1].plan.queries()} if script.epochs else set()
    topics = sorted(
        {
            topic
            for query in plan.queries()
            if query.query_id not in before and (gate := start_gate(query)) is not None
            for topic in gate.source_topics
        }
    )
    controls = tuple((topic, partitions.get(topic, 1)) for topic in topics)
    if script.epochs and script.epochs[-1].first == first:  # no record went through the old plan
        script.epochs[-1].plan = plan
        script.epochs[-1].controls = tuple(dict.fromkeys(script.epochs[-1].controls + controls))
        return
    script.epochs.append(Epoch(plan, first, controls))


def _check(planner: Planner, statement: ast.AssertValues | ast.AssertTombstone, seen: int) -> Check:
    """The record an ``ASSERT [NULL] VALUES`` expects, built as ksqlDB's ``AssertExecutor`` builds
    it: with the ``GenericRecordFactory`` of an insert (no column list means every key and value
    column; a table's key is required), and a deletion naming no value but null."""
    source = planner.sources.get(statement.source)
    if source is None:
        raise StatementError(f"Cannot find source {statement.source}: it does not exist")
    tombstone = isinstance(statement, ast.AssertTombstone)
    exprs = statement.key if isinstance(statement, ast.AssertTombstone) else statement.values
    schema = source.schema
    columns = statement.columns or tuple(c.name for c in (*schema.key, *schema.value))
    if len(columns) != len(exprs):
        named = ", ".join(t.quote(name) for name in statement.columns)
        got = ", ".join(format_expr(e) for e in exprs)
        raise StatementError(f"Expected a value for each column. Expected Columns: [{named}]. Got [{got}]")
    for name in columns:
        if name in PSEUDO_COLUMNS[1:]:  # ROWPARTITION and ROWOFFSET exist, but take no value
            raise StatementError(f"Inserting into column {t.quote(name)} is not allowed.")
    expected = typed_values(schema, dict(zip(columns, exprs, strict=True)), planner.evaluate)
    missing = [c.name for c in schema.key if c.name not in expected]
    if source.kind == TABLE and missing:
        raise SqlError(f"Value for primary key column(s) {', '.join(missing)} is required for tables")
    if tombstone and any(expected.get(c.name) is not None for c in schema.value):
        raise AssertionFailedError("Unexpected value columns specified in ASSERT NULL VALUES.")
    return Check(statement, source, expected, tombstone, seen)


def _source_problem(planner: Planner, statement: ast.AssertSource) -> QttError | None:
    """Why ``ASSERT STREAM|TABLE`` does not hold, as ksqlDB's ``AssertExecutor`` words it; None
    when it does. Every property is compared, named or not, in ksqlDB's order."""
    name = statement.name
    source = planner.sources.get(name)
    if source is None:  # ksqlDB's AssertExecutor reads the missing source: a NullPointerException
        return SqlError(f"Expected {statement.kind.lower()} {name} to exist but it does not")
    for what, wanted, actual, optional in _must_match(statement, source):
        if wanted != actual:
            show = _optional if optional else _java
            return SqlError(
                f"Expected {what} does not match actual for source {name}.\n"
                f"\tExpected: {show(wanted)}\n\tActual: {show(actual)}"
            )
    return None


def _must_match(statement: ast.AssertSource, source: DataSource) -> Sequence[tuple[str, Any, Any, bool]]:
    """(what, expected, actual, shown as a Java ``Optional``) for each property that ksqlDB's
    ``AssertExecutor.MUST_MATCH`` compares. One the statement does not name expects its default:
    no columns, no topic, the KAFKA key format, no value format, no serde feature, no timestamp."""
    given = {k.upper(): v for k, v in statement.properties.items()}
    both = _upper(given.get("FORMAT"))
    formats = source.formats
    timestamp = source.timestamp_column
    wrap = given.get("WRAP_SINGLE_VALUE")
    features: tuple[str, ...] = ()
    if wrap is not None:
        features = ("WRAP_SINGLE_VALUE",) if str(wrap).lower() == "true" else ("UNWRAP_SINGLE_VALUE",)
    schema = LogicalSchema(
        tuple(Column(e.name, e.type, namespace_of(e.constraint), e.header_key) for e in statement.elements)
    )
    return [
        ("schema", schema, source.schema, False),
        ("type", f"K{statement.kind}", f"K{source.kind}", False),
        ("kafka topic", given.get("KAFKA_TOPIC"), source.topic, False),
        ("key format", _upper(given.get("KEY_FORMAT")) or both or "KAFKA", formats.key_format.format, False),
        ("value format", _upper(given.get("VALUE_FORMAT")) or both, formats.value_format.format, False),
        ("value serde features", features, tuple(formats.value_features), False),
        ("timestamp column", _column(given.get("TIMESTAMP")), timestamp.column if timestamp else None, True),
        ("timestamp format", given.get("TIMESTAMP_FORMAT"), timestamp.format if timestamp else None, True),
    ]


def _column(value: object) -> str | None:
    """A column named in a property, as ksqlDB parses it: upper case unless back-quoted."""
    if value is None:
        return None
    text = str(value)
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] == "`" else text.upper()


def _optional(value: object) -> str:
    return "Optional.empty" if value is None else f"Optional[{value}]"


def _java(value: object) -> str:
    if value is None:
        return "null"
    return f"[{', '.join(value)}]" if isinstance(value, tuple) else str(value)


def _upper(value: object) -> str | None:
    return None if value is None else str(value).upper()
