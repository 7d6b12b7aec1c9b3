"""ksqlDB's join steps.

Both sides arrive keyed by the join key and aliased (``PrependAliasLeft``: ``A AS L_A``). The
join's output is its key column ``keyColName``, then each side's columns. ksqlDB writes the
join window's durations as seconds (``"beforeMillis": 10.0`` is ten seconds). A stream-stream
join with a grace period holds unmatched rows until their window closes (Kafka Streams'
spurious-result fix), qtt's :class:`~qtt.plan.ir.join_steps.StreamStreamJoinV2`; without one it
emits them at once, :class:`~qtt.plan.ir.join_steps.StreamStreamJoinV1`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from qtt.plan.ir import join_steps as js
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import KEY, VALUE, Column, LogicalSchema
from qtt.plan.ksqldb import fields
from qtt.plan.ksqldb.context import StepContext, Translated, Untranslatable, query_context, translates
from qtt.plan.ksqldb.expressions import typed

#: the implicit key column of a source before ksqlDB 0.10 named its keys
ROWKEY = "ROWKEY"
_JOIN_TYPES = {"INNER": "INNER", "LEFT": "LEFT", "OUTER": "OUTER", "RIGHT": "RIGHT", "FULL": "OUTER"}


def _renamed_repartition(step: s.ExecutionStep, name: str) -> s.ExecutionStep:
    """``step`` with the join-side re-key under it writing to repartition ``name``."""
    if isinstance(step, s.StreamSelectKeyV2):
        return dataclasses.replace(step, repartition_name=name)
    if isinstance(step, (s.StreamSelectV1, s.StreamFilterV1)):
        return dataclasses.replace(step, source=_renamed_repartition(step.source, name))
    return step


def keyed_by_copy(side: Translated) -> Translated:
    """A join side whose aliasing select (ksqlDB 5.5 and early 6.0: no ``keyColumnNames``) kept
    the key's name and copied it into the value under its alias (``ID AS T_ID``): keyed by the
    alias, as the join's output names it, with no copy left in the value. A side keyed by the
    implicit ``ROWKEY`` stays so: such a join's output keeps ``ROWKEY`` as its key and each
    side's copy (``T_ROWKEY``) as a value column."""
    step = side.step
    if not isinstance(step, (s.StreamSelectV1, s.TableSelectV1)) or len(step.key_column_names) != 1:
        return side
    (key,) = step.key_column_names
    if key == ROWKEY:
        return side
    own = next(x for x in step.select_expressions if x.alias == key)
    copies = [x for x in step.select_expressions if x.alias != key and x.expression == own.expression]
    if len(copies) != 1 or own.alias != getattr(own.expression, "name", None):
        return side
    (copy,) = copies
    return _key_renamed(side, step, key, copy.alias, dropped=copy.alias)


def _key_renamed(
    side: Translated, step: s.StreamSelectV1 | s.TableSelectV1, key: str, named: str, dropped: str
) -> Translated:
    """``side``, whose last step is the aliasing ``step``, with its key ``key`` named ``named``
    and the value column ``dropped`` (a copy of the key) gone."""
    expressions = tuple(
        dataclasses.replace(x, alias=named) if x.alias == key else x
        for x in step.select_expressions
        if x.alias != dropped
    )
    rekeyed = dataclasses.replace(step, key_column_names=(named,), select_expressions=expressions)
    columns = tuple(
        dataclasses.replace(c, name=named) if c.name == key else c for c in side.schema.columns if c.name != dropped
    )
    copies = {name: named for name in side.key_copies if name != dropped}
    return dataclasses.replace(side, step=rekeyed, schema=LogicalSchema(columns), key_copies=copies)


def _joined(
    context: StepContext, raw: Mapping[str, Any], left: Translated, right: Translated
) -> tuple[str, LogicalSchema]:
    key_name = raw.get("keyColName") or _recorded_key_name(context, raw)
    if not key_name:
        key_name = left.schema.key[0].name if len(left.schema.key) == 1 else None
    if key_name is None:
        raise Untranslatable(raw["@type"], "without a key column name (ksqlDB before 0.10)")
    for side in (left, right) if raw["@type"] == "streamStreamJoinV1" else ():
        if side.schema.key and side.schema.key[0].name != key_name and side.schema.find(key_name) is not None:
            why = "a join on a value column whose re-key the plan does not record (ksqlDB before 0.10)"
            raise Untranslatable(raw["@type"], why)
    key_type = left.schema.key[0].type if left.schema.key else right.schema.key[0].type
    values: dict[str, Column] = {}
    for side in (left, right):
        for c in (*side.schema.key, *side.schema.value):
            if c.name != key_name and c.name not in values:
                values[c.name] = Column(c.name, c.type, VALUE)
    return key_name, LogicalSchema((Column(key_name, key_type, KEY), *values.values()))


def _recorded_key_name(context: StepContext, raw: Mapping[str, Any]) -> str | None:
    """The key ksqlDB recorded for a join that names none (before 0.10 it is ``ROWKEY``, even
    over a side re-keyed by a value column, whose key qtt names after the column)."""
    recorded = context.recorded_schema(query_context(raw))
    keys = fields.schema(recorded).key if recorded is not None else ()
    return keys[0].name if len(keys) == 1 and keys[0].name == ROWKEY else None


def _join_type(raw: Mapping[str, Any]) -> str:
    join_type = _JOIN_TYPES.get(str(raw["joinType"]).upper())
    if join_type is None:
        raise Untranslatable(raw["@type"], f"join type {raw['joinType']}")
    return join_type


@translates("streamTableJoinV1")
def stream_table_join_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    left, right = (keyed_by_copy(side) for side in sources)
    key_name, schema = _joined(context, raw, left, right)
    step = js.StreamTableJoinV1(
        context=query_context(raw),
        left_source=_renamed_repartition(left.step, "Join"),
        right_source=right.step,
        join_type=_join_type(raw),
        key_col_name=key_name,
        internal_formats=fields.formats(raw["internalFormats"]),
    )
    return Translated(step, schema, window=left.window)


def rekeyed_as_join_key(side: Translated, key_name: str | None) -> Translated:
    """A join side re-keyed for this join (``...SourceKeyed``) that carries, as a value column,
    an earlier outer join's synthetic key named like this join's (``ROWKEY``): the re-key names
    its key after this join's, as qtt's planner does, and the earlier synthetic key, which this
    join's replaces under the same name, is gone."""
    step = side.step
    if key_name is None or not isinstance(step, s.StreamSelectKeyV2) or len(step.key_expressions) != 1:
        return side
    (key,) = side.schema.key
    if key.name == key_name or side.schema.find(key_name) is None:
        return side
    (rekey,) = step.key_expressions
    step = dataclasses.replace(step, key_expressions=(dataclasses.replace(rekey, alias=key_name),))
    values = [Column(key.name, key.type, VALUE), *(c for c in side.schema.value if c.name not in (key_name, key.name))]
    return dataclasses.replace(side, step=step, schema=LogicalSchema((Column(key_name, key.type, KEY), *values)))


def keyed_by_key_field(side: Translated, key_name: str | None) -> Translated:
    """A stream join side joined on a value column its source's ``KEY`` property declared a
    copy of the key (ksqlDB before 0.10: ``WITH (KEY='A')``): ksqlDB joined on the record key,
    with no re-key, so that column is the join's key and its copy leaves the side's value. A
    side keyed by the implicit ``ROWKEY`` (its copy ``T_ROWKEY`` stays a value column) is keyed
    by the join's key name, so that the other side's ``ROWKEY`` is the only one in the output."""
    step = side.step
    if key_name is None or key_name not in side.key_copies or not isinstance(step, s.StreamSelectV1):
        return side
    if len(side.schema.key) != 1 or side.schema.key[0].name == key_name or side.schema.find(key_name) is None:
        return side
    key = side.schema.key[0].name
    return _key_renamed(side, step, key, key_name if key == ROWKEY else key, dropped=key_name)


@translates("streamStreamJoinV1")
def stream_stream_join_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    key_col_name = raw.get("keyColName")
    left, right = (
        keyed_by_key_field(rekeyed_as_join_key(keyed_by_copy(side), key_col_name), key_col_name) for side in sources
    )
    key_name, schema = _joined(context, raw, left, right)
    common: dict[str, Any] = {
        "context": query_context(raw),
        "left_source": left.step,
        "right_source": right.step,
        "join_type": _join_type(raw),
        "key_col_name": key_name,
        "before_ms": fields.seconds_ms(raw["beforeMillis"]),
        "after_ms": fields.seconds_ms(raw["afterMillis"]),
        "internal_formats": fields.formats(raw["leftInternalFormats"]),
    }
    grace = raw.get("graceMillis")
    step: s.ExecutionStep
    if grace is None:
        step = js.StreamStreamJoinV1(**common)
    else:
        step = js.StreamStreamJoinV2(**common, grace_ms=fields.seconds_ms(grace))
    return Translated(step, schema, window=left.window)


@translates("tableTableJoinV1")
def table_table_join_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    left, right = (keyed_by_copy(side) for side in sources)
    key_name, schema = _joined(context, raw, left, right)
    step = js.TableTableJoinV1(
        context=query_context(raw),
        left_source=left.step,
        right_source=right.step,
        join_type=_join_type(raw),
        key_col_name=key_name,
    )
    return Translated(step, schema, is_table=True, window=left.window)


@translates("fkTableTableJoinV1")
def fk_table_table_join_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    """A foreign-key join: ``leftJoinColumnName`` (its first releases) or ``leftJoinExpression`` over
    the left table names the right table's key. The result is keyed by the left table's key
    columns, then the left values and the right key and values, as ksqlDB's schema lists them."""
    left, right = sources
    text = raw.get("leftJoinExpression") or raw.get("leftJoinColumnName")
    if not text or not left.schema.key:
        raise Untranslatable(raw["@type"], "without a foreign-key expression or a left key")
    step = js.ForeignKeyTableTableJoinV1(
        context=query_context(raw),
        left_source=left.step,
        right_source=right.step,
        join_type=_join_type(raw),
        key_col_name=left.schema.key[0].name,
        left_join_expression=typed(str(text), left, "JOIN"),
        internal_formats=fields.formats(raw["formats"]),
    )
    keys = {c.name for c in left.schema.key}
    values: dict[str, Column] = {}
    for c in (*left.schema.value, *right.schema.key, *right.schema.value):
        if c.name not in keys:
            values.setdefault(c.name, Column(c.name, c.type, VALUE))
    return Translated(step, LogicalSchema((*left.schema.key, *values.values())), is_table=True)
