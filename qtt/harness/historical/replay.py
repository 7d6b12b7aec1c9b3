"""Replay historical plans: ``plan.json`` (never the SQL) + ``spec.json``'s input bytes,
built with today's runtime, checked against what was recorded at snapshot time.

Checked: the output bytes of every topic (and their timestamps), the schema of every step,
the processing log, and the state part of the topology. A difference in the rest of the
topology is drift: reported, never failing, and only for a folder written by today's Spark
line (another line words the same plan its own way), and only for queries that keep state. A
folder that cannot be read fails only itself.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import simplejson

from qtt.errors import (
    CorruptGoldenError,
    InfrastructureError,
    QttError,
    RuntimeBuildError,
    UnsupportedFeatureError,
    raise_interrupt_behind,
)
from qtt.harness.historical import ledger, plan_store, recorded_with, spec
from qtt.harness.replay import time_limits
from qtt.harness.replay.compare import Comparison, TopicDiff
from qtt.harness.replay.driver import OutputRecord, ReplayItem, ReplayResult
from qtt.harness.replay.inputs import InputRecord
from qtt.harness.replay.runner import replay_counted
from qtt.harness.results import CaseResult
from qtt.harness.status import Status
from qtt.plan.ir import codec
from qtt.plan.ir.shape import query_order
from qtt.plan.ir.steps import Plan, QueryPlan
from qtt.runtime.execute.topology_text import QueryTopology, parse
from qtt.runtime.spark import infrastructure, lines
from qtt.serde.registry.schema_registry import RegisteredSchema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class Loaded:
    folder: plan_store.HistoricalFolder
    plan: Plan
    spec: spec.Spec
    topology: dict[str, QueryTopology]


@dataclass
class HistoricalResult(CaseResult):
    drift: list[str] = field(default_factory=list)
    #: a restored checkpoint's writer: the Spark version in its manifest ("" for a fresh replay)
    writer: str = ""


def load(path: Path) -> Loaded:
    """Read one folder; every problem is a PlanFileError naming the file and the JSON path."""
    folder = plan_store.parse_folder(path)
    plan = codec.loads(folder.read(plan_store.PLAN_FILE), file=str(path / plan_store.PLAN_FILE))
    recorded = spec.loads(folder.read(plan_store.SPEC_FILE), file=str(path / plan_store.SPEC_FILE))
    topology = parse(folder.read(plan_store.TOPOLOGY_FILE), file=str(path / plan_store.TOPOLOGY_FILE))
    return Loaded(folder, plan, recorded, topology)


def inputs_of(recorded: spec.Spec) -> tuple[InputRecord, ...]:
    return tuple(
        InputRecord(
            topic=r.topic,
            timestamp=r.timestamp,
            key=spec.unb64(r.key_bytes),
            value=spec.unb64(r.value_bytes),
            partition=r.partition,
            headers=tuple((k, spec.unb64(v)) for k, v in r.headers),
        )
        for r in recorded.inputs
    )


def replay_folders(
    paths: Sequence[Path], session: Callable[[], SparkSession], *, progress: Callable[[int, int], None] | None = None
) -> list[HistoricalResult]:
    """Replay every folder; each gets its own result, whatever happens to the others.

    ``progress(done, len(paths))`` counts finished folders: one that does not load is done at
    once, one that replays when its last query ran. A folder that Spark could not replay for
    an infrastructure reason (after retries) is an infrastructure error, never a failure.
    """
    results: list[HistoricalResult] = []
    loaded: list[tuple[HistoricalResult, Loaded]] = []
    checker = ledger.Checker()
    for path in paths:
        hint = f"rerun it: qtt run {path}; a historical plan must keep replaying: fix the runtime, never the folder"
        result = HistoricalResult(str(path), path.parent.name, path.name, Status.PASSED, kind="historical", hint=hint)
        try:
            checker.check(path)
            item = load(path)
            result.case, result.variant = item.spec.case.name, item.spec.case.variant
            loaded.append((result, item))
        except QttError as e:
            not_loaded(result, e, path)
        results.append(result)
    items: list[ReplayItem] = []
    refused: dict[int, QttError] = {}
    for index, (_, item) in enumerate(loaded):
        try:
            items.append(ReplayItem.from_recorded(item.plan, inputs_of(item.spec), item.spec.schemas))
        except QttError as e:  # the registry refuses a schema a statement registers
            refused[index] = e
            items.append(ReplayItem(item.plan, ()))
    with _Topologies(session, [item for _, item in loaded]) as topologies:
        outcomes = replay_counted(
            [
                replace(item, mode=recorded_with.replay_mode(folder.folder))
                for item, (_, folder) in zip(items, loaded, strict=True)
            ],
            session,
            total=len(paths),
            progress=progress,
        )
        for index, ((result, item), outcome) in enumerate(zip(loaded, outcomes, strict=True)):
            _conclude(result, item, outcome, refused.get(index), topologies.of(index))
    return results


def not_loaded(result: CaseResult, error: QttError, folder: Path) -> None:
    """A folder that cannot be read: ``corrupt`` when its golden is damaged, else ``error``."""
    if isinstance(error, CorruptGoldenError):
        result.status, result.reason, result.hint = Status.CORRUPT, str(error), ledger.corrupt_hint(folder)
    else:
        result.status, result.reason = Status.ERROR, str(error)


def _conclude(
    result: HistoricalResult,
    item: Loaded,
    outcome: object,
    refused: QttError | None,
    topology: Future[dict[str, QueryTopology]],
) -> None:
    if refused is not None:
        result.status, result.reason = Status.FAILED, f"the plan no longer registers its schemas: {refused}"
    elif isinstance(outcome, InfrastructureError):
        _infrastructure(result, outcome)
    elif isinstance(outcome, UnsupportedFeatureError):  # this Spark line lacks what the plan needs
        result.status, result.reason = Status.SKIPPED, f"unsupported: {outcome.feature}"
    elif isinstance(outcome, QttError):
        if isinstance(outcome, RuntimeBuildError):
            outcome.at(file=str(Path(result.file) / "plan.json"))  # the builder knows the step, not the file
        result.status, result.reason = Status.FAILED, f"the plan no longer replays: {outcome}"
    else:
        assert isinstance(outcome, ReplayResult)
        _judge(result, item, outcome, topology)


class _Topologies:
    """Today's topology of every plan's queries that keep state, described on a thread of its
    own while the replays run.

    Describing builds each query once more and explains it: Python-to-JVM calls on the driver,
    which would otherwise run one after another once every replay ended. Spark's driver takes
    calls from several threads; the replays spend most of their time waiting for micro-batches.

    A query that keeps no state (recorded without stateful operators, and no stateful step
    today) is not described: its topology decides nothing a restore depends on, and
    describing a query costs more than replaying it. Its replay says whether today's runtime
    built a stateful operator for it after all (:func:`stateless_problems`).
    """

    def __init__(self, session: Callable[[], SparkSession], items: Sequence[Loaded]) -> None:
        # imported here, before the thread starts: a thread importing pyspark while this one
        # starts Spark can get the other's half-initialized module ("cannot import name
        # 'SQLContext' from partially initialized module 'pyspark.sql'")
        import qtt.runtime.execute.topology  # noqa: F401

        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qtt-topology")
        self._futures = [self._pool.submit(_describe, session, described_queries(item)) for item in items]

    def of(self, index: int) -> Future[dict[str, QueryTopology]]:
        return self._futures[index]

    def __enter__(self) -> _Topologies:
        return self

    def __exit__(self, *_: object) -> None:
        for future in self._futures:
            future.cancel()
        self._pool.shutdown(wait=True)


def described_queries(item: Loaded) -> list[QueryPlan]:
    """The queries of ``item``'s plan whose topology is compared: each that keeps state today
    or was recorded with state, and each the recorded topology does not name."""
    try:
        ordered = query_order(item.plan)
    except QttError:  # queries that read each other in a cycle: the replay says so
        return list(item.plan.queries())
    out = []
    for query, shape in ordered:
        recorded = item.topology.get(query.query_id)
        if shape.stateful or recorded is None or recorded.state:
            out.append(query)
    return out


def _describe(session: Callable[[], SparkSession], queries: Sequence[QueryPlan]) -> dict[str, QueryTopology]:
    from qtt.runtime.execute.topology import describe_query

    return {query.query_id: describe_query(session(), query) for query in queries}


def stateless_problems(item: Loaded, described: dict[str, QueryTopology], outcome: ReplayResult) -> list[str]:
    """A query whose topology was not described (it keeps no state) fails if its replay built a
    stateful operator all the same."""
    return [
        f"topology of {run.query_id}: recorded without stateful operators, today's runtime built {run.state_operators}"
        for run in outcome.runs
        if run.query_id not in described and run.query_id in item.topology and run.state_operators
    ]


def _infrastructure(result: HistoricalResult, error: InfrastructureError) -> None:
    result.status = Status.INFRA
    result.reason = f"Spark could not replay the plan, so nothing was proven: {error.message}"
    result.hint = error.hint or infrastructure.HINT


def _judge(
    result: HistoricalResult, item: Loaded, outcome: ReplayResult, topology: Future[dict[str, QueryTopology]]
) -> None:
    """Compare a replay with what the folder recorded."""
    result.replay = outcome
    result.seconds = outcome.seconds
    if outcome.timed_out is not None:  # partial: only its outputs are evidence
        result.comparison = compare_outputs(item.spec.outputs, outcome)
        time_limits.conclude(result, outcome, (record.topic for record in item.spec.outputs))
        return
    problems = check(item, outcome)
    began = time.perf_counter()
    try:
        described = topology.result()
        recorded = {query_id: one for query_id, one in item.topology.items() if query_id in described}
        state_problems, drift = compare_topology(recorded, described)
        state_problems += stateless_problems(item, described, outcome)
    except InfrastructureError as e:
        _infrastructure(result, e)
        return
    except QttError as e:
        state_problems, drift = [f"today's runtime cannot build the plan: {e}"], []
    except Exception as e:
        raise_interrupt_behind(e)
        if not infrastructure.is_infrastructure(e):
            raise
        _infrastructure(result, InfrastructureError(f"Spark could not explain the plan: {infrastructure.reason(e)}"))
        return
    # what is left of building and explaining today's query once the replays ended is part of
    # what a historical replay costs
    result.seconds += time.perf_counter() - began
    problems += state_problems
    # another Spark line words the same plan its own way: only the stateful operators compare
    result.drift = drift if lines.line(item.spec.spark_version) == lines.line(lines.pyspark_version()) else []
    result.comparison = compare_outputs(item.spec.outputs, outcome)
    result.problems = problems
    if problems or not result.comparison.ok:
        result.status = Status.FAILED
        parts = []
        if not result.comparison.ok:
            parts.append("outputs differ on " + ", ".join(d.topic for d in result.comparison.diffs))
        if problems:
            parts.append(f"{len(problems)} recorded fact(s) differ")
        result.reason = "; ".join(parts)
    elif drift:
        result.reason = f"passed with topology drift ({len(drift)} line(s)); state operators match"


def check(item: Loaded, outcome: ReplayResult) -> list[str]:
    """Differences in step schemas and processing log."""
    problems = []
    for query_id, schemas in item.spec.step_schemas.items():
        now = outcome.step_schemas.get(query_id, {})
        for context, schema in schemas.items():
            if now.get(context) != schema:
                problems.append(f"step schema of {query_id} {context}: recorded {schema}, now {now.get(context)}")
    problems += compare_internal_topics(item.spec.internal_topics, spec.internal_topics_of(outcome.internal_topics))
    problems += compare_schemas(item.spec.schemas, outcome.schemas)
    recorded_log = [(e.input, e.query_id, e.context) for e in item.spec.processing_log]
    now_log = [(e.seq, e.query_id, e.context) for e in outcome.processing_log]
    if recorded_log != now_log:
        problems.append(f"processing log: recorded {recorded_log}, now {now_log}")
    return problems


def compare_schemas(recorded: Sequence[RegisteredSchema], now: Sequence[RegisteredSchema]) -> list[str]:
    """Differences in what the replay registered or read, per subject version, naming the subject."""
    problems = []
    for index in range(max(len(recorded), len(now))):
        was = recorded[index] if index < len(recorded) else None
        got = now[index] if index < len(now) else None
        if was == got:
            continue
        subject = (was or got).subject  # type: ignore[union-attr]
        if was is None or got is None:
            what = "not registered now" if got is None else "not recorded"
            shown = was if got is None else got
            problems.append(f"schema registry subject {subject}: {what} (id {shown.schema_id}, {shown.schema})")  # type: ignore[union-attr]
            continue
        for label, old, new in (
            ("subject", was.subject, got.subject),
            ("version", was.version, got.version),
            ("schema id", was.schema_id, got.schema_id),
            ("schema type", was.schema_type, got.schema_type),
            ("schema", was.schema, got.schema),
            ("references", was.references, got.references),
        ):
            if old != new:
                problems.append(f"schema registry subject {was.subject}: recorded {label} {old}, now {new}")
    return problems


def compare_outputs(recorded: Sequence[spec.SpecRecord], outcome: ReplayResult) -> Comparison:
    """Byte-exact comparison per topic; the diff shows the decoded records."""
    result = Comparison()
    wanted: dict[str, list[spec.SpecRecord]] = {}
    for record in recorded:
        wanted.setdefault(record.topic, []).append(record)
    for topic in sorted(set(wanted) | set(outcome.outputs)):
        exp = wanted.get(topic, [])
        got = outcome.outputs.get(topic, [])
        first = next(
            (i for i in range(max(len(exp), len(got))) if i >= len(exp) or i >= len(got) or not _same(exp[i], got[i])),
            None,
        )
        if first is None:
            continue
        details = []
        if len(exp) != len(got):
            details.append(f"recorded {len(exp)} record(s), now {len(got)}")
        if first < len(exp) and first < len(got):
            details.append(f"record {first}: bytes differ")
        result.diffs.append(
            TopicDiff(
                topic,
                first,
                [
                    {
                        "topic": r.topic,
                        "key": r.key,
                        "value": r.value,
                        "timestamp": r.timestamp,
                        "partition": r.partition,
                    }
                    for r in exp[first:]
                ],
                [{**o.as_json(), "partition": o.partition} for o in got[first:]],
                details,
            )
        )
    return result


def _same(recorded: spec.SpecRecord, actual: OutputRecord) -> bool:
    return (
        spec.unb64(recorded.key_bytes) == actual.key_bytes
        and spec.unb64(recorded.value_bytes) == actual.value_bytes
        and recorded.timestamp == actual.timestamp
        and recorded.partition == actual.partition
    )


#: the most differing plan lines a drift report quotes
DRIFT_LINES = 6


def _plan_diff(recorded: Sequence[str], now: Sequence[str]) -> str:
    """The differing lines, ``- recorded`` then ``+ now``, indented under the drift line."""
    lines = [
        line
        for line in difflib.unified_diff(list(recorded), list(now), lineterm="", n=0)
        if line[:1] in "-+" and not line.startswith(("---", "+++"))
    ]
    more = f"\n    ... and {len(lines) - DRIFT_LINES} more" if len(lines) > DRIFT_LINES else ""
    return "".join(f"\n    {line[0]} {line[1:].strip()[:200]}" for line in lines[:DRIFT_LINES]) + more


def compare_topology(before: dict[str, QueryTopology], after: dict[str, QueryTopology]) -> tuple[list[str], list[str]]:
    """(state differences, which fail; plan drift, which is only reported)."""
    problems, drift = [], []
    for query_id in sorted(set(before) | set(after)):
        old, new = before.get(query_id), after.get(query_id)
        if old is None or new is None:
            problems.append(f"topology: query {query_id} {'is new' if old is None else 'is gone'}")
            continue
        if old.state != new.state:
            problems.append(f"topology of {query_id}: stateful operators recorded {old.state}, now {new.state}")
        if old.plan != new.plan:
            changed = sum(1 for a, b in zip(old.plan, new.plan, strict=False) if a != b)
            changed += abs(len(old.plan) - len(new.plan))
            shown = _plan_diff(old.plan, new.plan)
            drift.append(f"topology of {query_id}: {changed} plan line(s) differ from the recorded plan" + shown)
    return problems, drift


def compare_internal_topics(
    recorded: Sequence[spec.SpecInternalTopic], now: Sequence[spec.SpecInternalTopic]
) -> list[str]:
    """Differences in internal topics: names, key and value schemas, and every record, in order."""
    problems: list[str] = []
    by_name = {topic.name: topic for topic in now}
    for old in recorded:
        new = by_name.pop(old.name, None)
        if new is None:
            problems.append(f"internal topic {old.name}: recorded, but today's replay does not write it")
            continue
        for part in ("key_schema", "value_schema"):
            if getattr(old, part) != getattr(new, part):
                problems.append(
                    f"internal topic {old.name}: {part.replace('_', ' ')} recorded "
                    f"{getattr(old, part)}, now {getattr(new, part)}"
                )
        for index, (was, is_) in enumerate(zip(old.records, new.records, strict=False)):
            if _record_text(was) != _record_text(is_):
                problems.append(
                    f"internal topic {old.name}: record {index} differs: recorded "
                    f"{_record_text(was)}, now {_record_text(is_)}"
                )
                break
        if len(old.records) != len(new.records):
            problems.append(f"internal topic {old.name}: recorded {len(old.records)} record(s), now {len(new.records)}")
    for name in by_name:
        problems.append(f"internal topic {name}: not recorded, but today's replay writes it")
    return problems


def _record_text(record: spec.SpecInternalRecord) -> str:
    """Canonical text of a record: a number read back from spec.json equals the one Spark gave.

    Struct fields are sorted: spec.json writes every mapping with sorted keys, so a recorded
    record has lost its field order. The order is still compared, through the topic's value
    schema.
    """
    stamped = f" timestamp {record.timestamp}" if record.timestamp is not None else ""
    return (
        f"batch {record.batch} partition {record.partition}{stamped} {record.change} "
        f"key={simplejson.dumps(record.key, use_decimal=True, sort_keys=True)} "
        f"value={simplejson.dumps(record.value, use_decimal=True, sort_keys=True)}"
    )
