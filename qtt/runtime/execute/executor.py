"""Run built queries over replay records and collect what they wrote.

Several independent queries ("jobs") can share one streaming query: each job's plan is
built over its own slice of one replay source, and their sinks are unioned. This pays the
per-query start-up cost of Spark once per group instead of once per case. Jobs never see
each other's records, so their results do not depend on the grouping. If a group fails,
every job is run alone, so that one broken plan fails only its own case.

A query that fails for an infrastructure reason (see :mod:`qtt.runtime.spark.infrastructure`) is
run again, up to :data:`~qtt.runtime.spark.infrastructure.RETRIES` times, a group as a whole first;
what still fails becomes :class:`~qtt.errors.InfrastructureError` with Spark's reason, never a
verdict on the plan. Each retry is said on stderr and counted (:func:`retries`).

Queries run with ``Trigger.AvailableNow``: they stop by themselves once every micro-batch
asked for has run. Nothing here sleeps or polls.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import qtt.runtime.operators.registered  # noqa: F401 (the stateful steps' builders register themselves)
from qtt.errors import (
    InfrastructureError,
    QttError,
    QueryStoppedError,
    ReplayError,
    RuntimeBuildError,
    TimeLimitReached,
    raise_interrupt_behind,
)
from qtt.plan.ir.shape import QueryShape
from qtt.runtime.build import repartitions
from qtt.runtime.build.builder import PlanBuilder
from qtt.runtime.build.builtins.casts import nulls_cast_as_text
from qtt.runtime.build.context import StatefulHook
from qtt.runtime.build.lambda_failures import whole_expression_errors
from qtt.runtime.build.serde_udfs import DecodedColumns
from qtt.runtime.execute.group_source import GroupSource, group_source
from qtt.runtime.execute.processing_log import processing_log
from qtt.runtime.execute.sink_rows import pooled_columns, run_and_collect, sink_branch, sink_records, sink_row
from qtt.runtime.execute.staged import (
    UNION_TASKS,
    StagedGroup,
    StagedPlans,
    build_stages,
    run_stages,
)
from qtt.runtime.execute.state_feeds import add_state_feeds
from qtt.runtime.jobs import FORMAT_NAME, Job, QueryRun, batch_major, encode_options
from qtt.runtime.operators.wide import ColumnPool
from qtt.runtime.spark import infrastructure
from qtt.runtime.spark.frames import in_threads, union_all
from qtt.runtime.spark.infrastructure import first_line
from qtt.runtime.spark.session import activate, is_connect

_T = TypeVar("_T")
_retries: list[str] = []


def retries() -> list[str]:
    """Every retry this process made, as ``"<what>: <Spark's reason>"``, oldest first."""
    return list(_retries)


@dataclass
class BuiltGroup:
    """A group's plans, built before its queries start (the driver builds the next group's while
    Spark runs this one's). Building runs no Spark job."""

    jobs: Sequence[Job]
    checkpoint: str
    #: a group without stages: each job's plan over the replay source, or why it has none
    builders: dict[int, PlanBuilder] = field(default_factory=dict)
    errors: dict[int, QttError] = field(default_factory=dict)
    #: a staged group (:mod:`qtt.runtime.execute.staged`)
    staged: StagedPlans | None = None


def build_jobs(session: SparkSession, jobs: Sequence[Job], checkpoint: str) -> BuiltGroup:
    """Build every job's plan, for :func:`run_jobs` with the same ``checkpoint``.

    Raises:
        InfrastructureError: Spark could not be reached while building.
    """
    built = BuiltGroup(jobs, checkpoint)
    if _staged(session, jobs):
        plain = _infrastructure_guard(lambda: group_source(session, jobs, checkpoint))

        def build(raw: DataFrame, job: Job, hook: StatefulHook) -> PlanBuilder:
            return _build(raw, job, hook, plain.decoded.get(job.job_id, {}), encode_after=True)

        built.staged = _infrastructure_guard(lambda: build_stages(session, jobs, checkpoint, plain.df, build))
    else:
        source = _infrastructure_guard(lambda: _source(session, jobs, checkpoint))

        def build_one(job: Job) -> PlanBuilder | QttError:
            decoded = source.decoded.get(job.job_id, {})
            try:
                return _infrastructure_guard(lambda: _build(source.df, job, decoded=decoded, encode_after=source.file))
            except InfrastructureError:
                raise
            except QttError as e:
                return e

        for job, one in zip(jobs, in_threads(build_one, [(job,) for job in jobs]), strict=True):
            if isinstance(one, QttError):
                built.errors[job.job_id] = one
            else:
                built.builders[job.job_id] = one
    return built


#: how many groups' plans are built ahead of the groups running: enough to keep Spark busy,
#: few enough that a run of thousands of groups does not hold every plan in the JVM at once
#: (all of them held, 2,658 groups filled a 2 GB heap and the JVM spent its time collecting)
BUILDS_AHEAD = 4

#: groups whose queries run at once: a group's time goes mostly to waiting for its
#: micro-batches, so two keep a 2-core machine busier than one (see ``qtt bench``)
GROUP_THREADS = 2


def run_groups(
    session: SparkSession, groups: Sequence[Sequence[Job]], checkpoints: Sequence[str]
) -> Iterator[dict[int, QueryRun]]:
    """Run each group of jobs (:func:`run_jobs`), :data:`GROUP_THREADS` at a time, yielding
    each group's runs in order as soon as it and the groups before it ended.

    One thread builds the groups' plans, in order, while Spark runs the groups built before. A
    run's seconds are its share of its group's time, from the start of its run (its build
    included, when the build was not done yet) to its end.
    """

    builds: dict[int, Future[BuiltGroup]] = {}
    lock = threading.Lock()

    def built(index: int) -> Future[BuiltGroup]:
        """Group ``index``'s plans, and those of the groups up to :data:`BUILDS_AHEAD` after it
        set building; a group's plans are let go once it ran (each holds Spark plans in the JVM)."""
        with lock:
            for ahead in range(index, min(index + BUILDS_AHEAD + 1, len(groups))):
                if ahead not in builds and ahead not in done:
                    builds[ahead] = builder.submit(build_jobs, session, groups[ahead], checkpoints[ahead])
            return builds[index]

    def run(index: int) -> dict[int, QueryRun]:
        began = time.perf_counter()
        try:
            runs = run_jobs(session, groups[index], checkpoints[index], built=built(index))
        finally:
            with lock:
                done.add(index)
                builds.pop(index, None)
        seconds = (time.perf_counter() - began) / max(len(groups[index]), 1)
        for each in runs.values():
            each.seconds = seconds
        return runs

    done: set[int] = set()
    if not groups:
        return
    with (
        ThreadPoolExecutor(1, thread_name_prefix="qtt-build", initializer=activate, initargs=(session,)) as builder,
        ThreadPoolExecutor(
            GROUP_THREADS, thread_name_prefix="qtt-group", initializer=activate, initargs=(session,)
        ) as runner,
    ):
        built(0)
        if len(groups) == 1:  # nothing to overlap: run it on this thread
            yield run(0)
            return
        for future in [runner.submit(run, index) for index in range(len(groups))]:
            yield future.result()


def run_jobs(
    session: SparkSession,
    jobs: Sequence[Job],
    checkpoint: str,
    *,
    attempt: int = 0,
    seed: Callable[[Path], None] | None = None,
    built: Future[BuiltGroup] | None = None,
) -> dict[int, QueryRun]:
    """Run ``jobs`` as one streaming query; on failure, run each alone to isolate it.

    ``seed`` fills each attempt's checkpoint directory before its query starts (a stored
    checkpoint to resume from). ``built``: the jobs' plans, being built by
    :func:`build_jobs` for ``checkpoint`` (a retry builds them again).

    A job whose plan cannot be built, or whose query fails on its own, gets a
    :class:`QueryRun` with ``error`` set; the other jobs are unaffected. A failure for an
    infrastructure reason is retried first; one that lasts is an :class:`InfrastructureError`.
    """
    what = ", ".join(job.query.query_id for job in jobs[:3]) + (f" and {len(jobs) - 3} more" if len(jobs) > 3 else "")
    try:
        if seed is not None:
            seed(Path(checkpoint))
        return _run_jobs(session, _built(session, jobs, checkpoint, built))
    except _Unbuilt as e:  # qtt's own fault: the run goes on, and each job alone says whose it is
        if len(jobs) > 1 and not _resumed(jobs):
            return _alone(session, jobs, f"{checkpoint}-unbuilt")
        cause = e.__cause__
        msg = f"qtt could not build the query of this replay: {type(cause).__name__}: {cause}"
        hint = "this is a bug in qtt, not in the case: report it with the case"
        return {
            job.job_id: QueryRun(query_id=job.query.query_id, topic="", error=RuntimeBuildError(msg, hint=hint))
            for job in jobs
        }
    except InfrastructureError as e:
        raise_interrupt_behind(e)
        if attempt < infrastructure.RETRIES:
            _note_retry(what, attempt, e)
            return run_jobs(session, jobs, f"{checkpoint}-retry{attempt + 1}", attempt=attempt + 1, seed=seed)
        if len(jobs) > 1 and not _resumed(jobs):
            # a group that keeps failing: one job alone may still run, and each error is its own.
            # Each is tried once more, not RETRIES times: a lasting failure must not cost 3 x n starts.
            return {
                job_id: run
                for index, job in enumerate(jobs)
                for job_id, run in run_jobs(
                    session, [job], f"{checkpoint}-alone-{index}", attempt=infrastructure.RETRIES
                ).items()
            }
        e.message = f"{jobs[0].query.query_id}: {e.message} (tried {attempt + 1} times)"
        return {jobs[0].job_id: QueryRun(query_id=jobs[0].query.query_id, topic="", error=e)}


class _Unbuilt(Exception):
    """Building a group's queries failed with an error that is no :class:`QttError`."""


def _built(session: SparkSession, jobs: Sequence[Job], checkpoint: str, built: Future[BuiltGroup] | None) -> BuiltGroup:
    try:
        return built.result() if built is not None else build_jobs(session, jobs, checkpoint)
    except (InfrastructureError, TimeLimitReached):
        raise
    except Exception as e:
        raise_interrupt_behind(e)
        raise _Unbuilt from e


def _note_retry(what: str, attempt: int, error: InfrastructureError) -> None:
    line = f"{what}: {infrastructure.reason(error)}"
    _retries.append(line)
    print(
        f"qtt: retry {attempt + 1}/{infrastructure.RETRIES} after an infrastructure error in {line}",
        file=sys.stderr,
        flush=True,
    )


def _run_jobs(session: SparkSession, built: BuiltGroup) -> dict[int, QueryRun]:
    if built.staged is not None:
        return _run_staged(session, built.jobs, built.checkpoint, built.staged)
    runs = {
        job.job_id: QueryRun(query_id=job.query.query_id, topic="", error=error)
        for job in built.jobs
        if (error := built.errors.get(job.job_id)) is not None
    }
    builders, checkpoint = built.builders, built.checkpoint
    runnable = [job for job in built.jobs if job.job_id in builders]
    if runs and _resumed(built.jobs):  # the others' state would load into the wrong operators
        return _all_failed(runnable, builders, ReplayError("another query of the merged checkpoint could not be built"))
    try:
        runs.update(_infrastructure_guard(lambda: _run_group(runnable, builders, checkpoint)))
    except InfrastructureError:
        raise
    except ReplayError as group_error:
        if len(runnable) == 1:
            job = runnable[0]
            runs[job.job_id] = _failed_run(job, builders[job.job_id], group_error)
        elif _resumed(runnable):
            runs.update(_all_failed(runnable, builders, group_error))
        else:
            runs.update(_isolated(session, runnable, checkpoint, group_error, builders))
    return runs


def _isolated(
    session: SparkSession,
    jobs: Sequence[Job],
    checkpoint: str,
    error: ReplayError,
    builders: Mapping[int, PlanBuilder] | None = None,
) -> dict[int, QueryRun]:
    """The jobs of a group that failed with ``error``, each failure its own job's: a query that
    stopped and named itself (:class:`~qtt.errors.QueryStoppedError`) fails alone while the others
    run again together; otherwise each runs on its own."""
    stopped = next((job for job in jobs if isinstance(error, QueryStoppedError) and error.owner == _label(job)), None)
    if stopped is None:
        return _alone(session, jobs, checkpoint)
    builder = builders.get(stopped.job_id) if builders is not None else None
    runs = {stopped.job_id: _failed_run(stopped, builder, error)}
    others = [job for job in jobs if job is not stopped]
    if others:
        runs.update(run_jobs(session, others, f"{checkpoint}-without{stopped.job_id}"))
    return runs


def _label(job: Job) -> str:
    """What makes the names of ``job``'s query unique in a streaming query it shares."""
    return f"j{job.job_id}."


def _resumed(jobs: Sequence[Job]) -> bool:
    """Whether the jobs resume a checkpoint together: none can run without the others."""
    return any(job.resumes_at is not None for job in jobs)


def _all_failed(jobs: Sequence[Job], builders: Mapping[int, PlanBuilder], error: ReplayError) -> dict[int, QueryRun]:
    """Every job's run failed with ``error`` (each its own copy, with Spark's exception as its cause)."""

    def copy() -> ReplayError:
        each = ReplayError(error.message)
        each.__cause__ = error.__cause__
        return each

    return {job.job_id: _failed_run(job, builders[job.job_id], copy()) for job in jobs}


def _alone(session: SparkSession, jobs: Sequence[Job], checkpoint: str) -> dict[int, QueryRun]:
    """Each job run on its own: a group failed, and each failure must be its own job's."""
    runs: dict[int, QueryRun] = {}
    for index, job in enumerate(jobs):
        runs.update(run_jobs(session, [job], f"{checkpoint}-alone-{index}"))
    return runs


def _staged(session: SparkSession, jobs: Sequence[Job]) -> bool:
    """Whether a group runs stage by stage (:mod:`qtt.runtime.execute.staged`): it has two stateful jobs
    or more, runs micro-batch after micro-batch from empty state, and its driver shares a disk
    with this process (the relay is a file). A stage places each output by its input's
    micro-batch, so a step that holds rows back (a start gate) runs its group unstaged, and so does
    a job whose records' ``SEQ`` does not tell their micro-batch, unless it replays a folder
    recorded when a stage placed such rows in their seq's last micro-batch
    (:attr:`~qtt.runtime.jobs.ReplayMode.last_batch_of_seq`): then the group runs staged, as it was
    recorded."""
    if any(job.mode.restart or job.mode.bounded for job in jobs) or is_connect(session) or _resumed(jobs):
        return False
    shapes = [QueryShape.of(job.query) for job in jobs]
    if any(shape.holds_rows for shape in shapes):
        return False
    spanning = [(job, shape) for job, shape in zip(jobs, shapes, strict=True) if not job.seq_tells_batch()]
    if spanning:
        return all(job.mode.last_batch_of_seq for job, _ in spanning) and any(shape.stateful for _, shape in spanning)
    return sum(1 for shape in shapes if shape.stateful) >= 2


def _run_staged(session: SparkSession, jobs: Sequence[Job], checkpoint: str, plans: StagedPlans) -> dict[int, QueryRun]:
    began = time.perf_counter()
    try:
        group = _infrastructure_guard(lambda: run_stages(session, jobs, checkpoint, plans))
    except ReplayError as e:
        return _isolated(session, jobs, checkpoint, e)
    runs = {
        job.job_id: QueryRun(query_id=job.query.query_id, topic="", error=group.errors[job.job_id])
        for job in jobs
        if job.job_id in group.errors
    }
    runnable = [job for job in jobs if job.job_id in group.builders]
    try:
        runs.update(
            _infrastructure_guard(
                lambda: _run_group(runnable, group.builders, f"{checkpoint}-sinks", staged=group, began=began)
            )
        )
    except ReplayError as e:
        runs.update(_isolated(session, runnable, checkpoint, e, group.builders))
    return runs


def _infrastructure_guard(action: Callable[[], _T]) -> _T:
    """Run ``action``; an error for an infrastructure reason becomes :class:`InfrastructureError`."""
    try:
        return action()
    except (InfrastructureError, TimeLimitReached):
        raise
    except Exception as e:
        raise_interrupt_behind(e)
        if not infrastructure.is_infrastructure(e):
            raise
        msg = f"Spark could not run the replay: {infrastructure.reason(e)}"
        raise InfrastructureError(msg, hint=infrastructure.HINT) from e


def _source(session: SparkSession, jobs: Sequence[Job], checkpoint: str) -> GroupSource:
    """The source of a group without stages: a Parquet file of the records when every job is
    stateless and runs in one micro-batch on a classic session (each branch of the union scans
    its source, and a file costs a branch less), else the Python replay source. A stateful job
    keeps the Python source even in one micro-batch: its checkpoint may be stored and resumed
    later, and the offsets of one source mean nothing to the other."""
    if is_connect(session) or any(
        job.mode.restart or job.mode.bounded or len(job.batch_ends) > 1 or QueryShape.of(job.query).stateful
        for job in jobs
    ):
        return GroupSource(_replay_source(session, jobs, checkpoint), {}, file=False)
    return group_source(session, jobs, checkpoint)


def _replay_source(session: SparkSession, jobs: Sequence[Job], checkpoint: str) -> DataFrame:
    """The jobs' records, micro-batch after micro-batch, for a query checkpointed in ``checkpoint``."""
    records, ends = batch_major(jobs)
    options = encode_options(records, ends, stop_file=_stop_file(jobs, checkpoint), checkpoint=checkpoint)
    if any(job.mode.bounded for job in jobs):
        return session.read.format(FORMAT_NAME).options(**options).load()
    return session.readStream.format(FORMAT_NAME).options(**options).load()


def _stop_file(jobs: Sequence[Job], checkpoint: str) -> str | None:
    return f"{checkpoint}.stop" if any(job.mode.restart for job in jobs) else None


def _build(
    raw: DataFrame,
    job: Job,
    hook: StatefulHook | None = None,
    decoded: Mapping[str, DecodedColumns] | None = None,
    *,
    encode_after: bool = False,
) -> PlanBuilder:
    mine = raw.where(F.col("job") == F.lit(job.job_id))
    builder = PlanBuilder(
        mine,
        job.query.query_id,
        label=_label(job),
        registry=job.registry,
        stateful_hook=hook,
        decoded=decoded or {},
        encode_after=encode_after,
        settings=job.settings,
    )
    try:
        settings = job.settings
        with (
            nulls_cast_as_text(not settings.cast_strings_preserve_nulls),
            whole_expression_errors(
                settings.whole_expression_errors,
                caught=settings.nested_errors_caught,
                functions=settings.function_errors,
            ),
        ):
            builder.build(job.query.physical_plan)
    except QttError:
        raise
    except PySparkException as e:
        msg = f"Spark rejected the plan of {job.query.query_id}: {first_line(e)}"
        raise RuntimeBuildError(msg) from e
    if builder.sink is None:
        msg = f"the plan of {job.query.query_id} has no sink step"
        raise RuntimeBuildError(msg)
    return builder


def _run_group(
    jobs: Sequence[Job],
    builders: dict[int, PlanBuilder],
    checkpoint: str,
    *,
    staged: StagedGroup | None = None,
    began: float | None = None,
) -> dict[int, QueryRun]:
    """Run the jobs' sinks as one streaming query; ``staged``: after their stages ran."""
    began = time.perf_counter() if began is None else began
    runs = {
        job.job_id: QueryRun(
            query_id=job.query.query_id,
            topic=builders[job.job_id].sink.topic,  # type: ignore[union-attr]
            schemas=dict(builders[job.job_id].schemas),
            group_size=len(jobs),
            state_operators=len(builders[job.job_id].state_operators),
        )
        for job in jobs
    }
    with_records = [job for job in jobs if job.records]
    if not with_records:
        return runs  # nothing to replay: starting Spark would only cost time

    pool = ColumnPool("sink")
    pooled = {job.job_id: pooled_columns(builders[job.job_id], pool) for job in with_records}
    sinks = [sink_branch(job, builders[job.job_id], pooled[job.job_id]) for job in with_records]
    # A repartition branch after the sinks: the sinks' operators keep their ids (one after a
    # stateful operator computes it again, numbered after every sink's). It runs whether its
    # topic is wanted or not: each branch reads the source anew, and a checkpoint resumes only
    # a query that reads as many sources as the one that wrote it.
    sinks += [
        written.df.select(F.lit(job.job_id).alias("job"), "*")
        for job in with_records
        if not job.mode.bounded
        for written in builders[job.job_id].repartitions
    ]
    union = union_all(sinks, by_name=True).coalesce(UNION_TASKS)  # only stateful sinks carry "order"
    stop_file = _stop_file(jobs, checkpoint)
    # The restart scenario stops the query after each micro-batch and starts it again from its
    # checkpoint; the same query, so every job keeps its batch boundaries and batch ids.
    stops = batch_major(jobs)[1] if stop_file is not None else [None]
    collected: list[tuple[int, Any]] = []
    progress: list[Any] = []
    if any(job.mode.bounded for job in jobs):
        stops = []
        try:
            collected = [(0, row) for row in union.collect()]
        except PySparkException as e:
            raise infrastructure.query_failure(e, f"batch query failed: {first_line(e)}") from e
    timed_out: float | None = None
    for stop in stops:
        if stop_file is not None:
            Path(stop_file).write_text(str(stop), encoding="utf-8")
        try:
            segment, stream = run_and_collect(union, checkpoint)
        except TimeLimitReached as reached:
            if len(with_records) > 1:
                raise  # which job hangs? each runs alone (the caller isolates a failed group)
            collected += reached.partial
            timed_out = reached.seconds
            break
        except PySparkException as e:
            what = f"streaming query failed{_after(len(progress), stop_file)}"
            raise infrastructure.query_failure(e, f"{what}: {infrastructure.with_cause(e)}") from e
        failure = stream.exception()
        if failure is not None:
            what = f"streaming query failed{_after(len(progress), stop_file)}"
            raise infrastructure.query_failure(failure, f"{what}: {infrastructure.with_cause(failure)}") from failure
        collected += segment
        progress += list(stream.recentProgress)
    for job in with_records:
        run = runs[job.job_id]
        run.started = True
        run.batches = len(job.batch_ends)  # its own: the group ran as many as its deepest job
        run.starts = max(len(stops), 1)
        run.stages = len(staged.operators.get(job.job_id, [])) if staged is not None else 0
        run.stage_batches = sum(len(stage) for stage in staged.progress) if staged is not None else 0
        mine = [(b, row) for b, row in collected if row["job"] == job.job_id]
        if staged is not None:  # the sinks' query ran in one micro-batch: each output's is its input's
            batches = staged.units[job.job_id]
            mine = [(batches[row["seq"]], row) for _, row in mine]
        written = [(b, row) for b, row in mine if not repartitions.written(row)]
        try:
            encoded = [(b, sink_row(row, builders[job.job_id], pooled[job.job_id])) for b, row in written]
        except Exception as e:  # a serializer that raises fails its own replay, as in its query
            runs[job.job_id] = _failed_run(job, builders[job.job_id], ReplayError(f"the sink could not encode: {e}"))
            continue
        run.records = sink_records(encoded)
        if job.mode.capture_state and not job.mode.bounded:
            run.internal_topics = [repartitions.topic_of(r, mine) for r in builders[job.job_id].repartitions]
        queries = [*staged.progress, progress] if staged is not None else [progress]
        run.processing_log = processing_log(queries, builders[job.job_id], job.query.query_id)
        run.timed_out = timed_out
    if timed_out is None:  # a stopped query's state is not read back: its outputs are the evidence
        add_state_feeds(union.sparkSession, with_records, builders, runs, checkpoint, staged)
    seconds = (time.perf_counter() - began) / len(jobs)  # reading the state back included
    for run in runs.values():
        run.seconds = seconds
    return runs


def _after(batches: int, stop_file: str | None) -> str:
    return f" (restarted from its checkpoint after micro-batch {batches - 1})" if stop_file and batches else ""


def _failed_run(job: Job, builder: PlanBuilder | None, error: QttError) -> QueryRun:
    """``job``'s run that failed with ``error`` (its builder, if it was built, names its topic
    and step schemas)."""
    error.message = f"{job.query.query_id}: {error.message}"
    return QueryRun(
        query_id=job.query.query_id,
        topic=builder.sink.topic if builder is not None and builder.sink else "",
        schemas=dict(builder.schemas) if builder is not None else {},
        error=error,
    )
