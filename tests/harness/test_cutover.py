"""The swap-in-place invariant: a correct cut holds, a gate that lets one record through early does not."""

from __future__ import annotations

from qtt.harness.replay.cutover import Cause, ControlVector, Emitted, violations

# two source partitions, control events at offset 2 of partition 0 and offset 1 of partition 1
VECTOR = ControlVector({("orders", 0): 2, ("orders", 1): 1})
INPUTS = [
    Cause("orders", 0, 0),
    Cause("orders", 1, 0),
    Cause("orders", 0, 1),
    Cause("orders", 0, 2),
    Cause("orders", 1, 1),
]


def _count(plan: str, upto: int) -> list[Emitted]:
    """A count per source partition, written to one sink partition (fewer than the source's)."""
    counts: dict[int, int] = {}
    out = []
    for cause in INPUTS[:upto]:
        counts[cause.partition] = counts.get(cause.partition, 0) + 1
        out.append(Emitted(0, cause.partition, {plan: counts[cause.partition]}, cause))
    return out


OLD, NEW = _count("n", len(INPUTS)), _count("n", len(INPUTS))


def test_a_cut_at_the_vector_holds() -> None:
    swapped = [r for r in OLD if VECTOR.before(r.cause)] + [r for r in NEW if not VECTOR.before(r.cause)]
    assert violations(OLD, NEW, swapped, VECTOR) == []


def test_a_start_gate_that_opens_one_record_early_breaks_it() -> None:
    early = [r for r in NEW if not VECTOR.before(r.cause)]
    leaked = next(r for r in NEW if VECTOR.before(r.cause))
    swapped = [r for r in OLD if VECTOR.before(r.cause)] + [leaked] + early
    (problem,) = violations(OLD, NEW, swapped, VECTOR)
    assert problem.startswith("not expected at the cut: key 0 value {'n': 1}")
    assert "1 extra; the new plan's record for an input before the cut: its start gate opened early" in problem


def test_a_record_lost_at_the_cut_and_one_out_of_order_are_named() -> None:
    before = [r for r in OLD if VECTOR.before(r.cause)]
    after = [r for r in NEW if not VECTOR.before(r.cause)]
    lost = violations(OLD, NEW, before[:-1] + after, VECTOR)
    assert lost == [
        f"lost at the cut: key {before[-1].key} value {before[-1].value} in sink partition 0 "
        f"(caused by orders/{before[-1].cause.partition}@{before[-1].cause.offset}) (1 missing)"
    ]
    reordered = violations(OLD, NEW, before[:-1] + after[:1] + before[-1:] + after[1:], VECTOR)
    assert len(reordered) == 1 and "caused before the cut, comes after" in reordered[0]
