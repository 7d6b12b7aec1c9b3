"""``qtt snapshot``: persist a new historical plan for every case whose plan changed.

For each case variant: plan it with today's engine (no Spark); if no plan is persisted yet,
or the canonical plan differs from the newest persisted one, replay it; if the replay passes,
write ``historical_plans/<slug>/<version>_<epoch-ms>/`` atomically. A case whose replay fails
is reported and not snapshotted. Existing folders are never touched.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qtt import __version__
from qtt.errors import CaseFileError, QttError, SnapshotError
from qtt.harness.cases.model import CaseVariant
from qtt.harness.cases.slugs import project_root, relative_file
from qtt.harness.historical import checkpoints, ledger, plan_store, provenance, spec
from qtt.harness.historical.uptodate import PlanStatus, check_variant
from qtt.harness.replay.inputs import piped_inserts
from qtt.harness.replay.restored_runs import Restore
from qtt.harness.replay.runner import SessionProvider, run_variants, spark_session
from qtt.harness.results import CaseResult
from qtt.harness.status import Status
from qtt.plan.ir import codec
from qtt.plan.ir.shape import query_order
from qtt.plan.ir.steps import CreateSourceCommand, Plan
from qtt.runtime.jobs import CAPTURE, Headers
from qtt.runtime.spark import scratch
from qtt.serde.values import to_json

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from qtt.plan.inserts import Insert


class Action(StrEnum):
    """What ``qtt snapshot`` did (or, with ``--dry-run``, would do) for a case variant."""

    UNCHANGED = "unchanged"
    ADDED = "added"
    WOULD_ADD = "would add"
    NOT_SNAPSHOTTED = "not snapshotted"
    SKIPPED = "skipped"


_ACTIONS = {
    PlanStatus.UP_TO_DATE: Action.UNCHANGED,
    PlanStatus.CHANGED: Action.ADDED,
    PlanStatus.MISSING: Action.ADDED,
    PlanStatus.SKIPPED: Action.SKIPPED,
    PlanStatus.ERROR: Action.NOT_SNAPSHOTTED,
    PlanStatus.CORRUPT: Action.NOT_SNAPSHOTTED,
}


@dataclass
class Entry:
    """What ``qtt snapshot`` did (or would do) for one case variant."""

    variant: CaseVariant
    slug: str
    action: Action
    reason: str = ""
    diff: list[str] = field(default_factory=list)
    folder: Path | None = None


def snapshot(
    variants: Sequence[CaseVariant],
    session: SessionProvider | None = None,
    *,
    root: Path,
    version: str = __version__,
    dry_run: bool = False,
    epoch_ms: int | None = None,
    phase: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    checkpoints_only: bool = False,
) -> list[Entry]:
    """Persist a plan for every variant whose canonical plan is new or changed, and a stored
    checkpoint for every stateful one that has none written by today's Spark version.

    Args:
        variants: the case variants to consider.
        session: the Spark session, started only if a plan needs a replay (default: the
            process's own).
        root: the historical plans directory.
        version: the qtt version the new folders are named after.
        dry_run: replay and report, but write nothing.
        epoch_ms: the folders' time stamp (default: now).
        phase: called with one line as each phase starts (planning, replaying, writing).
        progress: called with (replays done, replays in all) as replays finish.
        checkpoints_only: store checkpoints only (``qtt snapshot --spark``, an older line): a
            variant whose plan is new or changed is not snapshotted, its plan is persisted on
            today's line first.
    """
    say = phase or (lambda line: None)
    session = session or spark_session
    # the capture folders are owned: a snapshot removes what a killed one left (SIGKILL cleans nothing)
    scratch.clean_stale(None, f"{CAPTURE_PREFIX}*")
    if not dry_run:
        plan_store.clean_staging(root)
    try:
        return _snapshot(variants, session, root, version, dry_run, epoch_ms, say, progress, checkpoints_only)
    finally:
        if not dry_run:
            _record(root)


#: the temp folders of the checkpoints a snapshot captures before it stores them
CAPTURE_PREFIX = "qtt-capture-"


def _record(root: Path) -> None:
    """Append every folder the ledger does not record yet (new ones, and older ones once)."""
    try:
        ledger.append(root, plan_store.folders(root))
    except OSError as e:
        msg = f"the ledger {root / ledger.LEDGER_FILE} could not be extended: {e}; it is unchanged"
        raise SnapshotError(msg, hint="free space, then run qtt snapshot again to record the new folders") from None


def _snapshot(
    variants: Sequence[CaseVariant],
    session: SessionProvider,
    root: Path,
    version: str,
    dry_run: bool,
    epoch_ms: int | None,
    say: Callable[[str], None],
    progress: Callable[[int, int], None] | None,
    checkpoints_only: bool = False,
) -> list[Entry]:
    say(f"planning {len(variants)} case variant(s) and comparing with {root}")
    entries: list[Entry] = []
    to_replay: list[tuple[Entry, Plan]] = []
    for variant in variants:
        check = check_variant(variant, root)
        entry = Entry(variant, check.slug, _ACTIONS[check.status], check.reason, check.diff)
        entries.append(entry)
        if check.status == PlanStatus.UP_TO_DATE:
            entry.reason = ""
            wanted = _checkpoint_wanted(check.plan, check.folder.path if check.folder else None)
            if wanted:
                entry.action = Action.WOULD_ADD if dry_run else Action.ADDED
                entry.reason = wanted
                to_replay.append((entry, check.plan))  # type: ignore[arg-type]
        elif entry.action == Action.NOT_SNAPSHOTTED:
            entry.diff = []
            if check.hint:
                entry.reason += f"; {check.hint}"
        elif check.plan is not None:
            if dry_run:
                entry.action = Action.WOULD_ADD
            entry.reason = (
                "no plan persisted yet" if check.folder is None else f"the plan differs from {check.folder.name}"
            )
            if checkpoints_only:
                entry.action, entry.diff = Action.NOT_SNAPSHOTTED, []
                entry.reason += (
                    ": only checkpoints are stored here; persist the plan with today's Spark first (qtt snapshot)"
                )
                continue
            to_replay.append((entry, check.plan))
    if not to_replay:
        return entries
    with scratch.owned(CAPTURE_PREFIX) as work:
        say(f"replaying {len(to_replay)} new or changed plan(s)")
        restores = [_restore(entry, Path(work) / str(index)) for index, (entry, _) in enumerate(to_replay)]
        kept = [(entry, plan, restore) for (entry, plan), restore in zip(to_replay, restores, strict=True) if restore]
        variants_to_replay = [entry.variant for entry, _, _ in kept]
        restore_points = [restore for _, _, restore in kept]
        results = run_variants(variants_to_replay, session, mode=CAPTURE, progress=progress, restores=restore_points)
        stamp = epoch_ms if epoch_ms is not None else int(time.time() * 1000)
        if not dry_run:
            say(f"writing under {root}")
        for (entry, plan, restore), result in zip(kept, results, strict=True):
            if result.status != Status.PASSED or result.replay is None:
                entry.action = Action.NOT_SNAPSHOTTED
                first_line = result.reason.splitlines()[0] if result.reason else ""
                entry.reason = f"its replay did not pass ({result.status}): {first_line}"
                continue
            if dry_run:
                continue
            recorded = build_spec(entry.variant, result, version, root=root)
            files: dict[str, str | bytes] = {
                plan_store.PLAN_FILE: codec.dumps(plan),
                plan_store.SPEC_FILE: spec.dumps(recorded),
                plan_store.TOPOLOGY_FILE: _topology(session(), plan),
            }
            try:
                if result.replay.stateful:
                    files.update(_checkpoint_files(restore, result, session(), version))
                entry.folder = plan_store.write_folder(root, entry.slug, version, stamp, files)
            except QttError as e:
                entry.action, entry.reason = Action.NOT_SNAPSHOTTED, str(e)
    return entries


def _checkpoint_wanted(plan: Plan | None, newest: Path | None) -> str:
    """Why a stateful plan whose newest folder is up to date still needs a new folder, or "":
    no folder of the same plan stores a checkpoint that today's Spark version wrote (each
    Spark version leaves one for the next to restore, and an older line's checkpoints, written
    with ``qtt snapshot --spark``, sit beside today's)."""
    from qtt.runtime.spark.session import spark_version

    if plan is None or newest is None or not any(shape.stateful for _, shape in query_order(plan)):
        return ""
    text, today = codec.dumps(plan), spark_version()
    writers: set[str] = set()
    unreadable = []
    for folder in sorted(p for p in newest.parent.iterdir() if p.is_dir() and plan_store.is_folder_name(p.name)):
        try:
            if (folder / plan_store.PLAN_FILE).read_text(encoding="utf-8") != text:
                continue
            manifest = checkpoints.stored(folder)
        except (QttError, OSError) as e:
            unreadable.append(f"{folder.name} ({e})")
            continue
        if manifest is not None:
            writers.add(manifest.spark_version)
    if today in writers:
        return ""
    if writers:
        return (
            f"the stored checkpoints of this plan were written by Spark {', '.join(sorted(writers))}, none by "
            f"today's {today}: each Spark version leaves a checkpoint for the next one to read"
        )
    if unreadable:
        return f"the stored checkpoint of {unreadable[0]} cannot be read: a new folder stores a new one"
    return "no folder of this plan stores a checkpoint to restore from"


def _restore(entry: Entry, folder: Path) -> Restore | None:
    """Where the variant's replay keeps its stateful queries' checkpoints, and at which input;
    None (the entry says why) if the case marks more than one restore point."""
    try:
        point = checkpoints.restore_point([record.qtt_restore_point for record in entry.variant.inputs])
    except ValueError as e:
        entry.action = Action.NOT_SNAPSHOTTED
        entry.reason = str(CaseFileError(str(e), file=entry.variant.file, case=entry.variant.case))
        return None
    folder.mkdir(parents=True)
    return Restore(point, folder, capture=True)


def _checkpoint_files(
    restore: Restore, result: CaseResult, session: SparkSession, version: str
) -> dict[str, str | bytes]:
    """The stored checkpoint of a stateful plan, kept by its replay: the manifest and the archive."""
    from qtt.runtime.spark.checkpoint_files import relocate
    from qtt.runtime.spark.lines import pyspark_version
    from qtt.runtime.spark.session import ROCKSDB_PROVIDER

    assert result.replay is not None
    replay = result.replay
    for query_id, written_at in replay.written_at.items():  # nothing of this machine in the golden
        relocate(restore.folder / query_id, written_at, provenance.stored_at(query_id))
    stored = replace(replay, written_at={query_id: provenance.stored_at(query_id) for query_id in replay.written_at})
    manifest = checkpoints.manifest_of(
        stored,
        restore.point,
        spark_version=session.version,
        pyspark_version=pyspark_version(),
        state_format=provenance.state_format(restore.folder, lambda key: session.conf.get(key, None)),
        state_store_provider=session.conf.get("spark.sql.streaming.stateStore.providerClass") or ROCKSDB_PROVIDER,
        qtt_version=version,
    )
    archive = checkpoints.pack(restore.folder)
    return {checkpoints.MANIFEST_FILE: checkpoints.dumps(manifest), checkpoints.ARCHIVE_FILE: archive}


def _topology(session: SparkSession, plan: Plan) -> str:
    from qtt.runtime.execute.topology import describe

    return describe(session, plan)


def build_spec(variant: CaseVariant, result: CaseResult, version: str, *, root: Path) -> spec.Spec:
    """The self-contained ``spec.json`` of a passed replay; ``case.file`` is the case file's
    path relative to the project root (the parent of the historical ``root``), as hashed in
    its slug."""
    from qtt.runtime.spark.session import spark_version

    assert result.replay is not None and result.planned is not None
    replay = result.replay
    planned = result.planned
    topics = []
    seen: set[str] = set()
    for command in planned.plan.ddl_commands():
        if not isinstance(command, CreateSourceCommand) or command.topic in seen:
            continue
        seen.add(command.topic)
        topics.append(
            spec.SpecTopic(
                name=command.topic,
                formats=command.formats,
                schema=str(command.schema),
                partitions=planned.topic_partitions.get(command.topic, 1),
            )
        )
    docs = [(doc.key, doc.value) for doc in variant.inputs]
    docs += [_inserted_doc(insert) for insert in piped_inserts(variant.inputs, planned.inserts)]
    inputs = tuple(
        _spec_record(r.topic, r.timestamp, r.partition, (r.key, r.value), doc, r.headers)
        for r, doc in zip(replay.inputs, docs, strict=True)
    )
    outputs = tuple(
        _spec_record(o.topic, o.timestamp, o.partition, (o.key_bytes, o.value_bytes), (o.key, o.value))
        for topic in sorted(replay.outputs)
        for o in replay.outputs[topic]
    )
    log = tuple(
        spec.SpecLogEntry(input=e.seq, query_id=e.query_id, context=e.context, message=e.message)
        for e in replay.processing_log
    )
    return spec.Spec(
        spec_version=spec.SPEC_VERSION,
        qtt_version=version,
        spark_version=spark_version(),
        case=spec.SpecCase(
            file=relative_file(variant.file, project_root(root)), name=variant.case, variant=variant.variant
        ),
        statements=variant.statements,
        properties=dict(variant.properties),
        topics=tuple(topics),
        inputs=inputs,
        outputs=outputs,
        step_schemas=replay.step_schemas,
        processing_log=log,
        internal_topics=spec.internal_topics_of(replay.internal_topics),
        schemas=tuple(replay.schemas),
    )


def _inserted_doc(insert: Insert) -> tuple[dict[str, Any], dict[str, Any]]:
    """An inserted row's key and value as JSON-ready columns (a DATE as its days, BYTES as Base64)."""
    schema = insert.source.schema
    key = {c.name: to_json(v, c.type) for c, v in zip(schema.key, insert.key, strict=True)}
    value = {c.name: to_json(v, c.type) for c, v in zip(schema.value, insert.value, strict=True)}
    return key, value


def _spec_record(
    topic: str,
    timestamp: int,
    partition: int,
    raw: tuple[bytes | None, bytes | None],
    decoded: tuple[Any, Any],
    headers: Headers = (),
) -> spec.SpecRecord:
    return spec.SpecRecord(
        topic=topic,
        timestamp=timestamp,
        key_bytes=spec.b64(raw[0]),
        value_bytes=spec.b64(raw[1]),
        key=decoded[0],
        value=decoded[1],
        partition=partition,
        headers=tuple((k, spec.b64(v)) for k, v in headers),
    )
