"""Run one case variant: parse, plan, replay on Spark, compare, check post-conditions.

Each variant gets a :class:`CaseResult` with a :class:`~qtt.harness.status.Status`.
"""

from __future__ import annotations

import shlex
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qtt.errors import (
    CaseFileError,
    InfrastructureError,
    QttError,
    QueryStoppedError,
    ReplayError,
    RuntimeBuildError,
    SqlError,
    UnsupportedFeatureError,
    raise_interrupt_behind,
)
from qtt.harness.cases import expected as expected_
from qtt.harness.cases.model import CaseVariant, ExpectedException, Record, at_line
from qtt.harness.replay import post as post_
from qtt.harness.replay import time_limits
from qtt.harness.replay.compare import check_processing_log, compare
from qtt.harness.replay.driver import OutputRecord, ReplayItem, ReplayResult, decode_record, replay_many
from qtt.harness.replay.inputs import InputRecord, encode_insert
from qtt.harness.replay.join_topics import JoinTopic, join_topics
from qtt.harness.replay.restored_runs import Restore
from qtt.harness.replay.schemas import topic_schemas
from qtt.harness.replay.topic_serdes import TopicSerde, topic_serdes
from qtt.harness.results import CaseResult
from qtt.harness.status import Status
from qtt.plan.insert_coercion import Evaluate
from qtt.plan.inserts import Insert
from qtt.plan.ir.depth import deep_call
from qtt.plan.ir.expressions import Expression
from qtt.plan.ir.steps import CreateSourceCommand, Formats
from qtt.plan.statements import PlannedCase, plan_statements
from qtt.runtime.jobs import FRESH, ReplayMode, Runtime
from qtt.runtime.spark import infrastructure
from qtt.sql import parse_statements

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SessionProvider = Callable[[], "SparkSession"]


def spark_session() -> SparkSession:
    """The session provider of the CLI, the plugin and the benchmark: the process-wide session.

    Imports the runtime (and so pyspark) only when a replay first needs Spark.
    """
    from qtt.runtime.spark.session import get_session

    return get_session()


def evaluate_constant(expr: Expression) -> Any:
    """Spark's value of a typed expression that reads no column: an ``INSERT ... VALUES`` value
    that calls functions or computes, as ksqlDB's interpreter evaluates it (starts Spark)."""
    from qtt.runtime.execute.constants import evaluate

    return evaluate(expr)


def unevaluated(expr: Expression) -> Any:
    """For planning alone (a plan holds no inserted rows): a computed INSERT value is null, and
    Spark is not started."""
    return None


def plan_variant(variant: CaseVariant, evaluate: Evaluate = evaluate_constant) -> PlannedCase:
    """Parse and plan a variant's statements on the large stack of a deep call; ``evaluate``
    gives the INSERT values that are not literals (:func:`unevaluated` when only the plan
    matters: then no Spark).

    Raises:
        SqlError: a statement does not parse or plan, located in the case file.
    """
    script = "\n".join(variant.statements)
    try:
        schemas = topic_schemas(variant.topics)
        partitions = {topic.name: topic.partitions or 1 for topic in variant.topics}  # TopicNode: 1 unless given
        statements = parse_statements(script)
        return deep_call(lambda: plan_statements(statements, variant.properties, schemas, partitions, evaluate))
    except SqlError as error:
        raise _locate(error, variant) from None


def _locate(error: SqlError, variant: CaseVariant) -> SqlError:
    """Point ``error`` (a line of the joined script) at its statement in the case file."""
    error.at(file=variant.file, case=variant.case)
    if error.path is not None or error.line is None:
        return error
    if error.column:
        error.script_position = (error.line, error.column)
    first = 1
    for position, statement in enumerate(variant.statements):
        size = statement.count("\n") + 1
        if error.line < first + size or position == len(variant.statements) - 1:
            error.statement_line, error.statement_column = error.line - first + 1, error.column
            error.path = f"$.tests[{variant.index}].statements[{position}]"
            error.line = variant.statement_lines[position] if variant.statement_lines else None
            error.column = None
            break
        first += size
    return error


def run_variants(
    variants: Sequence[CaseVariant],
    session: SessionProvider,
    *,
    workdir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    mode: ReplayMode = FRESH,
    restores: Sequence[Restore | None] | None = None,
    runtime: Runtime | None = None,
    planner: Callable[[CaseVariant], PlannedCase] | None = None,
) -> list[CaseResult]:
    """Run many variants; replays of different variants share Spark queries where they can.

    Planning happens first and needs no Spark; only variants that get as far as a replay
    start the session. ``progress(done, len(variants))`` counts finished variants: one that
    needs no replay is done at once, one that does when its last query ran. ``restores[i]``,
    when given, is the restore point at which variant ``i``'s replay keeps its checkpoints.
    ``mode`` is how every replay runs; ``runtime`` what it runs on (default: Spark, started
    from ``session``). ``planner`` gives each variant its plan (default: :func:`plan_variant`,
    its statements planned by qtt).
    """
    results: list[CaseResult] = []
    pending: list[tuple[CaseResult, CaseVariant, ReplayItem]] = []
    for index, variant in enumerate(variants):
        hint = f"rerun it alone: qtt run {variant.file} -k {shlex.quote(variant.case)}"
        result = CaseResult(variant.file, variant.case, variant.variant, Status.PASSED, hint=hint)
        began = time.perf_counter()
        items: list[ReplayItem] = []
        if guarded(result, partial(_prepare, variant, result, items, planner or plan_variant)):
            restore = restores[index] if restores is not None else None
            item = replace(items[0], mode=mode, stops=_expects_stop(variant))
            pending.append((result, variant, replace(item, restore=restore) if restore else item))
        result.seconds = time.perf_counter() - began
        results.append(result)
    if pending or progress is not None:
        began = time.perf_counter()
        items = [item for _, _, item in pending]
        outcomes = replay_counted(
            items, session, total=len(variants), progress=progress, workdir=workdir, runtime=runtime
        )
        for (result, variant, item), outcome in zip(pending, outcomes, strict=True):
            result.seconds += outcome.seconds if isinstance(outcome, ReplayResult) else 0.0
            guarded(result, partial(_finish, variant, result, outcome, item))
        if pending and not any(isinstance(o, ReplayResult) and o.runs for o in outcomes):
            share = (time.perf_counter() - began) / len(pending)
            for result, _, _ in pending:
                result.seconds += share
    return results


def replay_counted(
    items: Sequence[ReplayItem],
    session: SessionProvider,
    *,
    total: int,
    progress: Callable[[int, int], None] | None,
    workdir: Path | None = None,
    runtime: Runtime | None = None,
) -> list[ReplayResult | QttError]:
    """Replay ``items``, the ones left of ``total`` that need Spark, counting progress over ``total``.

    The others are done already, and reported so at once. ``runtime`` defaults to Spark,
    started from ``session``: a Spark that does not start makes every item an
    :class:`InfrastructureError`.
    """
    settled = total - len(items)

    def replayed(done: int, _total: int) -> None:
        if progress is not None:
            progress(settled + done, total)

    if settled:
        replayed(0, 0)
    if not items:
        return []
    if runtime is None:
        try:
            runtime = spark_runtime(started(session))
        except InfrastructureError as e:
            replayed(len(items), len(items))
            return [e] * len(items)
    return replay_many(items, runtime=runtime, workdir=workdir, progress=replayed)


def spark_runtime(session: SparkSession) -> Runtime:
    """The Spark runtime over ``session`` (imports the runtime, and so pyspark, on first use)."""
    from qtt.runtime.execute.spark_runtime import SparkRuntime

    return SparkRuntime(session)


def started(session: SessionProvider) -> SparkSession:
    """``session()``; a Spark that cannot start is an :class:`InfrastructureError` with its reason."""
    try:
        return session()
    except QttError:
        raise
    except Exception as e:
        raise_interrupt_behind(e)
        msg = f"Spark did not start: {infrastructure.reason(e)}"
        raise InfrastructureError(msg, hint=infrastructure.HINT) from e


def guarded(result: CaseResult, action: Callable[[], bool | None]) -> bool:
    """Run ``action``, turning exceptions into the result's status; True to go on. An error
    raised while an interrupt unwound is that interrupt, not a verdict."""
    try:
        try:
            return bool(action())
        except Exception as e:
            raise_interrupt_behind(e)
            raise
    except UnsupportedFeatureError as e:
        result.status, result.reason = Status.SKIPPED, f"unsupported: {e.feature}"
    except InfrastructureError as e:
        # Spark or the machine could not run it, even after retries: no verdict either way
        result.status, result.reason = Status.INFRA, e.message
        result.hint = e.hint or infrastructure.HINT
    except CaseFileError as e:
        e.at(file=result.file, case=result.case)
        result.status, result.reason = Status.ERROR, str(e)
    except QueryStoppedError as e:  # a verdict on the plan and its inputs: the query died on a record
        result.status, result.reason = Status.FAILED, f"the query stopped at run time: {e}"
    except (ReplayError, RuntimeBuildError) as e:
        # qtt planned the case but could not run its own plan: a qtt bug, not a case failure
        result.status, result.reason = Status.ERROR, str(e)
    except QttError as e:
        result.status, result.reason = Status.FAILED, str(e)
    except Exception as e:  # qtt itself broke: say so, with the place it broke
        frame = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
        where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
        result.status, result.reason = Status.ERROR, f"internal error{where}: {type(e).__name__}: {e}"
    return False


def _prepare(
    variant: CaseVariant, result: CaseResult, items: list[ReplayItem], planner: Callable[[CaseVariant], PlannedCase]
) -> bool:
    """Plan the variant and encode its inputs into ``items``; True if it still needs a replay."""
    if not variant.enabled:
        result.status, result.reason = Status.SKIPPED, "disabled in the case file (enabled: false)"
        return False
    expected = variant.expected_exception
    try:
        planned = planner(variant)
    except SqlError as error:
        if isinstance(error, UnsupportedFeatureError) or expected is None:
            raise
        _match_expected(expected, error, result, len(variant.statements))
        return False
    result.planned = planned
    if _negative_timestamp(variant, result):
        return False
    if expected is not None and not expected_.at_run_time(expected):
        if expected_.expected_class(expected.type) is None:
            raise UnsupportedFeatureError(f"expected exception type {expected.type}")
        result.status = Status.FAILED
        result.reason = (
            f"expected {expected.type or 'an exception'}"
            f"{' containing ' + repr(expected.message) if expected.message else ''}, "
            "but every statement planned"
        )
        return False
    items.append(
        ReplayItem.from_case(
            planned.plan,
            variant.inputs,
            where=f"$.tests[{variant.index}].inputs",
            topics=variant.topics,
            topics_where=f"$.tests[{variant.index}].topics",
            inserts=planned.inserts,
        )
    )
    return True


def _negative_timestamp(variant: CaseVariant, result: CaseResult) -> bool:
    """Whether an input record has a negative timestamp, which no Kafka record carries: ksqlDB's
    runner fails the case as it writes the record (Kafka's ``ProducerRecord`` refuses it), after
    every statement ran; the case passes if it expects that exception."""
    for position, record in enumerate(variant.inputs):
        if record.timestamp is not None and record.timestamp < 0:
            error = QttError(f"Invalid timestamp: {record.timestamp}. Timestamp should always be non-negative or null.")
            expected = variant.expected_exception
            why = expected_.mismatch(expected, error) if expected is not None else ""
            where = f"$.tests[{variant.index}].inputs[{position}].timestamp"
            result.status = Status.PASSED if why is None else Status.FAILED
            result.reason = f"raised as expected: {error}" if why is None else f"{where}: {error}"
            if why:
                result.reason += f" ({why})"
            return True
    return False


def _finish(variant: CaseVariant, result: CaseResult, outcome: ReplayResult | QttError, item: ReplayItem) -> None:
    expected = variant.expected_exception
    if expected is not None and isinstance(outcome, QueryStoppedError):
        why = expected_.mismatch(expected, outcome)
        result.status = Status.PASSED if why is None else Status.FAILED
        result.reason = f"stopped as expected: {outcome.message}" if why is None else why
        return
    if isinstance(outcome, QttError):
        raise outcome
    assert result.planned is not None
    result.replay = outcome
    if expected is not None:
        result.status = Status.FAILED
        wanted = expected_.described(expected)
        result.reason = f"expected the query to stop at run time ({wanted}), but it ran to the end"
        return
    expected_outputs = _expected_outputs(variant, result.planned)
    topics = {record.topic for record in expected_outputs}
    named = {record.topic for record in variant.inputs}
    actual, sinks = result.compared_with = written_topics(item, outcome, topics, result.planned.inserts, named)
    result.comparison = compare(expected_outputs, actual, sinks)
    if time_limits.conclude(result, outcome, (record.topic for record in variant.outputs)):
        return
    if variant.post is not None:
        internal = join_topics(result.planned.plan, variant.properties)
        table = topic_table(result.planned, internal)
        result.problems = post_.check(variant.post, result.planned.sources, table)
        formats = {topic: found for topic, (found, _) in table.items()}
        result.problems += post_.check_schemas(variant.post, outcome.schemas, internal, named, formats)
    if variant.qtt_processing_log is not None:
        result.log_problems = check_processing_log(variant.qtt_processing_log, outcome.processing_log)
    if not result.comparison.ok or result.problems or result.log_problems:
        result.status = Status.FAILED
        parts = []
        if not result.comparison.ok:
            parts.append("outputs differ on " + ", ".join(d.topic for d in result.comparison.diffs))
        if result.problems:
            parts.append(f"{len(result.problems)} post-condition(s) do not hold")
        if result.log_problems:
            parts.append("the processing log differs from qttProcessingLog")
        result.reason = "; ".join(parts)


def written_topics(
    item: ReplayItem, outcome: ReplayResult, topics: Iterable[str], inserts: Sequence[Insert], named: Iterable[str]
) -> tuple[dict[str, list[OutputRecord]], dict[str, TopicSerde]]:
    """The records and serdes the expected ``topics`` are compared with: what the case wrote
    there (its ``INSERT INTO ... VALUES`` rows, then its input records; ``named``: the topics the
    inputs name), then what the queries wrote.

    ksqlDB's runner writes the inserts (as their statements run) and the inputs to its stub Kafka
    before any query runs, and reads each expected topic whole from there
    (``TestExecutor.verifyOutput``): a case may expect a source's own records, and the records a
    case writes to a query's sink come before the query's.
    """
    outputs, sinks = dict(outcome.outputs), dict(outcome.sinks)
    declared: dict[str, TopicSerde] | None = None  # only for a topic no query writes
    named = set(named)
    for topic in sorted(set(topics)):
        serde = sinks.get(topic)
        if serde is None:
            declared = topic_serdes(item.plan.ddl_commands()) if declared is None else declared
            if topic not in declared:
                continue
            serde = declared[topic].with_registry(item.snapshot)
        records = [record for record in item.inputs if record.topic == topic]
        if topic in named:  # the inserts into a topic the inputs name are not replayed
            records = [encode_insert(i, serde) for i in inserts if i.source.topic == topic] + records
        if records or topic not in sinks:
            sinks[topic] = serde
            written = [read_back(serde, seq, record) for seq, record in enumerate(records)]
            outputs[topic] = written + outputs.get(topic, [])
    return outputs, sinks


def read_back(serde: TopicSerde, seq: int, record: InputRecord) -> OutputRecord:
    """A record the case wrote, decoded as its topic's formats read it."""
    return decode_record(
        serde,
        record.key,
        record.value,
        timestamp=record.timestamp,
        seq=seq,
        query_id="",
        partition=record.partition,
        headers=record.headers,
    )


def _expects_stop(variant: CaseVariant) -> bool:
    """Whether the variant expects its query to stop at run time (its replay then runs alone)."""
    return variant.expected_exception is not None and expected_.at_run_time(variant.expected_exception)


def _expected_outputs(variant: CaseVariant, planned: PlannedCase) -> list[Record]:
    """The case's outputs as compared: when every record comes from ``INSERT INTO ... VALUES``,
    an expected timestamp 0 stands for any timestamp, as in ksqlDB's test driver (its inserts
    without ``ROWTIME`` take the wall clock)."""
    if variant.inputs or not planned.inserts:
        return list(variant.outputs)
    return [at_line(replace(r, timestamp=None), r.line) if r.timestamp == 0 else r for r in variant.outputs]


def _match_expected(expected: ExpectedException, error: SqlError, result: CaseResult, statements: int) -> None:
    if expected_.expected_class(expected.type) is None:
        raise UnsupportedFeatureError(f"expected exception type {expected.type}")
    why = expected_.not_the_last_statement(error, statements) or expected_.mismatch(expected, error)
    if why is None:
        result.status, result.reason = Status.PASSED, f"raised as expected: {type(error).__name__}"
    else:
        result.status, result.reason = Status.FAILED, why


def topic_table(planned: PlannedCase, internal: Iterable[JoinTopic] = ()) -> dict[str, tuple[Formats, int]]:
    """Topic -> (formats, partitions) for every topic the statements declared or wrote, and
    the internal topics ksqlDB's topology would make for its joins (``internal``)."""
    table: dict[str, tuple[Formats, int]] = {}
    for source in planned.sources.values():
        table.setdefault(source.topic, (source.formats, planned.topic_partitions.get(source.topic, 1)))
    for command in planned.plan.ddl_commands():
        if isinstance(command, CreateSourceCommand):
            table.setdefault(command.topic, (command.formats, planned.topic_partitions.get(command.topic, 1)))
    for topic in internal:
        table.setdefault(topic.name, (topic.formats, 1))
    return table
