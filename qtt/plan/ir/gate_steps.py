"""The gates of a swap-in-place upgrade (see docs/upgrades.md, "Swap-in-place").

A swap-in-place upgrade replaces a running query whose state the new plan cannot resume: the
new query replays its sources from the earliest offsets into its own state beside the old one,
and the two cut over at a vector of control events, one record per source partition that
carries the :data:`CONTROL_HEADER` header (no step ever decodes one as data).

- :class:`StartGateV1`, before the new query's sink, lets through only what the new query
  computed for records after its partition's control event, once it has seen the control
  event of every partition of every source topic.
- :class:`StopGateV1`, over a source step of the old query, drops the records from its
  partition's control event on: the old query computes nothing after the cut. It is
  stateless (the offsets of the control events are known once they are written), so the old
  query resumes its checkpoint with it.

Kept apart from :mod:`qtt.plan.ir.steps`; the codec imports this module so that the tags are
registered wherever plans are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from qtt.plan.ir.steps import ExecutionStep, StatefulStep

#: the header that makes a record a control event of a cutover; its value is the number of
#: partitions of the record's topic, as ASCII digits (the vector's size for that topic)
CONTROL_HEADER = "qtt-cutover"


@dataclass(frozen=True, kw_only=True)
class StartGateV1(StatefulStep):
    """The new query's start gate, before its sink, in a swap-in-place upgrade.

    A row caused by a record before its partition's control event is dropped (the old query
    wrote its result); one caused after it is held until the control event of every partition
    of every topic in ``source_topics`` was seen, then let through in order. ``replaces`` is the
    id of the query it swaps in for, which the plan no longer runs.
    """

    type_tag: ClassVar[str] = "startGateV1"
    holds_rows: ClassVar[bool] = True
    source: ExecutionStep
    replaces: str
    source_topics: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class StopGateV1(ExecutionStep):
    """The old query's stop gate, over one of its source steps: drops each record at or after
    the offset of its partition's control event (``offsets``: partition and offset pairs; a
    partition not named has no control event yet and keeps all its records)."""

    type_tag: ClassVar[str] = "stopGateV1"
    source: ExecutionStep
    offsets: tuple[tuple[int, int], ...]
