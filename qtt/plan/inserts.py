"""``INSERT INTO ... VALUES`` rows as typed column values of their target, as ksqlDB coerces them.

SQL tests write them as input records (:mod:`qtt.harness.sqltests`); in a case file they are
records written before the case's inputs (:mod:`qtt.plan.statements`). A row without ``ROWTIME``
gets timestamp 0, not the wall clock ksqlDB's executor uses, so that every replay is the same.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qtt import sqltypes as t
from qtt.errors import SqlError, StatementError, UnsupportedFeatureError
from qtt.plan.ddl.metastore import TABLE, DataSource
from qtt.plan.insert_coercion import COMPUTED, Evaluate, inserted_value, literal_struct, refuse_column_references
from qtt.plan.ir.schema import LogicalSchema
from qtt.sql import ast
from qtt.sql.formatter import format_expr

ROWTIME = "ROWTIME"
#: ksqlDB's test driver's ``ksql.service.id``, which names its processing log's topic
_SERVICE_ID = "some.ksql.service.id"
#: ``ksql.readonly.topics``' default (``KsqlConfig.KSQL_READONLY_TOPICS_DEFAULT``): Kafka's,
#: Confluent's and Kafka Connect's own topics
_READONLY_TOPICS = (
    "_confluent.*,__confluent.*,_schemas,__consumer_offsets,__transaction_state,"
    "connect-configs,connect-offsets,connect-status,connect-statuses"
)
#: the pseudo columns an INSERT may name; it may give a value to ROWTIME only (``SystemColumns``)
PSEUDO_COLUMNS = (ROWTIME, "ROWPARTITION", "ROWOFFSET")


@dataclass(frozen=True)
class Insert:
    """One ``INSERT INTO ... VALUES`` row, as typed column values of its target."""

    source: DataSource
    key: tuple[Any, ...]
    value: tuple[Any, ...]
    timestamp: int

    def key_columns(self) -> dict[str, Any]:
        """The key's values by column name."""
        return dict(zip((c.name for c in self.source.schema.key), self.key, strict=True))

    def value_columns(self) -> dict[str, Any]:
        """The value's values by column name."""
        return dict(zip((c.name for c in self.source.schema.value), self.value, strict=True))


def refuse_read_only_topic(topic: str, settings: Mapping[str, object]) -> None:
    """ksqlDB's ``InsertValuesExecutor`` refuses to write a topic that ``ReservedInternalTopics``
    holds read-only: the processing log's, any under ksqlDB's internal prefix, and those
    ``ksql.readonly.topics`` lists (Java regular expressions, matched in full)."""
    service_id = str(settings.get("ksql.service.id", _SERVICE_ID))
    log_topic = str(settings.get("ksql.logging.processing.topic.name", "") or f"{service_id}ksql_processing_log")
    listed = str(settings.get("ksql.readonly.topics", _READONLY_TOPICS))
    patterns = [log_topic, "_confluent-ksql-.*", *(p.strip() for p in listed.split(",") if p.strip())]
    if re.fullmatch("|".join(patterns), topic):
        raise SqlError(f"Cannot insert values into read-only topic: {topic}")


def inserted_row(target: DataSource, statement: ast.InsertValues, evaluate: Evaluate | None = None) -> Insert:
    """The row an ``INSERT INTO ... VALUES`` writes, refused as ksqlDB's ``GenericRecordFactory``
    refuses it, after ``Failed to insert values into 'NAME'.`` as its executor says it. Without
    ``evaluate``, a value that is not a literal is not supported."""
    try:
        return _row(target, statement, evaluate)
    except StatementError as error:
        error.message = f"Failed to insert values into '{target.name}'. {error.message}"
        raise


def _row(target: DataSource, statement: ast.InsertValues, evaluate: Evaluate | None) -> Insert:
    schema = target.schema
    names = list(statement.columns) or [c.name for c in (*schema.key, *schema.value)]
    if len(names) != len(statement.values):
        expected = ", ".join(t.quote(name) for name in statement.columns)
        got = ", ".join(format_expr(value) for value in statement.values)
        raise StatementError(f"Expected a value for each column. Expected Columns: [{expected}]. Got [{got}]")
    known = set(schema.names())
    for name in names:
        if name not in known and name not in PSEUDO_COLUMNS:
            raise StatementError(f"Column name {t.quote(name)} does not exist.")
        if name in PSEUDO_COLUMNS[1:]:
            raise StatementError(f"Inserting into column {t.quote(name)} is not allowed.")
    typed = typed_values(schema, dict(zip(names, statement.values, strict=True)), evaluate)
    given_rowtime = ROWTIME in typed
    timestamp = typed.pop(ROWTIME, None)
    rowtime = 0 if timestamp is None else timestamp
    if target.kind == TABLE:
        missing = [c.name for c in schema.key if c.name not in typed]
        if missing:
            raise StatementError(f"Value for primary key column(s) {', '.join(missing)} is required for tables")
    if given_rowtime and timestamp is None:  # ksqlDB's record factory unboxes it: a NullPointerException
        raise StatementError("ROWTIME may not be null: it is the record's timestamp")
    key = tuple(typed.get(c.name) for c in schema.key)
    value = tuple(typed.get(c.name) for c in schema.value)
    if rowtime < 0:  # Kafka's ProducerRecord refuses it
        raise StatementError(f"Invalid timestamp: {rowtime}. Timestamp should always be non-negative or null.")
    return Insert(target, key, value, rowtime)


def typed_values(schema: LogicalSchema, given: dict[str, ast.Expr], evaluate: Evaluate | None = None) -> dict[str, Any]:
    """The values given to columns (``ROWTIME`` a BIGINT among them) as the columns' typed
    values, as ksqlDB's ``GenericRecordFactory`` resolves and coerces them, in the given order;
    ``evaluate`` gives a value that is not a literal."""
    types = {c.name: c.type for c in schema.columns} | {ROWTIME: t.BIGINT}
    typed: dict[str, Any] = {}
    for name, expr in given.items():
        if name not in types:
            raise StatementError(f"Column name {t.quote(name)} does not exist.")
        refuse_column_references(expr)
        try:
            value = literal_value(expr)
        except UnsupportedFeatureError:
            if evaluate is None:
                raise
            value = COMPUTED
        typed[name] = inserted_value(expr, value, types[name], name, evaluate)
    return typed


def literal_value(expr: ast.Expr) -> Any:
    """The value of a literal (the JSON-like value :func:`from_json` types)."""
    if isinstance(expr, ast.NullLiteral):
        return None
    if isinstance(expr, ast.BooleanLiteral | ast.IntegerLiteral | ast.StringLiteral):
        return expr.value
    if isinstance(expr, ast.DecimalLiteral):
        return decimal.Decimal(expr.text)
    if isinstance(expr, ast.DoubleLiteral):
        return float(expr.text)
    if isinstance(expr, ast.CreateArray):
        return [literal_value(item) for item in expr.items]
    if isinstance(expr, ast.CreateMap):
        return {literal_value(k): literal_value(v) for k, v in expr.entries}
    if isinstance(expr, ast.CreateStruct):
        return literal_struct({name: literal_value(value) for name, value in expr.fields})
    if isinstance(expr, ast.Negate | ast.UnaryPlus):
        inner = literal_value(expr.operand)
        if isinstance(inner, int | float | decimal.Decimal) and not isinstance(inner, bool):
            return -inner if isinstance(expr, ast.Negate) else inner
    raise UnsupportedFeatureError(f"a value that is not a literal in INSERT VALUES: {type(expr).__name__}")
