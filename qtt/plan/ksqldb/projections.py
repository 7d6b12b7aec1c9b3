"""ksqlDB's stateless row steps: select, filter, re-key (PARTITION BY).

A ksqlDB select lists value columns only; the source's key columns pass through, renamed to
``keyColumnNames`` (releases before 0.10 keep the key as it is). qtt's select lists every
output column, so the key columns are added as references to the source's keys.

ksqlDB's table filter changed under its step version: until 6.0 (Kafka Streams before
KAFKA-10077) a row of a source table that fails the filter deletes its key; from 6.1 a key is
deleted only if its previous row passed. An aggregate (``HAVING``) and a join send the filter
their old rows in every release, so over them a key is deleted only if its previous row passed:
qtt's :class:`~qtt.plan.ir.steps.TableFilterV2` (over a join from 6.1,
:class:`~qtt.plan.ir.steps.TableFilterV3`, as over any other table).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from qtt.plan.analysis.analyzer import ScopeColumn
from qtt.plan.ir import expressions as e
from qtt.plan.ir import join_steps as js
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import KEY, PSEUDO_COLUMNS, VALUE, Column, LogicalSchema
from qtt.plan.ksqldb import fields
from qtt.plan.ksqldb.context import StepContext, Translated, Untranslatable, query_context, translates
from qtt.plan.ksqldb.expressions import condition, select_expressions, typed

#: the key column of every source before ksqlDB 0.10
ROWKEY = "ROWKEY"
#: the first release whose table filter deletes a key only when its previous row passed
_FILTER_REMEMBERS_FROM = (6, 1)


def _select(context: StepContext, raw: Mapping[str, Any], sources: list[Translated], *, table: bool) -> Translated:
    (source,) = sources
    values = select_expressions(raw["selectExpressions"], source)
    old_keys = tuple(c for c in source.schema.key if c.name not in source.hidden_keys)
    new_names = list(raw.get("keyColumnNames") or [c.name for c in old_keys])
    if _key_named_rowkey(raw, old_keys, values):
        new_names = [ROWKEY]
    if len(new_names) != len(old_keys):
        raise Untranslatable(raw["@type"], f"{len(new_names)} key names for {len(old_keys)} key columns")
    keys = tuple(
        s.SelectExpression(alias=name, expression=e.ColumnRef(name=old.name, sql_type=old.type))
        for name, old in zip(new_names, old_keys, strict=True)
    )
    # ksqlDB may copy a key into the value under the key's own name (``A AS L_A`` beside the
    # key L_A); qtt's select names each column once, and the key column is that copy
    own = {k.alias: k.expression for k in keys}
    for value in values:
        if value.alias in own and value.expression != own[value.alias]:
            raise Untranslatable(raw["@type"], f"a value column {value.alias} named like a key column")
    # before 0.10 (no keyColumnNames) such a copy was output in the value too: a sink cannot have it
    both = tuple(v.alias for v in values if v.alias in own) if "keyColumnNames" not in raw else ()
    values = tuple(v for v in values if v.alias not in own and not _pseudo_as_itself(v))
    step_class = s.TableSelectV1 if table else s.StreamSelectV1
    step = step_class(
        context=query_context(raw),
        source=source.step,
        key_column_names=tuple(new_names),
        select_expressions=keys + values,
    )
    schema = LogicalSchema(
        tuple(Column(k.alias, k.expression.result_type, KEY) for k in keys)
        + tuple(Column(v.alias, v.expression.result_type, VALUE) for v in values)
    )
    renamed = {old.name: new for old, new in zip(old_keys, new_names, strict=True)}
    copies = {
        v.alias: renamed[key]
        for v in values
        if isinstance(v.expression, e.ColumnRef)
        and (key := source.key_copies.get(v.expression.name, v.expression.name)) in renamed
    }
    return Translated(
        step, schema, pseudo_of(source), is_table=table, window=source.window, key_copies=copies, key_and_value=both
    )


def _key_named_rowkey(raw: Mapping[str, Any], keys: Sequence[Column], values: Sequence[s.SelectExpression]) -> bool:
    """Whether a query's last projection before 0.10 (no ``keyColumnNames``) outputs a value
    column named like its one key column: ksqlDB's source then holds the key as ``ROWKEY`` (its
    DDL says so) and the value column beside it, where qtt's row cannot hold one name twice."""
    if "keyColumnNames" in raw or len(keys) != 1 or keys[0].name == ROWKEY:
        return False
    if query_context(raw).rsplit("/", 1)[-1] != "Project":
        return False
    return any(v.alias == keys[0].name for v in values)


def _pseudo_as_itself(value: s.SelectExpression) -> bool:
    """``ROWTIME AS ROWTIME``: ksqlDB's copy of a pseudo column into the value, for an aggregate
    to read; qtt's rows carry their pseudo columns through every step."""
    x = value.expression
    return isinstance(x, e.ColumnRef) and x.name == value.alias and value.alias in PSEUDO_COLUMNS


def pseudo_of(source: Translated) -> tuple[ScopeColumn, ...]:
    """The pseudo columns and window bounds a step's output keeps from its source."""
    return tuple(c for c in source.extra if c.input_name is None)


@translates("streamSelectV1")
def stream_select_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    return _select(context, raw, sources, table=False)


@translates("tableSelectV1")
def table_select_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    return _select(context, raw, sources, table=True)


@translates("streamFilterV1")
def stream_filter_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    (source,) = sources
    step = s.StreamFilterV1(
        context=query_context(raw), source=source.step, filter_expression=condition(raw["filterExpression"], source)
    )
    return dataclasses.replace(source, step=step)


@translates("tableFilterV1")
def table_filter_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    (source,) = sources
    predicate = condition(raw["filterExpression"], source)
    where = query_context(raw)
    step: s.ExecutionStep
    if isinstance(source.step, s.AggregateStep) or (
        isinstance(source.step, js.JoinStep) and context.release_tuple < _FILTER_REMEMBERS_FROM
    ):
        # an aggregate's and a join's table send the filter their old rows (before KAFKA-10077
        # too), so a failing row deletes only a key whose previous row passed
        step = s.TableFilterV2(context=where, source=source.step, filter_expression=predicate)
    elif context.release_tuple < _FILTER_REMEMBERS_FROM:
        step = s.TableFilterV1(context=where, source=source.step, filter_expression=predicate)
    else:
        step = s.TableFilterV3(context=where, source=source.step, filter_expression=predicate)
    return dataclasses.replace(source, step=step, is_table=True)


def key_names(
    context: StepContext, raw: Mapping[str, Any], expressions: Sequence[e.Expression], *, rowkey_era: bool = False
) -> list[str]:
    """The names of a re-keyed step's key columns: as ksqlDB recorded them, else ksqlDB's rule
    (a column keeps its name, a struct field takes the field's, any other expression is
    ``KSQL_COL_<i>``)."""
    recorded = context.recorded_schema(query_context(raw))
    if recorded is not None:
        names = [c.name for c in fields.schema(recorded).key]
        if len(names) == len(expressions):
            return names
    if rowkey_era and len(expressions) == 1:  # before 0.10 every key was ROWKEY
        return [ROWKEY]
    return [x.name if isinstance(x, e.ColumnRef | e.FieldRef) else f"KSQL_COL_{i}" for i, x in enumerate(expressions)]


def rekeyed_schema(source: Translated, keys: Sequence[s.SelectExpression]) -> LogicalSchema:
    """What qtt's re-key outputs: the new key, then the old values and old key columns."""
    names = {k.alias for k in keys}
    moved = [c for c in (*source.schema.value, *source.schema.key) if c.name not in names]
    unique = list({c.name: Column(c.name, c.type, VALUE) for c in moved}.values())
    return LogicalSchema(tuple(Column(k.alias, k.expression.result_type, KEY) for k in keys) + tuple(unique))


def _key_texts(raw: Mapping[str, Any]) -> list[str]:
    """A re-key's ``keyExpression``: one text before several key columns, a list since."""
    texts = raw["keyExpression"]
    return [texts] if isinstance(texts, str) else list(texts)


def _select_key(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    (source,) = sources
    texts = _key_texts(raw)
    if [text.strip().upper() for text in texts] == ["NULL"]:
        texts = []  # PARTITION BY NULL: no key column, every key null
    expressions = [typed(text, source, "PARTITION BY") for text in texts]
    where = query_context(raw)
    first_rekey = raw["@type"] == "streamSelectKeyV1"
    if source.window is not None:
        # ksqlDB re-keys a windowed join side by its own key columns to move it into the join's
        # key format (a registry key format forces the repartition); the window stays in the
        # key, so the rows and keys are the source's own, as qtt reads them already
        if first_rekey:  # which drops a row whose new key is null
            raise Untranslatable(raw["@type"], "re-keying a windowed stream")
        if expressions != [e.ColumnRef(name=c.name, sql_type=c.type) for c in source.schema.key]:
            raise Untranslatable(raw["@type"], "re-keying a windowed stream by other than its own key columns")
        return source
    # before 0.10 a PARTITION BY's new key is ROWKEY (a join side's re-key keeps its column's
    # name, and the old ROWKEY stays readable in the value; under the new ROWKEY it does not)
    names = key_names(context, raw, expressions, rowkey_era=first_rekey and not where.endswith("SourceKeyed"))
    keys = tuple(s.SelectExpression(alias=n, expression=x) for n, x in zip(names, expressions, strict=True))
    before = source.step
    if first_rekey and expressions:
        # ksqlDB's first re-key (before 0.10) drops a row whose new key is null, a key expression
        # that fails included; its second keeps the row under a null key
        kept: e.Expression = e.IsNull(operand=expressions[0], negated=True)
        for x in expressions[1:]:
            kept = e.And(left=kept, right=e.IsNull(operand=x, negated=True))
        before = s.StreamFilterV1(context=f"{where}-NonNullKey", source=before, filter_expression=kept)
    step: s.ExecutionStep
    if where.endswith("SourceKeyed"):  # a join side's re-key: Kafka Streams repartitions it
        side = "left" if "Left" in where else "right"
        step = s.StreamSelectKeyV2(context=where, source=before, key_expressions=keys, repartition_name=f"Join-{side}")
    else:
        step = s.StreamSelectKeyV1(context=where, source=before, key_expressions=keys)
    return Translated(step, rekeyed_schema(source, keys), pseudo_of(source), window=source.window)


@translates("streamSelectKeyV1")
def stream_select_key_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    return _select_key(context, raw, sources)


@translates("streamSelectKeyV2")
def stream_select_key_v2(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    return _select_key(context, raw, sources)


@translates("tableSelectKeyV1")
def table_select_key_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    """A table re-keyed by its own key columns, in order: how ksqlDB moves a joined table into
    the join's key format (a key format, or a registry key schema, of the other side). The keys
    and rows are the table's own, and qtt compares keys as values, so the join reads the table
    as it is. A re-key by anything else has no qtt step."""
    (source,) = sources
    expressions = [typed(text, source, "PARTITION BY") for text in _key_texts(raw)]
    own_keys = [e.ColumnRef(name=c.name, sql_type=c.type) for c in source.schema.key]
    if expressions != own_keys:
        raise Untranslatable(raw["@type"], "re-keying a table by other than its own key columns")
    return source
