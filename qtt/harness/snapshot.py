"""``qtt snapshot``: persist a new historical plan for every case whose plan changed.

For each case variant: plan it with today's engine (no Spark); if no plan is persisted yet,
or the canonical plan differs from the newest persisted one, replay it; if the replay passes,
write ``historical_plans/<slug>/<version>_<epoch-ms>/`` atomically. A case whose replay fails
is reported and not snapshotted. Existing folders are never touched.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from qtt import __version__
from qtt.errors import PlanFileError, QttError, SqlError, UnsupportedFeatureError
from qtt.harness import plan_store, spec
from qtt.harness.model import CaseVariant
from qtt.harness.runner import PASSED, CaseResult, plan_variant, run_variants
from qtt.plan import codec
from qtt.plan.diff import diff_lines
from qtt.plan.steps import Plan

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

UNCHANGED, ADDED, WOULD_ADD, NOT_SNAPSHOTTED, SKIPPED = "unchanged", "added", "would add", "not snapshotted", "skipped"


@dataclass
class Entry:
    """What ``qtt snapshot`` did (or would do) for one case variant."""

    variant: CaseVariant
    slug: str
    action: str
    reason: str = ""
    diff: list[str] = field(default_factory=list)
    folder: Path | None = None


def slug_of(variant: CaseVariant) -> str:
    """The case's folder name under ``historical_plans/`` (see :mod:`qtt.harness.plan_store`)."""
    return plan_store.case_slug(Path(variant.file).as_posix(), variant.case, variant.variant)


def current_plan(variant: CaseVariant) -> Plan | None:
    """Today's plan of a variant, or None when it has none (expected error, disabled).

    Raises:
        UnsupportedFeatureError: the case uses a feature qtt does not support.
    """
    if not variant.enabled or variant.expected_exception is not None:
        return None
    return plan_variant(variant).plan


def persisted_plan_text(root: Path, slug: str) -> tuple[plan_store.HistoricalFolder | None, str | None]:
    folder = plan_store.newest(root, slug)
    if folder is None:
        return None, None
    try:
        return folder, folder.read(plan_store.PLAN_FILE)
    except PlanFileError:
        return folder, None


def snapshot(
    variants: Sequence[CaseVariant],
    session: Callable[[], SparkSession],
    *,
    root: Path,
    version: str = __version__,
    dry_run: bool = False,
    epoch_ms: int | None = None,
) -> list[Entry]:
    """Persist a plan for every variant whose canonical plan is new or changed."""
    entries: list[Entry] = []
    to_replay: list[tuple[Entry, Plan]] = []
    for variant in variants:
        slug = slug_of(variant)
        try:
            plan = current_plan(variant)
        except UnsupportedFeatureError as e:
            entries.append(Entry(variant, slug, SKIPPED, f"unsupported: {e.feature}"))
            continue
        except SqlError as e:
            entries.append(Entry(variant, slug, NOT_SNAPSHOTTED, f"does not plan: {e}"))
            continue
        if plan is None:
            entries.append(Entry(variant, slug, SKIPPED, "no plan: the case expects an error or is disabled"))
            continue
        text = codec.dumps(plan)
        folder, persisted = persisted_plan_text(root, slug)
        if persisted == text:
            entries.append(Entry(variant, slug, UNCHANGED))
            continue
        old = _load_quietly(persisted)
        if folder is None:
            reason = "no plan persisted yet"
        elif persisted is None or old is None:
            reason = f"the newest persisted plan ({folder.name}) cannot be read"
        else:
            reason = f"the plan differs from {folder.name}"
        entry = Entry(variant, slug, WOULD_ADD if dry_run else ADDED, reason, diff_lines(old, plan))
        entries.append(entry)
        to_replay.append((entry, plan))
    if not to_replay:
        return entries
    results = run_variants([entry.variant for entry, _ in to_replay], session, capture_state=True)
    stamp = epoch_ms if epoch_ms is not None else int(time.time() * 1000)
    for (entry, plan), result in zip(to_replay, results, strict=True):
        if result.status != PASSED or result.replay is None:
            entry.action = NOT_SNAPSHOTTED
            first_line = result.reason.splitlines()[0] if result.reason else ""
            entry.reason = f"its replay did not pass ({result.status}): {first_line}"
            continue
        if dry_run:
            continue
        files = {
            plan_store.PLAN_FILE: codec.dumps(plan),
            plan_store.SPEC_FILE: spec.dumps(build_spec(entry.variant, result, version)),
            plan_store.TOPOLOGY_FILE: _topology(session(), plan),
        }
        try:
            entry.folder = plan_store.write_folder(root, entry.slug, version, stamp, files)
        except QttError as e:
            entry.action, entry.reason = NOT_SNAPSHOTTED, str(e)
    return entries


def _load_quietly(text: str | None) -> Plan | None:
    if text is None:
        return None
    try:
        return codec.loads(text)
    except QttError:
        return None


def _topology(session: SparkSession, plan: Plan) -> str:
    from qtt.runtime.topology import describe

    return describe(session, plan)


def build_spec(variant: CaseVariant, result: CaseResult, version: str) -> spec.Spec:
    """The self-contained ``spec.json`` of a passed replay."""
    import pyspark

    assert result.replay is not None and result.planned is not None
    replay = result.replay
    planned = result.planned
    topics = []
    seen: set[str] = set()
    for command in planned.plan.ddl_commands():
        topic = getattr(command, "topic", None)
        if topic is None or topic in seen:
            continue
        seen.add(topic)
        topics.append(
            spec.SpecTopic(
                name=topic,
                formats=command.formats,  # type: ignore[attr-defined]
                schema=str(command.schema),  # type: ignore[attr-defined]
                partitions=planned.topic_partitions.get(topic, 1),
            )
        )
    inputs = tuple(
        spec.SpecRecord(
            topic=r.topic,
            timestamp=r.timestamp,
            key_bytes=spec.b64(r.key),
            value_bytes=spec.b64(r.value),
            key=doc.key,
            value=doc.value,
            partition=r.partition,
            headers=tuple((k, spec.b64(v)) for k, v in r.headers),
        )
        for r, doc in zip(replay.inputs, variant.inputs, strict=True)
    )
    outputs = tuple(
        spec.SpecRecord(
            topic=o.topic,
            timestamp=o.timestamp,
            key_bytes=spec.b64(o.key_bytes),
            value_bytes=spec.b64(o.value_bytes),
            key=o.key,
            value=o.value,
            partition=o.partition,
        )
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
        spark_version=pyspark.__version__,
        case=spec.SpecCase(file=Path(variant.file).as_posix(), name=variant.case, variant=variant.variant),
        statements=variant.statements,
        properties=dict(variant.properties),
        topics=tuple(topics),
        inputs=inputs,
        outputs=outputs,
        step_schemas=replay.step_schemas,
        processing_log=log,
        internal_topics=spec.internal_topics_of(replay.internal_topics),
    )
