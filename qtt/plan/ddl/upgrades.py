"""Which ``CREATE OR REPLACE`` upgrades a running query may take, with ksqlDB's messages.

A replaced query keeps its query id, its consumed offsets and its state: the new plan resumes
from the old plan's checkpoint. Two things must hold for that to be sound.

- The sink keeps its shape (ksqlDB's ``StructuredDataSource.canUpgradeTo``): same kind, topic,
  formats and timestamp column; identical key columns; every old value column still in its
  place with its type (new value columns may only be appended).
- The plans line up step by step (ksqlDB's ``ExecutionStep.validateUpgrade``). Filters and
  projections are *passive*: they may be added, removed or changed. Sources, sinks, re-keys,
  groupings and aggregations *enforce*: they must appear in both plans, in the same order,
  with what their state depends on unchanged. ksqlDB refuses any other step (joins, windowed
  aggregates, table functions ...).

With :data:`EXTENDED` set (``SET 'qtt.upgrades.extended' = 'true';``) qtt goes further, where
the new plan can still resume the old one's state: table functions are passive too, and joins
and windowed aggregations enforce (their settings, and for a join the rows each side feeds its
state, must match), so filters and projections before and after them may change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from qtt.errors import SqlError
from qtt.plan.ddl.metastore import DataSource
from qtt.plan.ir import join_steps as js
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import Column

#: the property that allows upgrades over joins, windowed aggregates and table functions
EXTENDED = "qtt.upgrades.extended"

#: steps that may change freely between an old plan and its replacement
_PASSIVE: tuple[type[s.ExecutionStep], ...] = (s.FilterStep, s.SelectStep)
#: steps that must appear in both plans; what must match is in :func:`_must_match`
_ENFORCING: tuple[type[s.ExecutionStep], ...] = (
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
#: with :data:`EXTENDED`: a table function changes rows, not state
_PASSIVE_EXTENDED = (*_PASSIVE, s.StreamFlatMapV1)
#: with :data:`EXTENDED`: each keeps state that the new plan resumes when their settings match
_ENFORCING_EXTENDED = (*_ENFORCING, js.JoinStep, s.StreamWindowedAggregateV1)

#: why a stateful step's settings must match, by kind
_WHY = {
    js.JoinStep: "its state was kept for the old join: the new plan cannot resume it",
    s.StreamWindowedAggregateV1: "its state was kept for the old windows: the new plan cannot resume it",
}


@dataclass(frozen=True)
class KsqlAggregate:
    """What ksqlDB's StreamAggregate records of an aggregation, which an in-place upgrade may not
    change: the columns it reads (``nonAggregateColumns``) and its calls as ksqlDB prints them
    (``aggregationFunctions``: ``COUNT(ROWTIME)``, ``SUM(KSQL_INTERNAL_COL_2)``). qtt's aggregate
    steps do not persist them (their state does not depend on them): the planner keeps them
    beside the plan of each query it planned."""

    columns: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()


#: the old and the new plan's aggregation, as ksqlDB records them
KsqlAggregates = tuple[KsqlAggregate, KsqlAggregate]
NO_AGGREGATES: KsqlAggregates = (KsqlAggregate(), KsqlAggregate())


def extended_upgrades(config: Mapping[str, object]) -> bool:
    """Whether ``config`` allows the upgrades beyond ksqlDB's (:data:`EXTENDED`)."""
    return str(config.get(EXTENDED, "false")).lower() == "true"


def check_source_upgrade(old: DataSource, new: DataSource) -> None:
    """Raise :class:`SqlError` unless ``old`` can be replaced by ``new`` in place."""
    # ksqlDB compares the topic with its formats (a KsqlTopic) and the timestamp column as an
    # Optional: neither has a toString, so qtt shows its own rendering after ksqlDB's words
    old_topic: object = old.topic
    new_topic: object = new.topic
    if old.formats != new.formats:
        old_topic, new_topic = _ksql_topic(old.topic, old.formats), _ksql_topic(new.topic, new.formats)
    issues = [
        _not_upgradeable(old.name, prop, before, after)
        for prop, differs, before, after in (
            ("type", old.kind != new.kind, f"K{old.kind}", f"K{new.kind}"),  # DataSourceType: KSTREAM, KTABLE
            ("topic", (old.topic, old.formats) != (new.topic, new.formats), old_topic, new_topic),
            (
                "timestampColumn",
                old.timestamp_column != new.timestamp_column,
                _optional(old.timestamp_column),
                _optional(new.timestamp_column),
            ),
        )
        if differs
    ]
    reason = _schema_difference(old.schema.key, new.schema.key, old.schema.value, new.schema.value)
    if reason is not None:
        issues.append(f"{_not_upgradeable(old.name, 'schema', old.schema, new.schema)}. ({reason})")
    if issues:  # ksqlDB's MetaStoreImpl.putSource
        raise SqlError("Cannot upgrade data source: " + "\n\tAND ".join(issues))


@dataclass(frozen=True)
class WalkEntry:
    """One step of an upgrade's walk over both plans (:func:`upgrade_walk`).

    ``role`` is ``passive``, ``enforcing`` or ``unsupported``; ``old`` and ``new`` name the step
    in each plan (None: not in that plan); ``verdict`` says how they relate: ``unchanged``,
    ``changed``, ``added``, ``removed``, ``matches``, or why the upgrade is refused there.
    """

    role: str
    old: str | None
    new: str | None
    verdict: str


def upgrade_walk(
    old: s.ExecutionStep,
    new: s.ExecutionStep,
    *,
    extended: bool = False,
    aggregates: KsqlAggregates = NO_AGGREGATES,
) -> tuple[list[WalkEntry], str | None]:
    """Both plans' steps from the sink upstream, passive steps paired by their context, and the
    reason the upgrade is refused (None: the new plan can resume the old one's state)."""
    entries: list[WalkEntry] = []
    try:
        _walk(old, new, extended, entries, aggregates)
    except SqlError as refused:
        return entries, refused.message
    return entries, None


def check_query_upgrade(
    old: s.ExecutionStep,
    new: s.ExecutionStep,
    *,
    extended: bool = False,
    aggregates: KsqlAggregates = NO_AGGREGATES,
) -> None:
    """Raise :class:`SqlError` unless the query planned as ``new`` can resume ``old``'s state.

    ``extended``: also over joins, windowed aggregates and table functions (:data:`EXTENDED`).
    ``aggregates``: each plan's aggregation as ksqlDB records it (``PlannedQuery.ksql_aggregate``).
    """
    _walk(old, new, extended, [], aggregates)


def _walk(
    old: s.ExecutionStep,
    new: s.ExecutionStep,
    extended: bool,
    entries: list[WalkEntry],
    aggregates: KsqlAggregates = NO_AGGREGATES,
) -> None:
    old_passive, old_step = _chain(old, extended)
    new_passive, new_step = _chain(new, extended)
    _pair_passive(old_passive, new_passive, entries)
    _, enforcing = _rules(extended)
    # ksqlDB asks the old step; the new one only where an old source step looks past it
    looked_past = isinstance(old_step, s.SourceStep) and len(new_step.sources()) == 1
    for step in (old_step, new_step) if looked_past else (old_step,):
        if not isinstance(step, enforcing):
            msg = f"Upgrades not yet supported for {ksql_step_name(step)}"
            if not extended and isinstance(step, _ENFORCING_EXTENDED + _PASSIVE_EXTENDED):
                msg += f" (qtt upgrades it when the statements before set '{EXTENDED}' = 'true')"
            entries.append(WalkEntry("unsupported", _named(old_step), _named(new_step), msg))
            raise SqlError(msg)
    if type(old_step) is not type(new_step):
        msg = mismatched_step(old_step, new_step)
        entries.append(WalkEntry("enforcing", _named(old_step), _named(new_step), msg))
        raise SqlError(msg)
    try:
        _must_match(old_step, new_step, NO_AGGREGATES if extended else aggregates)
        old_sources, new_sources = old_step.sources(), new_step.sources()
        if isinstance(old_step, js.JoinStep):
            for side, old_source, new_source in zip(("left", "right"), old_sources, new_sources, strict=True):
                _same_rows(old_step, side, old_source, new_source)
    except SqlError as refused:
        entries.append(WalkEntry("enforcing", _named(old_step), _named(new_step), refused.message))
        raise
    entries.append(WalkEntry("enforcing", _named(old_step), _named(new_step), "matches"))
    for old_source, new_source in zip(old_sources, new_sources, strict=True):
        _walk(old_source, new_source, extended, entries, aggregates)


def mismatched_step(old: s.ExecutionStep, new: s.ExecutionStep) -> str:
    """ksqlDB's message when the old plan's enforcing step meets one of another class: a source
    step looks for its like up the new plan (``StreamSource.validateUpgrade``), any other step
    compares classes first (``ExecutionStep.mustMatch``)."""
    old_name, new_class = ksql_step_name(old), f"class {_JAVA_PACKAGE}.{ksql_step_name(new)}"
    if not isinstance(old, s.SourceStep):
        return (
            f"Query is not upgradeable. Plan step of type {old_name} must have matching class. "
            f"Values differ: class {_JAVA_PACKAGE}.{old_name} vs. {new_class}"
        )
    if not new.sources():
        root = f"The root source node of the upgrade tree must be {old_name}, but was {new_class}"
        return f"Query is not upgradeable. {root}"
    if len(new.sources()) > 1:
        return "Query is not upgradeable. Cannot change a non-join source into a join source."
    return f"Query is not upgradeable. Cannot add a {new_class} step that is not in the original query plan."


#: the Java package of ksqlDB's execution steps, as their classes print
_JAVA_PACKAGE = "io.confluent.ksql.execution.plan"


def _rules(extended: bool) -> tuple[tuple[type[s.ExecutionStep], ...], tuple[type[s.ExecutionStep], ...]]:
    """The passive and the enforcing step types."""
    return (_PASSIVE_EXTENDED, _ENFORCING_EXTENDED) if extended else (_PASSIVE, _ENFORCING)


def _chain(step: s.ExecutionStep, extended: bool) -> tuple[list[s.ExecutionStep], s.ExecutionStep]:
    """The passive steps from ``step`` upstream, and the first step that is not passive."""
    passive_steps: list[s.ExecutionStep] = []
    passive, _ = _rules(extended)
    while isinstance(step, passive):
        passive_steps.append(step)
        (step,) = step.sources()
    return passive_steps, step


def _pair_passive(old: list[s.ExecutionStep], new: list[s.ExecutionStep], entries: list[WalkEntry]) -> None:
    """The passive steps of both plans, paired by context, in the new plan's order."""
    old_by_context = {step.context: step for step in old}
    for step in new:
        before = old_by_context.pop(step.context, None)
        if before is None:
            entries.append(WalkEntry("passive", None, _named(step), "added"))
        else:
            verdict = "unchanged" if _fields(before) == _fields(step) and type(before) is type(step) else "changed"
            entries.append(WalkEntry("passive", _named(before), _named(step), verdict))
    entries += [WalkEntry("passive", _named(step), None, "removed") for step in old_by_context.values()]


def _named(step: s.ExecutionStep) -> str:
    return f"{step.type_tag} {step.context}"


def ksql_step_name(step: s.ExecutionStep) -> str:
    """ksqlDB's class name for a step: ``streamTableJoinV1`` -> ``StreamTableJoin``."""
    tag = step.type_tag
    base = tag.rstrip("0123456789").removesuffix("V")
    return base[:1].upper() + base[1:]


def _must_match(old: s.ExecutionStep, new: s.ExecutionStep, aggregates: KsqlAggregates) -> None:
    """``aggregates``: compared for a StreamAggregate, before qtt's own comparison of its calls, as
    ksqlDB does ("until we think this through", its test says of the columns: qtt's aggregate
    state depends on neither, so the extended rules pass none)."""
    name = ksql_step_name(old)
    pairs: list[tuple[str, object, object]]
    if isinstance(old, (s.SourceStep, s.SinkStep)) and isinstance(new, (s.SourceStep, s.SinkStep)):
        pairs = [  # in the order of ksqlDB's MUST_MATCH: a sink compares its formats first
            ("topicName", old.topic, new.topic),
            ("formats", old.formats, new.formats),
            ("timestampColumn", old.timestamp_column, new.timestamp_column),
        ]
        if isinstance(old, s.SinkStep):
            pairs[:2] = pairs[1::-1]
    elif isinstance(old, s.AggregateStep) and isinstance(new, s.AggregateStep):
        pairs = _ksql_aggregate_pairs(*aggregates) if isinstance(old, s.StreamAggregateV1) else []
        pairs.append(("aggregations", _calls(old.aggregations), _calls(new.aggregations)))
        old_fields, new_fields = _fields(old), _fields(new)
        pairs += [(_label(f), old_fields[f], new_fields[f]) for f in old_fields if f != "aggregations"]
    elif isinstance(old, js.JoinStep):
        old_fields, new_fields = _fields(old), _fields(new)
        pairs = [(_label(f), old_fields[f], new_fields[f]) for f in old_fields]
    else:
        pairs = [("fields", _fields(old), _fields(new))]
    why = next((reason for kind, reason in _WHY.items() if isinstance(old, kind)), None)
    for what, before, after in pairs:
        if before != after:
            # ksqlDB's ExecutionStep.mustMatch
            msg = f"Query is not upgradeable. Plan step of type {name} must have matching {what}. "
            msg += f"Values differ: {before} vs. {after}"
            raise SqlError(msg + (f" ({why})" if why else ""))


def _same_rows(join: js.JoinStep, side: str, old: s.ExecutionStep, new: s.ExecutionStep) -> None:
    """The projections between a join and the step it reads on one side are the same in both
    plans: they decide the rows the join keeps in its state."""
    old_selects, new_selects = _selects_above_enforcing(old), _selects_above_enforcing(new)
    if old_selects != new_selects:
        msg = (
            f"{ksql_step_name(join)} must have matching columns on its {side} side. "
            f"Values differ: {old_selects} vs. {new_selects} (the join keeps each side's rows, as the old plan "
            "read them, in its state)"
        )
        raise SqlError(msg)


def _selects_above_enforcing(step: s.ExecutionStep) -> list[object]:
    """What each projection from ``step`` up to the first enforcing step computes."""
    passive, _ = _chain(step, extended=True)
    return [_fields(p) for p in passive if isinstance(p, (s.SelectStep, s.StreamFlatMapV1))]


def _ksql_aggregate_pairs(was: KsqlAggregate, now: KsqlAggregate) -> list[tuple[str, object, object]]:
    """What ksqlDB's StreamAggregate must match, as its message prints each (Java lists)."""
    return [
        (
            "columns not part of aggregate",
            _java_list(f"`{c}`" for c in was.columns),
            _java_list(f"`{c}`" for c in now.columns),
        ),
        ("aggregate functions", _java_list(was.functions), _java_list(now.functions)),
    ]


def _java_list(items: Iterable[str]) -> str:
    """Items as a Java list prints them: ``[`ID`, `ROWTIME`]``."""
    return "[" + ", ".join(items) + "]"


def _label(field: str) -> str:
    """A step field's name as a message shows it: ``join_type`` -> ``join type``."""
    return field.replace("_", " ")


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


def _ksql_topic(topic: str, formats: s.Formats) -> str:
    """A topic with its formats, as qtt shows ksqlDB's KsqlTopic."""
    key, value = formats.key_format.format, formats.value_format.format
    window = "" if formats.window is None else f", window={formats.window}"
    return f"KsqlTopic{{kafkaTopicName={topic}, keyFormat={key}, valueFormat={value}{window}}}"


def _optional(value: object) -> str:
    """A value as Java prints an Optional of it: ``Optional.empty``, ``Optional[...]``."""
    return "Optional.empty" if value is None else f"Optional[{value}]"


def _not_upgradeable(name: str, prop: str, before: object, after: object) -> str:
    return f"DataSource '`{name}`' has {prop} = {before} which is not upgradeable to {after}"
