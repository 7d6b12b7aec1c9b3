"""What translating one ksqlDB step needs and gives, and the registry of step translators.

A translator takes a step's JSON (its ``@type`` chooses the translator) and the translations
of its sources, and returns qtt's step with the columns it outputs. Each ksqlDB step type and
version has one translator (``@translates("streamSelectV1")``); a step without one, or a
version whose semantics qtt's steps do not have, is :class:`Untranslatable`, naming both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from qtt import sqltypes as t
from qtt.errors import UnsupportedFeatureError
from qtt.plan.analysis.analyzer import ScopeColumn
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import LogicalSchema


class Untranslatable(UnsupportedFeatureError):
    """A ksqlDB step (or a use of it) with no qtt step of the same semantics."""

    def __init__(self, step_type: str, why: str = "") -> None:
        super().__init__(f"ksqlDB step {step_type}{': ' + why if why else ''}")
        self.step_type = step_type


#: the input name of a column ksqlDB's step outputs and qtt's does not carry (a non-aggregate
#: column that copies no key): an expression reading it does not translate
NOT_CARRIED = "\x00not carried"


@dataclass(frozen=True)
class Translated:
    """A translated step and what the next step sees of its output.

    ``schema``: the key and value columns qtt's runtime gives the step's output. ``extra``:
    further names expressions over it may use (pseudo columns, window bounds, and ksqlDB's
    copies of a key column that qtt does not carry, each read as the key).
    """

    step: s.ExecutionStep
    schema: LogicalSchema
    extra: tuple[ScopeColumn, ...] = ()
    is_table: bool = False
    window: s.WindowInfo | None = None
    #: a group-by's grouping expressions, typed over its input
    groups: tuple[s.SelectExpression, ...] = ()
    #: expressions over this output that stand for one of its key columns: an aggregate's
    #: grouping expression over its non-aggregate columns (``COL1 + COL2``) is its key
    rewrites: Mapping[e.Expression, e.Expression] = field(default_factory=dict)
    #: value column -> the key column it equals on every row: a source's ``keyField`` (ksqlDB
    #: before 0.10 declared ``KEY='ID'``: the value column ID holds the key), through the
    #: projections that carry it
    key_copies: Mapping[str, str] = field(default_factory=dict)
    #: key columns ksqlDB (before 0.10) also output in the value under the same name, which a
    #: qtt row cannot hold twice
    key_and_value: tuple[str, ...] = ()
    #: key columns qtt added that ksqlDB's step does not have (the grouping values beside
    #: ksqlDB's one STRING key, :mod:`qtt.plan.ksqldb.string_keys`): the next projection drops them
    hidden_keys: tuple[str, ...] = ()

    def columns(self) -> list[ScopeColumn]:
        names = {c.name for c in self.schema.columns}
        own = [ScopeColumn(c.name, c.type) for c in self.schema.columns]
        return own + [c for c in self.extra if c.name not in names]

    def type_of(self, name: str) -> t.SqlType:
        for column in self.columns():
            if column.name == name:
                return column.type
        raise Untranslatable(type(self.step).type_tag, f"no column {name} in its output")


@dataclass
class StepContext:
    """The plan around a step: its query, the schemas ksqlDB recorded, the release that wrote it."""

    query_id: str
    #: ``<queryId>.<context with dots>`` -> the schema text spec.json recorded for that step
    recorded: Mapping[str, str] = field(default_factory=dict)
    #: ksqlDB's release that wrote the plan (``"7.1.0"``)
    release: str = ""
    #: the ksqlDB properties the plan ran with
    config: Mapping[str, Any] = field(default_factory=dict)
    #: topic -> the stream or table the plan's DDL declared over it
    source_names: Mapping[str, str] = field(default_factory=dict)
    #: topic -> its partition count (1 when the case names none)
    partitions: Mapping[str, int] = field(default_factory=dict)
    #: topic -> the ``keyField`` its DDL declared (ksqlDB before 0.10): a value column equal to the key
    key_fields: Mapping[str, str] = field(default_factory=dict)

    def partitions_of(self, topic: str) -> int:
        return self.partitions.get(topic, 1)

    def recorded_schema(self, context: str) -> str | None:
        return self.recorded.get(f"{self.query_id}.{context.replace('/', '.')}")

    @property
    def release_tuple(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.release.split(".") if p.isdigit()) if self.release else (99,)


Translator = Callable[[StepContext, Mapping[str, Any], list[Translated]], Translated]
_TRANSLATORS: dict[str, Translator] = {}
#: the fields of each step type that hold its source steps, in order
SOURCE_FIELDS = ("source", "leftSource", "rightSource")


def translates(step_type: str) -> Callable[[Translator], Translator]:
    def register(function: Translator) -> Translator:
        if step_type in _TRANSLATORS:
            raise ValueError(f"two translators for ksqlDB step {step_type}")
        _TRANSLATORS[step_type] = function
        return function

    return register


def translate_step(context: StepContext, raw: Mapping[str, Any]) -> Translated:
    """Translate ``raw`` and, first, every step under it."""
    step_type = raw.get("@type", "?")
    translator = _TRANSLATORS.get(step_type)
    if translator is None:
        raise Untranslatable(step_type, "qtt has no step with its semantics")
    sources = [translate_step(context, raw[name]) for name in SOURCE_FIELDS if name in raw]
    translated = translator(context, raw, sources)
    if not any(_not_carried(node) for node in expressions_of(translated.step)):
        return translated
    rewrites = {k: v for source in sources for k, v in source.rewrites.items()}
    step = e.substitute_in(translated.step, rewrites) if rewrites else translated.step
    if any(_not_carried(node) for node in expressions_of(step)):
        raise Untranslatable(step_type, "reads a non-aggregate column of an aggregate that is not a grouping column")
    return dataclasses.replace(translated, step=step)


def carried(name: str, type_: t.SqlType) -> e.ColumnRef:
    """The stand-in for a non-aggregate column ``name`` that qtt's aggregate does not carry."""
    return e.ColumnRef(name=f"{NOT_CARRIED}{name}", sql_type=type_)


def _not_carried(node: e.Expression) -> bool:
    return isinstance(node, e.ColumnRef) and node.name.startswith(NOT_CARRIED)


def expressions_of(step: s.ExecutionStep) -> list[e.Expression]:
    """Every expression node of ``step`` itself (not of its sources)."""
    found: list[e.Expression] = []
    for value in vars(step).values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, e.Expression):
                found += e.walk(item)
            elif isinstance(item, s.SelectExpression):
                found += e.walk(item.expression)
            elif isinstance(item, s.AggregateCall):
                found += [n for arg in item.args for n in e.walk(arg)]
    return found


def query_context(raw: Mapping[str, Any]) -> str:
    return str((raw.get("properties") or {}).get("queryContext", ""))
