"""The restored replay: a historical folder's stored checkpoint, resumed by today's runtime.

A query that runs for months is not replayed from the start when its engine is upgraded: the
new engine resumes from the checkpoint the old one wrote. For each folder with a stored
checkpoint (:mod:`qtt.harness.historical.checkpoints`), today's runtime builds the plan, starts each
stateful query on a copy of its stored checkpoint, and feeds it the inputs from the restore
point on. It must produce the recorded outputs from there on, the recorded internal-topic
records from there on, and the recorded processing log entries from there on. A checkpoint
that today's Spark or today's operators cannot read fails the item with Spark's reason.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import simplejson

from qtt.errors import InfrastructureError, QttError, UnsupportedFeatureError
from qtt.harness.historical import checkpoints, ledger, refusals, spec
from qtt.harness.historical.replay import (
    HistoricalResult,
    Loaded,
    compare_internal_topics,
    compare_outputs,
    compare_schemas,
    inputs_of,
    load,
    not_loaded,
)
from qtt.harness.historical.spark_operations import OPERATIONS, SparkOperation
from qtt.harness.replay import time_limits
from qtt.harness.replay.driver import ReplayItem
from qtt.harness.replay.restored_runs import Restore
from qtt.harness.replay.runner import replay_counted
from qtt.harness.status import Status
from qtt.runtime.jobs import APPENDED, CAPTURE
from qtt.runtime.spark import infrastructure, lines, scratch
from qtt.runtime.spark.session import session_with

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

KIND = "restored"
#: the temp folders the stored checkpoints are unpacked into
RESTORE_PREFIX = "qtt-restore-"


def has_checkpoint(folder: Path) -> bool:
    return (folder / checkpoints.MANIFEST_FILE).is_file()


def restore_folders(
    paths: Sequence[Path],
    session: Callable[[], SparkSession],
    *,
    progress: Callable[[int, int], None] | None = None,
    scenario: str = KIND,
) -> list[HistoricalResult]:
    """Resume every folder's stored checkpoint; each gets its own result. ``scenario``: the
    plain restore, or one of Spark's upgrade operations
    (:data:`~qtt.harness.historical.spark_operations.OPERATIONS`) at the restore."""
    operation = OPERATIONS.get(scenario)
    if operation is not None:
        base, settings = session, operation.settings
        session = functools.cache(lambda: session_with(base(), settings))
    results: list[HistoricalResult] = []
    checker = ledger.Checker()
    scratch.clean_stale(None, f"{RESTORE_PREFIX}*")  # what a killed run left
    with scratch.owned(RESTORE_PREFIX) as work:
        pending: list[tuple[HistoricalResult, Loaded, checkpoints.Manifest]] = []
        items: list[ReplayItem] = []
        for index, path in enumerate(paths):
            hint = f"rerun it: qtt run {path}; a stored checkpoint must keep restoring: fix the runtime, not the folder"
            result = HistoricalResult(str(path), path.parent.name, path.name, Status.PASSED, kind=scenario, hint=hint)
            results.append(result)
            try:
                checker.check(path)
                loaded = load(path)
                result.case, result.variant = loaded.spec.case.name, _label(loaded.spec.case.variant, operation)
                manifest = checkpoints.stored(path)
                if manifest is None:
                    raise QttError(f"{path} has no stored checkpoint ({checkpoints.MANIFEST_FILE})")
                result.variant = _label(loaded.spec.case.variant, operation, manifest)
                result.writer = manifest.spark_version
                archive = path / checkpoints.ARCHIVE_FILE
                folder = work / str(index)
                checkpoints.unpack(archive.read_bytes(), folder, file=str(archive))
                outputs = Counter(record.topic for record in loaded.spec.outputs)
                checkpoints.check_fits(
                    manifest, folder, inputs=len(loaded.spec.inputs), outputs=dict(outputs), file=str(archive)
                )
                item = ReplayItem.from_recorded(loaded.plan, inputs_of(loaded.spec), loaded.spec.schemas)
            except QttError as e:
                not_loaded(result, e, path)
                continue
            except OSError as e:
                result.status, result.reason = Status.ERROR, f"{path}: {e}"
                continue
            restore = Restore(
                manifest.restore_point,
                folder,
                capture=False,
                consumed=manifest.consumed,
                written_at=manifest.written_at,
                offsets=offsets_at_point(loaded.spec, manifest),
            )
            items.append(replace(item, restore=restore))
            pending.append((result, loaded, manifest))
        outcomes = replay_counted(
            [replace(item, mode=CAPTURE) for item in items], session, total=len(paths), progress=progress
        )
        for (result, loaded, manifest), outcome in zip(pending, outcomes, strict=True):
            if isinstance(outcome, InfrastructureError):
                result.status = Status.INFRA
                result.reason = f"Spark could not restore the checkpoint, so nothing was proven: {outcome.message}"
                result.hint = outcome.hint or infrastructure.HINT
            elif isinstance(outcome, UnsupportedFeatureError):  # this Spark line lacks what the plan needs
                result.status, result.reason = Status.SKIPPED, f"unsupported: {outcome.feature}"
            elif isinstance(outcome, QttError):
                _refused(result, scenario, manifest, outcome)
            else:
                _judge(result, loaded, manifest, outcome)
    return results


def _refused(result: HistoricalResult, scenario: str, manifest: checkpoints.Manifest, error: QttError) -> None:
    """A restore Spark refused: a failure naming Spark's error class, or, when an entry of
    :mod:`~qtt.harness.historical.refusals` covers it, Spark's documented refusal (a skip)."""
    message = str(error)
    entry = refusals.find(scenario, message, spark=lines.pyspark_version(), writer=manifest.spark_version)
    if entry is not None:
        result.status = Status.SKIPPED
        result.reason = (
            f"refused by Spark ({entry.error_class}), as documented since {entry.since}: {entry.reason} "
            f"(see {entry.reference})"
        )
        return
    found = infrastructure.error_classes(message)
    refused = f"Spark refused it ({', '.join(found)}): " if found else ""
    result.status = Status.FAILED
    result.reason = f"today's runtime cannot resume the stored checkpoint: {refused}{message}"


def _label(variant: str, operation: SparkOperation | None = None, manifest: checkpoints.Manifest | None = None) -> str:
    """``variant, restored with 4 shuffle partitions instead of 1, written by spark 4.1.4``: the
    variant, the operation at the restore, and who wrote the checkpoint."""
    restored = "restored" if operation is None else f"restored {operation.title}"
    if manifest is not None:
        restored += f", written by {manifest.writer}"
    return f"{variant}, {restored}" if variant else restored


def _judge(result: HistoricalResult, loaded: Loaded, manifest: checkpoints.Manifest, outcome: object) -> None:
    from qtt.harness.replay.driver import ReplayResult

    assert isinstance(outcome, ReplayResult)
    result.replay = outcome
    result.seconds = outcome.seconds
    recorded = loaded.spec
    seen: Counter[str] = Counter()
    expected_outputs = [record for record in recorded.outputs if not _before_point(record, manifest, seen)]
    if outcome.timed_out is not None:  # partial: only its outputs are evidence
        result.comparison = compare_outputs(expected_outputs, outcome)
        time_limits.conclude(result, outcome, (record.topic for record in expected_outputs))
        return
    problems = compare_internal_topics(
        [settled(topic, manifest) for topic in recorded.internal_topics],
        [settled(topic) for topic in spec.internal_topics_of(outcome.internal_topics)],
    )
    problems += compare_schemas(recorded.schemas, outcome.schemas)
    point = manifest.restore_point
    recorded_log = [(e.input, e.query_id, e.context) for e in recorded.processing_log if e.input >= point]
    now_log = [(e.seq, e.query_id, e.context) for e in outcome.processing_log]
    if recorded_log != now_log:
        problems.append(f"processing log from the restore point on: recorded {recorded_log}, now {now_log}")
    result.comparison = compare_outputs(expected_outputs, outcome)
    result.problems = problems
    if problems or not result.comparison.ok:
        result.status = Status.FAILED
        parts = [f"resumed at input {manifest.restore_point} from a checkpoint of Spark {manifest.spark_version}"]
        if not result.comparison.ok:
            parts.append("outputs differ on " + ", ".join(d.topic for d in result.comparison.diffs))
        if problems:
            parts.append(f"{len(problems)} recorded fact(s) differ")
        result.reason = "; ".join(parts)


def _before_point(record: spec.SpecRecord, manifest: checkpoints.Manifest, seen: Counter[str]) -> bool:
    """Whether recorded output ``record`` came before the restore point: the first
    ``outputs_before`` of its topic did (``seen`` counts them, the outputs taken in order)."""
    seen[record.topic] += 1
    return seen[record.topic] <= manifest.outputs_before.get(record.topic, 0)


def offsets_at_point(recorded: spec.Spec, manifest: checkpoints.Manifest) -> dict[tuple[str, int], int]:
    """How many records each (topic, partition) held at the restore point in the recorded run:
    the inputs before it and the outputs they caused."""
    before = list(recorded.inputs[: manifest.restore_point])
    seen: Counter[str] = Counter()
    before += [record for record in recorded.outputs if _before_point(record, manifest, seen)]
    return dict(Counter((record.topic, record.partition) for record in before))


def settled(topic: spec.SpecInternalTopic, manifest: checkpoints.Manifest | None = None) -> spec.SpecInternalTopic:
    """What a restore is judged on in an internal topic, whatever its micro-batches: a state
    store's last change of each key after the restore point (applied in order; ``manifest``
    says the topic is recorded, else it is the resumed query's, read so), and a repartition
    topic's records after the point, by partition; no batch numbers.

    A resumed query takes every input after the restore point in one micro-batch: its state
    store writes one version there, where the recorded replay wrote one per input, and its
    outputs are still compared record by record (each operator takes a micro-batch's records
    one by one).
    """
    after = _after(topic, manifest) if manifest is not None else topic
    appended = [replace(record, batch=0) for record in after.records if record.change == APPENDED]
    last: dict[tuple[int, str], spec.SpecInternalRecord] = {}
    for record in after.records:
        if record.change != APPENDED:
            key = (record.partition, simplejson.dumps(record.key, sort_keys=True, use_decimal=True))
            last[key] = replace(record, batch=-1)
    settled_records = sorted(appended, key=lambda record: record.partition) + [last[key] for key in sorted(last)]
    return replace(topic, records=tuple(settled_records))


def _after(topic: spec.SpecInternalTopic, manifest: checkpoints.Manifest) -> spec.SpecInternalTopic:
    """A recorded internal topic without the changes its query made before the restore point."""
    consumed = next((n for query, n in manifest.consumed.items() if topic.name.startswith(f"{query}-")), 0)
    return replace(topic, records=tuple(record for record in topic.records if record.batch >= consumed))
