"""Scenarios: each case written once, run under several ways a query's life can go.

- ``fresh``: the replay every run does: all inputs from empty state, compared with the case.
- ``restored``: a historical folder resumed from its stored checkpoint
  (:mod:`qtt.harness.historical.restored`); a case variant has none, so it is skipped there.
  ``restored-partitions``, ``restored-hdfs``, ``restored-format2`` and ``restored-no-changelog``
  resume it after one of Spark's upgrade operations
  (:mod:`qtt.harness.historical.spark_operations`).
- ``restart``: every streaming query is stopped after each micro-batch and started again from
  its own checkpoint; outputs, processing log and internal topics must equal the fresh run's:
  nothing lost, nothing duplicated.
- ``rebatch``: the same inputs in other micro-batch splits (seeded, reproducible). A stateless
  plan's outputs must not change; a stateful plan's final tables (the last value per key of
  each table it writes) must not change.
- ``batch``: the plan as a bounded batch query over all inputs at once (the replay source
  has a batch reader; ``transformWithState`` runs in batch queries too): a stateless plan's
  outputs, and a stateful plan's final tables, must equal the streaming run's.
- ``swap`` and ``swap-restart``: the plan swapped in place for itself at a vector of control
  events (:mod:`qtt.harness.replay.swap`); the sink must hold the cutover invariant, with the
  swapped replay's queries restarted after every micro-batch in ``swap-restart``.

A scenario is compared with the fresh replay of the same variant in the same run, so a case
whose expected outputs are wrong still proves its scenarios.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from qtt.errors import QttError
from qtt.harness.cases.model import CaseVariant
from qtt.harness.replay import swap, time_limits
from qtt.harness.replay.compare import Comparison, TopicDiff
from qtt.harness.replay.driver import OutputRecord, ReplayItem, ReplayResult
from qtt.harness.replay.runner import SessionProvider, replay_counted, run_variants
from qtt.harness.results import CaseResult
from qtt.harness.status import Status
from qtt.plan.ir import steps as s
from qtt.runtime.jobs import ReplayMode

FRESH, RESTORED, RESTART, REBATCH, BATCH = "fresh", "restored", "restart", "rebatch", "batch"
SWAP, SWAP_RESTART = "swap", "swap-restart"
#: the restored replay under one of Spark's upgrade operations
#: (:mod:`qtt.harness.historical.spark_operations`)
SPARK_OPERATIONS = ("restored-partitions", "restored-hdfs", "restored-format2", "restored-no-changelog")
SCENARIOS = (FRESH, RESTORED, RESTART, REBATCH, BATCH, SWAP, SWAP_RESTART, *SPARK_OPERATIONS)
#: the scenarios that resume stored checkpoints: they run on historical folders only
RESTORES = (RESTORED, *SPARK_OPERATIONS)
#: the scenarios that run on case variants only (a historical folder replays fresh and restored)
CASES_ONLY = (RESTART, REBATCH, BATCH, SWAP, SWAP_RESTART)
#: why a scenario cannot run for a case variant at all
NOT_FOR_CASES = {
    name: "a case variant has no stored checkpoint: restored replays run on historical folders" for name in RESTORES
}


def parse(text: str) -> tuple[str, ...]:
    """``restart,rebatch`` as a tuple of known scenario names, in the order given."""
    names = tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    unknown = [name for name in names if name not in SCENARIOS]
    if not names or unknown:
        shown = ", ".join(unknown) if unknown else repr(text)
        raise QttError(f"unknown scenario {shown}; the scenarios are {', '.join(SCENARIOS)}")
    return names


def run_scenarios(
    variants: Sequence[CaseVariant],
    scenarios: Sequence[str],
    session: SessionProvider,
    *,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    scenario_progress: Callable[[str], Callable[[int, int], None]] | None = None,
) -> list[CaseResult]:
    """Every variant under every scenario: the fresh results (when asked for), then one result
    per variant and other scenario, labelled with the scenario. ``progress`` counts the fresh
    replays; ``scenario_progress(name)`` gives the callback that counts a scenario's."""
    fresh = run_variants(variants, session, mode=ReplayMode(capture_state=RESTART in scenarios), progress=progress)
    results = list(fresh) if FRESH in scenarios else []
    for scenario in scenarios:
        if scenario == FRESH:
            continue
        labelled = [_labelled(result, scenario) for result in fresh]
        if scenario in (SWAP, SWAP_RESTART):
            counted = scenario_progress(scenario) if scenario_progress else None
            _run_swaps(scenario, fresh, labelled, session, counted)
            results += labelled
            continue
        todo: list[tuple[CaseResult, ReplayResult, ReplayItem]] = []
        for variant, before, result in zip(variants, fresh, labelled, strict=True):
            reason = NOT_FOR_CASES.get(scenario) or _cannot(before)
            item = None if reason else _item(scenario, variant, before, seed)
            if item is None:
                result.status, result.reason = Status.SKIPPED, reason or "one input record: no other split"
            else:
                assert before.replay is not None
                todo.append((result, before.replay, item))
        outcomes = replay_counted(
            [item for _, _, item in todo],
            session,
            total=len(todo),
            progress=scenario_progress(scenario) if scenario_progress and todo else None,
        )
        for (result, before_replay, item), outcome in zip(todo, outcomes, strict=True):
            _judge(scenario, result, before_replay, outcome, table_topics(item.plan))
        results += labelled
    return results


def _run_swaps(
    scenario: str,
    fresh: Sequence[CaseResult],
    labelled: Sequence[CaseResult],
    session: SessionProvider,
    progress: Callable[[int, int], None] | None,
) -> None:
    """Each variant's plan swapped in place for itself (:mod:`qtt.harness.replay.swap`), judged
    by the cutover invariant."""
    todo: list[tuple[CaseResult, swap.Swap]] = []
    for before, result in zip(fresh, labelled, strict=True):
        reason = _cannot(before)
        if not reason:
            assert before.replay is not None and before.planned is not None
            replay = before.replay
            found = swap.swap_for(before.planned.plan, replay.inputs, replay.schemas, restart=scenario == SWAP_RESTART)
            reason = found if isinstance(found, str) else ""
        if reason:
            result.status, result.reason = Status.SKIPPED, reason
        else:
            assert isinstance(found, swap.Swap)
            todo.append((result, found))
    items = [item for _, each in todo for item in each.items]
    outcomes = replay_counted(items, session, total=len(items), progress=progress if todo else None)
    for number, (result, each) in enumerate(todo):
        old, new, swapped = outcomes[3 * number : 3 * number + 3]
        failed = next((o for o in (old, new, swapped) if isinstance(o, QttError)), None)
        if failed is not None:
            result.status, result.reason = Status.FAILED, f"the {scenario} replay failed: {failed}"
            continue
        assert isinstance(old, ReplayResult) and isinstance(new, ReplayResult) and isinstance(swapped, ReplayResult)
        result.replay, result.seconds = swapped, swapped.seconds
        try:
            problems = each.judge(old, new, swapped)
        except ValueError as error:  # an output no input of the swapped query caused
            problems = [f"cannot judge the cut: {error}"]
        if problems:
            more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
            result.status = Status.FAILED
            result.reason = (
                f"{each.query_id} swapped in place for itself: its sink {each.sink_topic} breaks the cutover "
                f"invariant: {'; '.join(problems[:5])}{more}"
            )


def _labelled(fresh: CaseResult, scenario: str) -> CaseResult:
    variant = f"{fresh.variant}, {scenario}" if fresh.variant else scenario
    return CaseResult(fresh.file, fresh.case, variant, Status.PASSED, kind=scenario, hint=fresh.hint)


def _cannot(fresh: CaseResult) -> str:
    if fresh.replay is None or fresh.planned is None:
        return (
            f"no fresh replay to compare with ({fresh.status}: {fresh.reason.splitlines()[0] if fresh.reason else ''})"
        )
    return ""


def _item(scenario: str, variant: CaseVariant, fresh: CaseResult, seed: int) -> ReplayItem | None:
    assert fresh.replay is not None and fresh.planned is not None
    replay = fresh.replay
    item = ReplayItem.from_recorded(fresh.planned.plan, replay.inputs, replay.schemas)
    if scenario == RESTART:
        return replace(item, mode=ReplayMode(restart=True, capture_state=True))
    if scenario == BATCH:
        return replace(item, mode=ReplayMode(bounded=True, per_record=False))
    marks = rebatched(len(replay.inputs), stateful=replay.stateful, key=f"{variant.file}|{variant.label}|{seed}")
    if marks is None:
        return None
    inputs = tuple(replace(record, new_batch=mark) for record, mark in zip(replay.inputs, marks, strict=True))
    return replace(item, inputs=inputs, mode=ReplayMode(per_record=False))


def rebatched(count: int, *, stateful: bool, key: str) -> list[bool] | None:
    """Seeded micro-batch starts over ``count`` inputs, other than the fresh run's; None if none exist.

    A fresh stateful replay takes one record per batch, a stateless one all in one batch, so
    the split always joins two records (stateful) or splits them (stateless) somewhere.
    """
    if count < 2:
        return None
    chooser = random.Random(key)
    marks = [False] + [chooser.random() < 0.5 for _ in range(count - 1)]
    if stateful and all(marks[1:]):
        marks[chooser.randrange(1, count)] = False
    if not stateful and not any(marks):
        marks[chooser.randrange(1, count)] = True
    return marks


def _judge(
    scenario: str, result: CaseResult, fresh: ReplayResult, outcome: ReplayResult | QttError, tables: list[str]
) -> None:
    if isinstance(outcome, QttError):
        result.status, result.reason = Status.FAILED, f"the {scenario} replay failed: {outcome}"
        return
    result.replay = outcome
    result.seconds = outcome.seconds
    if scenario in (REBATCH, BATCH) and fresh.stateful:
        result.comparison = _compare(
            {t: _final(fresh.outputs.get(t, [])) for t in tables},
            {t: _final(outcome.outputs.get(t, [])) for t in tables},
            scenario,
        )
    else:
        result.comparison = _compare(fresh.outputs, outcome.outputs, scenario)
    if time_limits.conclude(result, outcome, (t for t, records in fresh.outputs.items() for _ in records)):
        return
    if scenario == RESTART:
        if [(e.seq, e.query_id, e.context) for e in fresh.processing_log] != [
            (e.seq, e.query_id, e.context) for e in outcome.processing_log
        ]:
            result.problems.append("processing log differs from the uninterrupted run")
        if _internal(fresh) != _internal(outcome):
            result.problems.append("internal topics differ from the uninterrupted run")
    if result.problems or not result.comparison.ok:
        result.status = Status.FAILED
        what = {
            RESTART: "restarted after every micro-batch",
            REBATCH: "fed in other micro-batches",
            BATCH: "run as a bounded batch query",
        }[scenario]
        parts = [f"{what}, the replay differs from the fresh one"]
        parts += [f"outputs differ on {d.topic} from record {d.first_index}" for d in result.comparison.diffs]
        result.reason = "; ".join(parts + result.problems)


def table_topics(plan: s.Plan) -> list[str]:
    """The topics the plan's table sinks write."""
    return sorted({q.physical_plan.topic for q in plan.queries() if isinstance(q.physical_plan, s.TableSinkV1)})


def _final(records: Sequence[OutputRecord]) -> list[OutputRecord]:
    """A table's last record per key, in key order: the table the topic describes."""
    last: dict[bytes | None, OutputRecord] = {}
    for record in records:
        last[record.key_bytes] = record
    return [last[key] for key in sorted(last, key=lambda k: (k is not None, k or b""))]


def _internal(replay: ReplayResult) -> list[Any]:
    return [(t.name, t.key_schema, t.value_schema, t.records) for t in replay.internal_topics]


def _compare(before: dict[str, list[OutputRecord]], after: dict[str, list[OutputRecord]], scenario: str) -> Comparison:
    comparison = Comparison()
    for topic in sorted(set(before) | set(after)):
        exp, got = before.get(topic, []), after.get(topic, [])
        same = [_bytes(a) == _bytes(b) for a, b in zip(exp, got, strict=False)]
        first = next((i for i, ok in enumerate(same) if not ok), None if len(exp) == len(got) else len(same))
        if first is None:
            continue
        details = [f"fresh {len(exp)} record(s), now {len(got)}"] if len(exp) != len(got) else []
        details.append(_first_difference(exp[first : first + 1], got[first : first + 1], scenario))
        details.append(f"expected: the fresh replay; actual: the {scenario} replay")
        comparison.diffs.append(
            TopicDiff(
                topic,
                first,
                [{**r.as_json(), "partition": r.partition} for r in exp[first:]],
                [{**r.as_json(), "partition": r.partition} for r in got[first:]],
                details,
            )
        )
    return comparison


def _first_difference(exp: Sequence[OutputRecord], got: Sequence[OutputRecord], scenario: str) -> str:
    """Which input's output differs first, and the micro-batch each side wrote it in."""
    cause = (exp or got)[0].seq
    where = [
        f"{side} micro-batch {records[0].batch}"
        for side, records in (("fresh", exp), (scenario, got))
        if records and records[0].batch >= 0
    ]
    batches = f", written in {' and '.join(where)}" if where else ""
    return f"first difference: an output of input {cause} (inputs are numbered from 0){batches}"


def _bytes(record: OutputRecord) -> tuple[Any, ...]:
    return (record.key_bytes, record.value_bytes, record.timestamp, record.partition)
