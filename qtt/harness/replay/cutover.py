"""The invariant of a swap-in-place upgrade, checked over the records a sink holds.

A swap-in-place upgrade runs the new plan beside the old one and cuts over at a vector of
control events, one per source partition. The sink must then hold exactly:

- before the cut, the records the old plan emitted for inputs before the vector;
- after it, the records the new plan emitted for inputs at or after the vector;

nothing lost and nothing twice, and in each sink partition no old record after a new one.
:func:`violations` says, record by record, where a run breaks that.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Cause:
    """The input record an output was caused by: its topic, partition and offset."""

    topic: str
    partition: int
    offset: int


@dataclass(frozen=True)
class ControlVector:
    """Where the cut is: per source topic and partition, the offset of its control event. An
    input is before the cut when its offset is below its partition's control event."""

    offsets: Mapping[tuple[str, int], int]

    def before(self, cause: Cause) -> bool:
        control = self.offsets.get((cause.topic, cause.partition))
        if control is None:
            where = f"{cause.topic} partition {cause.partition}"
            msg = f"no control event for {where}: the vector must cover every source partition"
            raise ValueError(msg)
        return cause.offset < control


@dataclass(frozen=True)
class Emitted:
    """A sink record: its partition, key and value (as comparable values), and its cause."""

    partition: int
    key: Any
    value: Any
    cause: Cause

    def content(self) -> tuple[int, str, str, Cause]:
        return (self.partition, repr(self.key), repr(self.value), self.cause)


def violations(
    old: Sequence[Emitted], new: Sequence[Emitted], swapped: Sequence[Emitted], vector: ControlVector
) -> list[str]:
    """Every way ``swapped`` (the sink's records, in write order) breaks the cutover invariant,
    given what ``old`` and ``new`` (each plan run alone over every input) emitted; empty when
    it holds."""
    expected = Counter(r.content() for r in old if vector.before(r.cause))
    expected.update(r.content() for r in new if not vector.before(r.cause))
    got = Counter(r.content() for r in swapped)
    found: list[str] = []
    for content, count in sorted((expected - got).items(), key=repr):
        found.append(f"lost at the cut: {_shown(content)} ({count} missing)")
    for content, count in sorted((got - expected).items(), key=repr):
        found.append(f"not expected at the cut: {_shown(content)} ({count} extra; {_why(content, old, new, vector)})")
    found += _order_problems(swapped, vector)
    return found


def _order_problems(swapped: Sequence[Emitted], vector: ControlVector) -> list[str]:
    """In each sink partition, every record caused before the cut comes before every record
    caused after it."""
    problems: list[str] = []
    seen_new: dict[int, Emitted] = {}
    for record in swapped:
        if not vector.before(record.cause):
            seen_new.setdefault(record.partition, record)
        elif record.partition in seen_new:
            first = seen_new[record.partition]
            problems.append(
                f"sink partition {record.partition}: {_shown(record.content())}, caused before the cut, "
                f"comes after {_shown(first.content())}, caused after it"
            )
    return problems


def _why(
    content: tuple[int, str, str, Cause], old: Sequence[Emitted], new: Sequence[Emitted], vector: ControlVector
) -> str:
    """Which gate let an unexpected record through, as far as the two plans' records tell."""
    if vector.before(content[3]):
        if _emitted_by(content, new):
            return "the new plan's record for an input before the cut: its start gate opened early"
        return "the old plan's record written twice" if _emitted_by(content, old) else "emitted by neither plan"
    if _emitted_by(content, old):
        return "the old plan's record for an input after the cut: its stop gate closed late"
    return "the new plan's record written twice" if _emitted_by(content, new) else "emitted by neither plan"


def _emitted_by(content: tuple[int, str, str, Cause], records: Sequence[Emitted]) -> bool:
    return any(r.content() == content for r in records)


def _shown(content: tuple[int, str, str, Cause]) -> str:
    partition, key, value, cause = content
    return (
        f"key {key} value {value} in sink partition {partition} "
        f"(caused by {cause.topic}/{cause.partition}@{cause.offset})"
    )
