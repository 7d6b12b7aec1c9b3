"""Which ``CREATE OR REPLACE`` upgrades a running query may take, with ksqlDB's messages.

A replaced query keeps its query id, its consumed offsets and its state: the new plan resumes
from the old plan's checkpoint. Two things must hold for that to be sound.

- The sink keeps its shape (ksqlDB's ``StructuredDataSource.canUpgradeTo``): same kind, topic,
  formats and timestamp column; identical key columns; every old value column still in its
  place with its type (new value columns may only be appended).
- The plans line up step by step (ksqlDB's ``ExecutionStep.validateUpgrade``). Filters and
  projections are *passive*: they may be added, removed or changed. Sources, sinks, re-keys,
  groupings and aggregations *enforce*: they must appear in both plans, in the same order,
  with what their state depends on unchanged. Any other step (joins, windowed aggregates,
  table functions ...) cannot be upgraded yet.
"""

from __future__ import annotations

from collections.abc import Sequence

from qtt.errors import SqlError
from qtt.plan.ddl.metastore import DataSource
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import Column

#: steps that may change freely between an old plan and its replacement
_PASSIVE = (s.FilterStep, s.SelectStep)
#: steps that must appear in both plans; what must match is in :func:`_must_match`
_ENFORCING = (
    s.SourceStep,
    s.SinkStep,
    s.StreamSelectKeyV1,
    s.StreamSelectKeyV2,
    s.StreamGroupByV1,
    s.TableGroupByV1,
    s.StreamAggregateV1,
    s.TableAggregateV1,
    s.TableAggregateV2,
)


def check_source_upgrade(old: DataSource, new: DataSource) -> None:
    """Raise :class:`SqlError` unless ``old`` can be replaced by ``new`` in place."""
    issues = [
        _not_upgradeable(old.name, prop, before, after)
        for prop, before, after in (
            ("type", old.kind, new.kind),
            ("topic", old.topic, new.topic),
            ("formats", old.formats, new.formats),
            ("timestampColumn", old.timestamp_column, new.timestamp_column),
        )
        if before != after
    ]
    reason = _schema_difference(old.schema.key, new.schema.key, old.schema.value, new.schema.value)
    if reason is not None:
        issues.append(f"{_not_upgradeable(old.name, 'schema', old.schema, new.schema)}. ({reason})")
    if issues:
        raise SqlError("\n\tAND ".join(issues))


def check_query_upgrade(old: s.ExecutionStep, new: s.ExecutionStep) -> None:
    """Raise :class:`SqlError` unless the query planned as ``new`` can resume ``old``'s state."""
    old_step, new_step = _enforcing(old), _enforcing(new)
    if type(old_step) is not type(new_step):
        msg = (
            f"Query is not upgradeable. Plan step {ksql_step_name(old_step)} cannot become {ksql_step_name(new_step)}."
        )
        raise SqlError(msg)
    _must_match(old_step, new_step)
    old_sources, new_sources = old_step.sources(), new_step.sources()
    for old_source, new_source in zip(old_sources, new_sources, strict=True):
        check_query_upgrade(old_source, new_source)


def ksql_step_name(step: s.ExecutionStep) -> str:
    """ksqlDB's class name for a step: ``streamTableJoinV1`` -> ``StreamTableJoin``."""
    tag = step.type_tag
    base = tag.rstrip("0123456789").removesuffix("V")
    return base[:1].upper() + base[1:]


def _enforcing(step: s.ExecutionStep) -> s.ExecutionStep:
    """The first step at or upstream of ``step`` that is not passive."""
    while isinstance(step, _PASSIVE):
        step = step.source
    if not isinstance(step, _ENFORCING):
        raise SqlError(f"Upgrades not yet supported for {ksql_step_name(step)}")
    return step


def _must_match(old: s.ExecutionStep, new: s.ExecutionStep) -> None:
    name = ksql_step_name(old)
    pairs: list[tuple[str, object, object]]
    if isinstance(old, (s.SourceStep, s.SinkStep)) and isinstance(new, (s.SourceStep, s.SinkStep)):
        pairs = [
            ("topic", old.topic, new.topic),
            ("formats", old.formats, new.formats),
            ("timestamp column", old.timestamp_column, new.timestamp_column),
        ]
    elif isinstance(old, s.AggregateStep) and isinstance(new, s.AggregateStep):
        pairs = [("aggregations", _calls(old.aggregations), _calls(new.aggregations))]
    else:
        pairs = [("fields", _fields(old), _fields(new))]
    for what, before, after in pairs:
        if before != after:
            raise SqlError(f"{name} must have matching {what}. Values differ: {before} vs. {after}")


def _calls(calls: Sequence[s.AggregateCall]) -> list[str]:
    """What an aggregation's state depends on: each call's function, arguments and state type."""
    return [
        f"{c.function}({', '.join(getattr(a, 'name', type(a).__name__) for a in c.args)}) AS {c.state_type}"
        for c in calls
    ]


def _fields(step: s.ExecutionStep) -> dict[str, object]:
    """A step's own settings: its fields other than its sources and its context."""
    return {
        name: value
        for name, value in vars(step).items()
        if name != "context" and not isinstance(value, s.ExecutionStep)
    }


def _schema_difference(
    old_key: Sequence[Column], new_key: Sequence[Column], old_value: Sequence[Column], new_value: Sequence[Column]
) -> str | None:
    if tuple(old_key) != tuple(new_key):
        moved = _not_in_place(old_key, new_key)
        return f"Key columns must be identical. The following key columns are changed, missing or reordered: [{moved}]"
    moved = _not_in_place(old_value, new_value)
    if moved:
        return f"The following columns are changed, missing or reordered: [{moved}]"
    return None


def _not_in_place(old: Sequence[Column], new: Sequence[Column]) -> str:
    """The old columns that the new ones do not hold at the same position with the same type."""
    return ", ".join(str(c) for i, c in enumerate(old) if i >= len(new) or new[i] != c)


def _not_upgradeable(name: str, prop: str, before: object, after: object) -> str:
    return f"DataSource '{name}' has {prop} = {before} which is not upgradeable to {after}"
