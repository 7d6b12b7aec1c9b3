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

from qtt.errors import QttError, SqlError, StatementError, UnsupportedFeatureError
from qtt.harness.replay.runner import evaluate_constant
from qtt.harness.sqltests.files import SqlTest
from qtt.plan.ddl.metastore import DataSource
from qtt.plan.ddl.replaced import current_plan
from qtt.plan.ddl.sql_schema import namespace_of
from qtt.plan.inserts import Insert, inserted_row, typed_values
from qtt.plan.ir import steps as s
from qtt.plan.ir.depth import deep_call
from qtt.plan.ir.schema import Column, LogicalSchema
from qtt.plan.statements import Planner, start_gate
from qtt.sql import ast, parse_statements


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
        plan = current_plan(planner.config, planned)
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
    source = planner.sources.get(statement.source)
    if source is None:
        raise StatementError(f"Cannot find source {statement.source}: it does not exist")
    exprs = statement.values if isinstance(statement, ast.AssertValues) else statement.key
    columns = statement.columns
    if not columns:
        shown = source.schema.key if isinstance(statement, ast.AssertTombstone) else source.schema.columns
        columns = tuple(c.name for c in shown)
    if len(columns) != len(exprs):
        raise StatementError(f"Expected a value for each column. Expected Columns: {list(columns)}.")
    expected = typed_values(source.schema, dict(zip(columns, exprs, strict=True)), planner.evaluate)
    return Check(statement, source, expected, isinstance(statement, ast.AssertTombstone), seen)


def _source_problem(planner: Planner, statement: ast.AssertSource) -> QttError | None:
    """Why ``ASSERT STREAM|TABLE`` does not hold, as ksqlDB words it; None when it does."""
    name = statement.name
    source = planner.sources.get(name)
    if source is None:
        return SqlError(f"Expected {statement.kind.lower()} {name} to exist but it does not")
    if source.kind != statement.kind:
        return SqlError(f"Expected type does not match actual for source {name}")
    if statement.elements:
        expected = LogicalSchema(
            tuple(Column(e.name, e.type, namespace_of(e.constraint), e.header_key) for e in statement.elements)
        )
        if expected != source.schema:
            return SqlError(f"Expected schema does not match actual for source {name}: {expected} vs. {source.schema}")
    for what, wanted, actual in _properties(statement.properties, source):
        if wanted is not None and wanted != actual:
            return SqlError(f"Expected {what} does not match actual for source {name}.")
    return None


def _properties(properties: dict[str, object] | Any, source: DataSource) -> Sequence[tuple[str, Any, Any]]:
    """(what, expected or None, actual) for each property an ``ASSERT STREAM|TABLE`` may name."""
    given = {k.upper(): v for k, v in properties.items()}
    both = _upper(given.get("FORMAT"))
    formats = source.formats
    timestamp = source.timestamp_column
    wrap = given.get("WRAP_SINGLE_VALUE")
    wrapped = str(wrap).lower() == "true"
    features = None if wrap is None else ("WRAP_SINGLE_VALUE" if wrapped else "UNWRAP_SINGLE_VALUE",)
    return [
        ("kafka topic", given.get("KAFKA_TOPIC"), source.topic),
        ("key format", _upper(given.get("KEY_FORMAT")) or both, formats.key_format.format),
        ("value format", _upper(given.get("VALUE_FORMAT")) or both, formats.value_format.format),
        ("timestamp column", _upper(given.get("TIMESTAMP")), timestamp.column if timestamp else None),
        ("timestamp format", given.get("TIMESTAMP_FORMAT"), timestamp.format if timestamp else None),
        ("value serde features", features, tuple(formats.value_features)),
    ]


def _upper(value: object) -> str | None:
    return None if value is None else str(value).upper()
