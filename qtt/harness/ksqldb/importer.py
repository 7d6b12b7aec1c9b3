"""``qtt import-ksqldb``: ksqlDB's historical plans turned into qtt historical folders.

Each ksqlDB folder whose plan translates is replayed as ``qtt run`` replays it, and if its
outputs match its case, written under ``historical_plans/`` as a qtt folder: the translated
``plan.json``, a ``spec.json`` with the recorded bytes and a ``provenance`` naming the ksqlDB
release, folder and case file, and the ``topology``. From then on the folder replays like any
other, and its plan never changes. A case's folders are imported in release order, and only
when the translated plan differs from the newest one already there (ksqlDB wrote the same plan
at several releases). The folder is named ``<qtt version>_<ksqlDB's epoch ms>``, so that its
releases keep their order; no checkpoint is stored (a restore needs qtt's own snapshot).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from qtt import __version__
from qtt.errors import QttError
from qtt.harness.cases.slugs import case_slug
from qtt.harness.historical import ledger, plan_store, spec
from qtt.harness.historical.snapshot import build_spec
from qtt.harness.ksqldb.replay import Prepared, prepare
from qtt.harness.replay.runner import SessionProvider, run_variants, spark_session
from qtt.harness.results import CaseResult
from qtt.harness.status import Status
from qtt.plan.ir import codec
from qtt.runtime.jobs import CAPTURE

#: the case file of an imported folder, under which its slug is hashed: ``ksqldb/<ksqlDB's path>``
CASE_FILE_PREFIX = "ksqldb/"


class Action(StrEnum):
    IMPORTED = "imported"
    UNCHANGED = "unchanged"
    SKIPPED = "skipped"
    NOT_IMPORTED = "not imported"


@dataclass
class Imported:
    """What happened to one ksqlDB folder."""

    source: Path
    action: Action
    reason: str = ""
    folder: Path | None = None


def import_folders(
    paths: Sequence[Path],
    root: Path,
    session: SessionProvider | None = None,
    *,
    version: str = __version__,
    progress: Callable[[int, int], None] | None = None,
) -> list[Imported]:
    """Import every folder of ``paths`` under ``root``; one entry per folder, in order."""
    session = session or spark_session
    results, prepared = prepare(paths)
    entries = {str(r.file): _not_prepared(Path(r.file), r) for r in results if r.status is not Status.PASSED}
    newest: dict[str, str] = {}
    to_replay = []
    for entry in prepared:
        slug = slug_of(entry.folder.case_file, entry.result.case)
        plan_text = codec.dumps(entry.planned.plan)
        if slug not in newest:
            found = plan_store.newest(root, slug)
            newest[slug] = found.read(plan_store.PLAN_FILE) if found is not None else ""
        if newest[slug] == plan_text:
            entries[str(entry.folder.path)] = Imported(entry.folder.path, Action.UNCHANGED, "the same plan is there")
            continue
        newest[slug] = plan_text
        to_replay.append((entry, slug))
    plans = {id(entry.variant): entry.planned for entry, _ in to_replay}
    ran = run_variants(
        [entry.variant for entry, _ in to_replay],
        session,
        mode=CAPTURE,
        progress=progress,
        planner=lambda variant: plans[id(variant)],
    )
    written = []
    for (entry, slug), result in zip(to_replay, ran, strict=True):
        imported = _write(entry, slug, result, root, version, session)
        entries[str(entry.folder.path)] = imported
        written += [imported.folder] if imported.folder is not None else []
    if written:
        ledger.append(root, written)
    return [entries[str(path)] for path in paths]


def slug_of(case_file: str, case: str) -> str:
    return case_slug(CASE_FILE_PREFIX + case_file, case, "")


def _not_prepared(path: Path, result: CaseResult) -> Imported:
    action = Action.SKIPPED if result.status is Status.SKIPPED else Action.NOT_IMPORTED
    return Imported(path, action, result.reason)


def _write(
    entry: Prepared, slug: str, result: CaseResult, root: Path, version: str, session: SessionProvider
) -> Imported:
    from qtt.runtime.execute.topology import describe

    source = entry.folder.path
    if result.status is not Status.PASSED or result.replay is None:
        first_line = result.reason.splitlines()[0] if result.reason else ""
        return Imported(source, Action.NOT_IMPORTED, f"its replay did not pass ({result.status}): {first_line}")
    recorded = build_spec(entry.variant, result, version, root=root)
    provenance = {
        "ksqldb": {
            "version": entry.folder.release,
            "folder": f"{source.parent.name}/{source.name}",
            "caseFile": entry.folder.case_file,
        }
    }
    recorded = replace(
        recorded, case=replace(recorded.case, file=CASE_FILE_PREFIX + entry.folder.case_file), provenance=provenance
    )
    plan = entry.planned.plan
    files: dict[str, str | bytes] = {
        plan_store.PLAN_FILE: codec.dumps(plan),
        plan_store.SPEC_FILE: spec.dumps(recorded),
        plan_store.TOPOLOGY_FILE: describe(session(), plan),
    }
    epoch_ms = int(source.name.partition("_")[2] or 0)
    try:
        folder = plan_store.write_folder(root, slug, version, epoch_ms, files)
    except QttError as error:
        return Imported(source, Action.NOT_IMPORTED, str(error))
    return Imported(source, Action.IMPORTED, f"ksqlDB {entry.folder.release}", folder)
