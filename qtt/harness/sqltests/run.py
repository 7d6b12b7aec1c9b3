"""Run SQL tests on Spark and judge their assertions.

Each test is interpreted first (:mod:`qtt.harness.sqltests.script`). Its first epoch replays the
records inserted before the plan changed; each later epoch resumes every stateful query from
the checkpoint the epoch before left (a ``CREATE OR REPLACE`` upgrade keeps the query id, so
the new plan finds the old query's offsets and state) and replays only the new records. The
epochs of different tests replay together, round by round, sharing Spark queries. Then the
test's checks run in statement order over the records each topic holds: the first that does
not hold ends the test, as in ksqlDB's ``KsqlTester``.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from qtt.errors import AssertionFailedError, QttError, QueryStoppedError, SqlError, UnsupportedFeatureError
from qtt.harness.cases import expected as expected_
from qtt.harness.cases.model import ExpectedException
from qtt.harness.replay.driver import ReplayItem, ReplayResult
from qtt.harness.replay.inputs import InputRecord, encode_insert
from qtt.harness.replay.restored_runs import Restore
from qtt.harness.replay.runner import SessionProvider, guarded, replay_counted
from qtt.harness.replay.schemas import registry_for_case
from qtt.harness.replay.swap import control_event
from qtt.harness.replay.topic_serdes import topic_serdes
from qtt.harness.results import CaseResult
from qtt.harness.sqltests.files import SqlTest
from qtt.harness.sqltests.script import Check, Epoch, Script, interpret
from qtt.harness.status import Status
from qtt.plan.inserts import ROWTIME
from qtt.plan.statements import start_gate

KIND = "sql"


@dataclass(frozen=True)
class SeenRecord:
    """A record of a topic as a test sees it: ROWTIME and every column, typed; ``seq`` is the
    insert that caused it (an inserted record's own)."""

    seq: int
    columns: dict[str, Any]
    tombstone: bool


def run_sql_tests(
    tests: Sequence[SqlTest],
    session: SessionProvider,
    *,
    progress: Callable[[int, int], None] | None = None,
    topics: dict[int, dict[str, list[SeenRecord]]] | None = None,
) -> list[CaseResult]:
    """One result per test, in order. ``progress`` counts the tests judged: a test is judged
    as soon as its last statement group ran (or it failed), not when the slowest test ends.
    ``topics`` gets, by each test's index, the records every topic held at its end (inserted
    and written), in record order."""
    results = [CaseResult(t.file, t.name, "", Status.PASSED, kind=KIND, hint=_hint(t)) for t in tests]
    scripts: list[tuple[CaseResult, Script]] = []
    for result, test in zip(results, tests, strict=True):
        found: list[Script] = []
        if guarded(result, partial(_prepare, test, result, found)):
            scripts.append((result, found[0]))
    records: dict[int, dict[str, list[SeenRecord]]] = {id(script): _inserted(script) for _, script in scripts}
    index_of = {id(result): n for n, result in enumerate(results)}
    judged: set[int] = set()

    def judge(i: int, *, ended: bool = False) -> None:
        """Judge test ``i`` once (``ended``: its verdict is in already, its checks are moot)."""
        if i in judged:
            return
        judged.add(i)
        result, script = scripts[i]
        if topics is not None:
            topics[index_of[id(result)]] = records[id(script)]
        if result.status == Status.PASSED and not ended:
            guarded(result, partial(_judge, script, result, records[id(script)]))
        if progress is not None:
            progress(len(results) - len(scripts) + len(judged), len(results))

    if progress is not None and len(scripts) < len(results):
        progress(len(results) - len(scripts), len(results))
    work = Path(tempfile.mkdtemp(prefix="qtt-sql-"))
    try:
        previous: dict[int, ReplayResult] = {}
        for epoch in range(max((len(script.epochs) for _, script in scripts), default=0)):
            live = [(i, script) for i, (result, script) in enumerate(scripts) if epoch < len(script.epochs)]
            items: list[ReplayItem] = []
            built = [
                (i, script)
                for i, script in live
                if (epoch == 0 or i in previous)
                and guarded(scripts[i][0], partial(_build, items, script, epoch, work / str(i), previous.get(i)))
            ]
            outcomes = replay_counted(items, session, total=len(items), progress=None)
            for (i, script), outcome in zip(built, outcomes, strict=True):
                if isinstance(outcome, QueryStoppedError) and _expected(script.test) is not None:
                    _verdict(script.test, scripts[i][0], outcome.at(file=script.test.file, case=script.test.name))
                    previous.pop(i, None)
                    judge(i, ended=True)  # the stop ended the test: its checks have nothing to check
                    continue
                if isinstance(outcome, QttError):
                    guarded(scripts[i][0], partial(_raise, outcome))
                    previous.pop(i, None)
                    continue
                scripts[i][0].seconds += outcome.seconds
                previous[i] = outcome
                _add_outputs(records[id(script)], outcome, _insert_of_input(script))
            for i, script in live:
                if epoch == len(script.epochs) - 1 or i not in previous or scripts[i][0].status != Status.PASSED:
                    judge(i)
        for i in range(len(scripts)):
            judge(i)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


def not_for_scenario(test: SqlTest, scenario: str) -> CaseResult:
    """A SQL test asked for under a scenario other than fresh: skipped, saying why."""
    from qtt.harness.replay.scenarios import CASES_ONLY  # its comparison pulls in deepdiff: only when asked for

    where = "case variants" if scenario in CASES_ONLY else "case variants and historical folders"
    reason = f"the {scenario} scenario runs on {where}; a SQL test runs fresh"
    return CaseResult(test.file, test.name, scenario, Status.SKIPPED, reason, kind=scenario, hint=_hint(test))


def _hint(test: SqlTest) -> str:
    return f"rerun it: qtt run {test.file} -k {shlex.quote(test.name)}"


def _build(items: list[ReplayItem], *args: Any) -> bool:
    items.append(_item(*args))
    return True


def _raise(error: QttError) -> None:
    raise error


def _prepare(test: SqlTest, result: CaseResult, found: list[Script]) -> bool:
    """Interpret the test; True if it needs Spark, False when it is judged already."""
    if not test.has_statements:
        result.status = Status.SKIPPED
        result.reason = "the test has no statements (ksqlDB passes such a test without running anything)"
        return False
    expected = _expected(test)
    if expected is not None and expected_.expected_class(expected.type) is None:
        raise UnsupportedFeatureError(f"expected exception type {expected.type}")
    try:
        script = interpret(test)
    except SqlError as error:
        if isinstance(error, UnsupportedFeatureError):
            raise
        _verdict(test, result, error.at(file=test.file, case=test.name))
        return False
    found.append(script)
    if script.epochs:
        return True
    _judge(script, result, {})
    return False


def _expected(test: SqlTest) -> ExpectedException | None:
    if test.expected_error is None and test.expected_message is None:
        return None
    return ExpectedException(type=test.expected_error, message=test.expected_message)


def _verdict(test: SqlTest, result: CaseResult, error: QttError | None) -> None:
    """Pass or fail the test on the error that ended it (None: every statement held)."""
    expected = _expected(test)
    if expected is None:
        if error is not None:
            raise error
        return
    if error is None:
        result.status = Status.FAILED
        containing = f" containing {expected.message!r}" if expected.message else ""
        result.reason = f"expected {expected.type}{containing}, but every statement held"
        return
    why = expected_.mismatch(expected, error)
    result.status = Status.PASSED if why is None else Status.FAILED
    passed = "stopped as expected" if isinstance(error, QueryStoppedError) else "raised as expected"
    result.reason = f"{passed}: {type(error).__name__}" if why is None else why


def _judge(script: Script, result: CaseResult, topics: dict[str, list[SeenRecord]]) -> None:
    read: dict[str, int] = {}
    for check in script.checks:
        failure = check if isinstance(check, QttError) else _failure(check, topics, read)
        if failure is not None:
            _verdict(script.test, result, failure.at(file=script.test.file, case=script.test.name))
            return
    error = script.error
    _verdict(script.test, result, None if error is None else error.at(file=script.test.file, case=script.test.name))


def _failure(check: Check, topics: dict[str, list[SeenRecord]], read: dict[str, int]) -> QttError | None:
    """Why the source's next record is not what ``check`` expects; None when it is."""
    topic = check.source.topic
    position = read.get(topic, 0)
    records = topics.get(topic, [])
    line = check.statement.pos.line if check.statement.pos else None
    wanted = _shown(check.expected, tombstone=check.tombstone)
    if position >= len(records) or records[position].seq >= check.seen:
        msg = (
            f"Expected another record, but all records have already been read: expected {wanted}; "
            f"{check.source.name} has {position} record(s) after the inserts before this statement"
        )
        return AssertionFailedError(msg, line=line)
    read[topic] = position + 1
    record = records[position]
    if check.tombstone:  # ksqlDB compares the whole key, the named columns' and the others' (null)
        compared = {c.name: check.expected.get(c.name) for c in check.source.schema.key}
    else:
        compared = check.expected
    matches = record.tombstone == check.tombstone and all(
        name in record.columns and record.columns[name] == value for name, value in compared.items()
    )
    if matches:
        return None
    expected = _shown(compared, tombstone=check.tombstone)
    actual = _shown({name: record.columns.get(name) for name in compared}, tombstone=record.tombstone)
    msg = f"Expected record does not match actual. Expected: {expected} vs. Actual: {actual}"
    return AssertionFailedError(msg, line=line)


def _shown(columns: dict[str, Any], *, tombstone: bool) -> str:
    text = ", ".join(f"{name}={value!r}" for name, value in columns.items())
    return f"({text}){' (tombstone)' if tombstone else ''}"


def _inserted(script: Script) -> dict[str, list[SeenRecord]]:
    """The records the test's inserts wrote, by topic."""
    topics: dict[str, list[SeenRecord]] = {}
    for seq, insert in enumerate(script.inserts):
        columns = {**insert.key_columns(), **insert.value_columns(), ROWTIME: insert.timestamp}
        topics.setdefault(insert.source.topic, []).append(SeenRecord(seq, columns, tombstone=False))
    return topics


def _add_outputs(topics: dict[str, list[SeenRecord]], outcome: ReplayResult, insert_of: Sequence[int]) -> None:
    """Add an epoch's output records to their topics, each topic in record order; ``insert_of``
    maps each input record to its insert (a control event to the insert after it)."""
    for topic, records in outcome.outputs.items():
        serde = outcome.sinks[topic]
        seen = topics.setdefault(topic, [])
        for record in records:
            key = serde.read_row(record.key_bytes, is_key=True) or (None,) * len(serde.key_columns)
            value = serde.read_row(record.value_bytes, is_key=False)
            columns = dict(zip((c.name for c in serde.key_columns), key, strict=True))
            if value is not None:
                columns.update(zip((c.name for c in serde.value_columns), value, strict=True))
            columns[ROWTIME] = record.timestamp
            seen.append(SeenRecord(insert_of[record.seq], columns, tombstone=value is None))
        seen.sort(key=lambda r: r.seq)  # stable: inserts, then outputs, of one input in order


def _item(script: Script, index: int, folder: Path, previous: ReplayResult | None) -> ReplayItem:
    """Epoch ``index`` of a test: its plan over every record so far, resuming where the last left.

    The inputs are every epoch's control events (a swap-in-place upgrade's), then its inserts:
    an epoch's restore point is its first control event or insert. A query swapped in place
    reads them all from the first, its start gate keeping only what it computed after the cut.
    """
    epochs = script.epochs
    epoch = epochs[index]
    last = index + 1 == len(epochs)
    registry = registry_for_case(epoch.plan, ())
    snapshot = registry.snapshot() if registry is not None else None
    inputs: list[InputRecord] = []
    starts: list[int] = []
    for number, each in enumerate(epochs[: index + 1]):
        stop = len(script.inserts) if number + 1 == len(epochs) else epochs[number + 1].first
        plain = topic_serdes(each.plan.ddl_commands())
        serdes = {topic: serde.with_registry(snapshot) for topic, serde in plain.items()}
        starts.append(len(inputs))
        inputs += _controls(each)
        inputs += [encode_insert(insert, serdes[insert.source.topic]) for insert in script.inserts[each.first : stop]]
    if index == 0:
        restore = None if last else Restore(len(inputs), folder / "0", capture=True)
    else:
        assert previous is not None
        before = {query.query_id for query in epochs[index - 1].plan.queries()}
        restore = Restore(
            starts[index],
            folder / str(index - 1),
            capture=False,
            consumed=dict(previous.consumed),
            written_at=dict(previous.written_at),
            keep=None if last else folder / str(index),
            running=frozenset(before),
            backfill=frozenset(
                query.query_id
                for query in epoch.plan.queries()
                if query.query_id not in before and start_gate(query) is not None
            ),
        )
    expected = _expected(script.test)
    stops = expected is not None and expected_.at_run_time(expected)
    return ReplayItem(epoch.plan, tuple(inputs), registry, restore=restore, stops=stops)


def _controls(epoch: Epoch) -> list[InputRecord]:
    """The control events written before the epoch's first insert: one per source partition."""
    return [
        control_event(topic, partition, partitions)
        for topic, partitions in epoch.controls
        for partition in range(partitions)
    ]


def _insert_of_input(script: Script) -> list[int]:
    """For each input record of the test's last epoch, the insert it is or precedes."""
    out: list[int] = []
    for number, epoch in enumerate(script.epochs):
        stop = len(script.inserts) if number + 1 == len(script.epochs) else script.epochs[number + 1].first
        out += [epoch.first] * sum(partitions for _, partitions in epoch.controls)
        out += list(range(epoch.first, stop))
    return out
