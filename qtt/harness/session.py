"""One run session: how a selection of items runs, for ``qtt run``, ``qtt bench`` and pytest.

An item is a case variant (fresh, or under a scenario), a SQL test, a historical folder or a
historical folder's stored checkpoint (restored). :func:`select` reads what a command line
names (files, ``-k``, ``--shard``) into a :class:`Selection`; :func:`run_selection` runs it
and returns every result in report order; :func:`run_items` is the one place that decides
which runner handles which kind of item. The adapters parse their options and print.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from qtt.errors import QttError
from qtt.harness import report, selection
from qtt.harness.cases.loader import discover, load_file
from qtt.harness.replay import runner, same_jobs, scenarios
from qtt.harness.replay.runner import SessionProvider
from qtt.harness.results import CaseResult
from qtt.harness.shard import Shard, case_identity
from qtt.harness.status import Status

if TYPE_CHECKING:
    from qtt.harness.cases.model import CaseVariant
    from qtt.harness.sqltests.files import SqlTest
    from qtt.harness.upkeep.quarantine import Quarantine

Progress = Callable[[int, int], None]
#: a stage's name (``case variants``, ``historical plans`` ...) -> its progress callback
ProgressFor = Callable[[str], Progress]


class Kind(StrEnum):
    """The kinds of item a session runs, named as progress lines name them."""

    CASES = "case variants"
    SQL = "SQL tests"
    HISTORICAL = "historical plans"
    RESTORED = "restored checkpoints"
    KSQLDB = "ksqlDB plans"


def run_items(
    kind: Kind,
    items: Sequence[Any],
    session: SessionProvider | None = None,
    *,
    progress: Progress | None = None,
    scenario: str = scenarios.FRESH,
) -> list[CaseResult]:
    """Run items of one kind with the runner for that kind; ``scenario`` applies to case variants
    and restored checkpoints.

    ``items`` are :class:`CaseVariant` (``CASES``), :class:`SqlTest` (``SQL``) or historical
    folders (``HISTORICAL``, ``RESTORED``). One result per item, in order (a scenario other
    than fresh: one per variant, under that scenario). ``session`` defaults to the process's
    SparkSession, started on first use.
    """
    session = session or runner.spark_session
    if kind is Kind.CASES:
        from qtt.harness.replay.runner import run_variants

        if scenario == scenarios.FRESH:
            return run_variants(list(items), session, progress=progress)
        return scenarios.run_scenarios(list(items), (scenario,), session, progress=progress)
    if kind is Kind.SQL:
        from qtt.harness.sqltests.run import run_sql_tests

        return run_sql_tests(list(items), session, progress=progress)
    if kind is Kind.HISTORICAL:
        from qtt.harness.historical.replay import replay_folders

        return list(replay_folders(list(items), session, progress=progress))
    if kind is Kind.KSQLDB:
        from qtt.harness.ksqldb.replay import replay_ksqldb_folders

        return replay_ksqldb_folders(list(items), session, progress=progress)
    from qtt.harness.historical.restored import restore_folders

    return list(restore_folders(list(items), session, progress=progress, scenario=scenario))


class Item(Protocol):
    """One thing a session runs, as an adapter holds it (a pytest item, say): its kind, the
    scenario it runs under (``fresh`` but for scenario items) and what its runner takes."""

    kind: str
    scenario: str

    def subject(self) -> Any: ...


def run_batch(
    items: Sequence[Item],
    session: SessionProvider | None = None,
    *,
    progress: Progress | None = None,
    quarantine: Quarantine | None = None,
) -> list[CaseResult]:
    """Run items of any kinds: each kind and scenario by its runner (:func:`run_items`), in
    the order they first appear but historical folders first, so that cases take the runs they
    share with them (:func:`~qtt.harness.replay.same_jobs.sharing`); one result per item, in the
    items' order."""
    results: dict[int, CaseResult] = {}
    groups: dict[tuple[str, str], list[Item]] = {}
    for item in items:
        groups.setdefault((item.kind, item.scenario), []).append(item)
    with same_jobs.sharing():
        for (kind, scenario), group in sorted(groups.items(), key=lambda entry: entry[0][0] != Kind.HISTORICAL):
            subjects = [item.subject() for item in group]
            ran = run_items(Kind(kind), subjects, session, progress=progress, scenario=scenario)
            results.update((id(item), result) for item, result in zip(group, ran, strict=True))
    if quarantine is not None:
        quarantine.apply(results.values())
    return [results[id(item)] for item in items]


@dataclass
class Selection:
    """What a command line names: its files' variants and SQL tests, and historical folders."""

    given: Sequence[str]
    keyword: str | None
    shard: Shard | None
    files: list[Path] = field(default_factory=list)
    variants: list[CaseVariant] = field(default_factory=list)
    sql_tests: list[SqlTest] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    #: ksqlDB's historical plan folders (:mod:`qtt.harness.ksqldb`)
    ksqldb_folders: list[Path] = field(default_factory=list)
    #: (file position, case position, error result) of each case or file that does not load
    unloadable: list[tuple[int, int, CaseResult]] = field(default_factory=list)
    #: how many items the paths and ``-k`` select, in every shard
    selected: int = 0
    #: whether the paths hold anything at all (to tell an empty ``-k`` from an empty folder)
    found: bool = False

    @property
    def nothing_selected(self) -> bool:
        return not self.selected and not self.sql_tests

    @property
    def shard_is_empty(self) -> bool:
        return not (self.variants or self.unloadable or self.folders or self.sql_tests or self.ksqldb_folders)

    @property
    def items(self) -> int:
        """How many results a fresh run of this selection gives (stored checkpoints apart)."""
        return (
            len(self.variants)
            + len(self.unloadable)
            + len(self.sql_tests)
            + len(self.folders)
            + len(self.ksqldb_folders)
        )

    def restorable(self) -> list[Path]:
        """The selected historical folders that hold a stored checkpoint (restored by default)."""
        from qtt.harness.historical.restored import has_checkpoint

        return [folder for folder in self.folders if has_checkpoint(folder)]

    def parts(self) -> Iterator[Selection]:
        """This selection cut into small parts, in report order: each case file (its variants and
        the cases that do not load), each SQL test file, each case's historical folders."""
        for index, path in enumerate(self.files):
            broken = [entry for entry in self.unloadable if entry[0] == index]
            variants = [v for v in self.variants if v.file == str(path)]
            if variants or broken:
                yield replace(self, variants=variants, unloadable=broken, sql_tests=[], folders=[], ksqldb_folders=[])
        tail = [entry for entry in self.unloadable if entry[0] >= len(self.files)]
        if tail:
            yield replace(self, variants=[], unloadable=tail, sql_tests=[], folders=[], ksqldb_folders=[])
        for file in dict.fromkeys(test.file for test in self.sql_tests):
            tests = [test for test in self.sql_tests if test.file == file]
            yield replace(self, variants=[], unloadable=[], sql_tests=tests, folders=[], ksqldb_folders=[])
        for slug in dict.fromkeys(folder.parent for folder in self.folders):
            folders = [folder for folder in self.folders if folder.parent == slug]
            yield replace(self, variants=[], unloadable=[], sql_tests=[], folders=folders, ksqldb_folders=[])
        for case in dict.fromkeys(folder.parent for folder in self.ksqldb_folders):
            ksqldb = [folder for folder in self.ksqldb_folders if folder.parent == case]
            yield replace(self, variants=[], unloadable=[], sql_tests=[], folders=[], ksqldb_folders=ksqldb)


def select(given: Sequence[str], keyword: str | None = None, shard: Shard | None = None) -> Selection:
    """Load what ``given`` names: case files (strictly; a case that does not load is an error
    result, the others go on), SQL test files and historical folders, filtered by ``keyword``
    and cut to ``shard``."""
    rest, all_ksqldb = selection.split_ksqldb(given)
    paths, all_folders = selection.split_paths(rest)
    chosen = Selection(given, keyword, shard, files=discover(paths))
    unloadable = 0
    for file_index, path in enumerate(chosen.files):
        try:
            loaded = load_file(path, display=str(path))
        except QttError as unreadable:  # one error for the file; the other files go on
            unloadable += 1
            if _in_shard(shard, path, ""):
                chosen.unloadable.append((file_index, -1, report.load_error_result(str(path), unreadable)))
            continue
        for error in loaded.errors:
            if not selection.matches(error.case or "", keyword):
                continue
            unloadable += 1
            if _in_shard(shard, path, error.case or ""):
                result = report.load_error_result(str(path), error)
                chosen.unloadable.append((file_index, _case_index(error.path), result))
        chosen.variants.extend(v for v in loaded.variants if selection.matches(v.label, keyword))
    chosen.sql_tests = _sql_tests(paths, keyword, shard, chosen.unloadable, len(chosen.files))
    folders = selection.select_folders(all_folders, keyword)
    ksqldb = selection.select_ksqldb_folders(all_ksqldb, keyword)
    chosen.selected = len(chosen.variants) + unloadable + len(folders) + len(ksqldb)
    chosen.found = bool(chosen.files or all_folders or all_ksqldb)
    chosen.variants = selection.shard_variants(chosen.variants, shard)
    chosen.folders = selection.shard_folders(folders, shard)
    chosen.ksqldb_folders = selection.shard_folders(ksqldb, shard)
    return chosen


@dataclass
class Outcome:
    """A session's results, in report order, and the topology drift its historical replays saw.

    ``not_run``: how many selected items a run that stopped at its first failure left out.
    """

    results: list[CaseResult]
    drift: list[str] = field(default_factory=list)
    not_run: int = 0


def run_selection(
    chosen: Selection,
    *,
    scenario_names: Sequence[str] | None = None,
    seed: int = 0,
    session: SessionProvider | None = None,
    progress_for: ProgressFor | None = None,
    exitfirst: bool = False,
    quarantine: Quarantine | None = None,
) -> Outcome:
    """Run a selection: case variants (under each scenario asked), SQL tests, historical
    folders and their stored checkpoints. Results follow the files' order, then the folders'.

    ``scenario_names``: ``None`` runs fresh, and restored for folders with a checkpoint.
    ``exitfirst``: run the selection a part at a time (:meth:`Selection.parts`) and stop after
    the first part with a bad result; the others are counted in ``Outcome.not_run``.
    ``quarantine``: the project's marks (:mod:`qtt.harness.upkeep.quarantine`), applied to the results.
    """
    session = session or runner.spark_session
    whole = partial(_run_whole, scenario_names=scenario_names, seed=seed, session=session, progress_for=progress_for)

    def run(part: Selection) -> Outcome:
        ran = whole(part)
        if quarantine is not None:
            quarantine.apply(ran.results)
        return ran

    with same_jobs.sharing():
        if not exitfirst:
            return run(chosen)
        outcome = Outcome([])
        left = chosen.items
        for part in chosen.parts():
            ran = run(part)
            outcome.results += ran.results
            outcome.drift += ran.drift
            left -= part.items
            if any(result.status.bad for result in ran.results):
                outcome.not_run = left
                break
        return outcome


def _run_whole(
    chosen: Selection,
    *,
    scenario_names: Sequence[str] | None,
    seed: int,
    session: SessionProvider,
    progress_for: ProgressFor | None,
) -> Outcome:

    def progress(stage: str) -> Progress | None:
        return progress_for(stage) if progress_for is not None else None

    chosen_names = tuple(scenario_names or (scenarios.FRESH, scenarios.RESTORED))
    drift: list[str] = []
    # folders first: a case whose plan and inputs are its newest folder's takes that run
    folder_results = _run_folders(chosen.folders, chosen_names, session, progress, drift) if chosen.folders else []
    placed = list(chosen.unloadable)
    file_order = {str(path): i for i, path in enumerate(chosen.files)}
    variants = chosen.variants
    if scenario_names is None or tuple(scenario_names) == (scenarios.FRESH,):
        replayed = run_items(Kind.CASES, variants, session, progress=progress(Kind.CASES))
    else:
        replayed = scenarios.run_scenarios(
            variants,
            chosen_names,
            session,
            seed=seed,
            progress=progress(Kind.CASES),
            scenario_progress=(lambda name: progress_for(f"{Kind.CASES} ({name})")) if progress_for else None,
        )
    for index, result in enumerate(replayed):
        variant = variants[index % len(variants)]
        placed.append((file_order[variant.file], variant.index, result))
    if chosen.sql_tests:
        from qtt.harness.sqltests.run import not_for_scenario

        tests = chosen.sql_tests
        sql_results = []
        if scenarios.FRESH in chosen_names:
            sql_results = run_items(Kind.SQL, tests, session, progress=progress(Kind.SQL))
        asked = [name for name in scenario_names or () if name != scenarios.FRESH]
        sql_results += [not_for_scenario(test, name) for name in asked for test in tests]
        placed += [(len(chosen.files), index, result) for index, result in enumerate(sql_results)]
    placed.sort(key=lambda entry: entry[:2])  # stable: variants of one case keep their order
    ksqldb_results = []
    if chosen.ksqldb_folders:
        ksqldb_results = run_items(Kind.KSQLDB, chosen.ksqldb_folders, session, progress=progress(Kind.KSQLDB))
    return Outcome([result for _, _, result in placed] + folder_results + ksqldb_results, drift)


def _run_folders(
    folders: list[Path],
    chosen_names: Sequence[str],
    session: SessionProvider,
    progress: Callable[[str], Progress | None],
    drift: list[str],
) -> list[CaseResult]:
    from qtt.harness.historical.replay import HistoricalResult
    from qtt.harness.historical.restored import has_checkpoint

    results: list[CaseResult] = []
    historical: list[HistoricalResult] = []
    if scenarios.FRESH in chosen_names:
        ran = run_items(Kind.HISTORICAL, folders, session, progress=progress(Kind.HISTORICAL))
        historical = [r for r in ran if isinstance(r, HistoricalResult)]
        results += ran
    results += [not_for_folders(f, name) for name in chosen_names if name in scenarios.CASES_ONLY for f in folders]
    restores = [name for name in chosen_names if name in scenarios.RESTORES]
    stored = [folder for folder in folders if has_checkpoint(folder)] if restores else []
    for name in restores if stored else ():
        stage = Kind.RESTORED if name == scenarios.RESTORED else f"{Kind.RESTORED} ({name})"
        results += run_items(Kind.RESTORED, stored, session, progress=progress(stage), scenario=name)
    drift += [f"{result.file}: {line}" for result in historical for line in result.drift]
    return results


def stored_checkpoints(paths: Sequence[str]) -> list[Path]:
    """The historical folders under ``paths`` that store a checkpoint (what a restore runs on)."""
    from qtt.harness.historical.restored import has_checkpoint

    return [folder for folder in select(paths, None, None).folders if has_checkpoint(folder)]


def not_for_folders(folder: Path, scenario: str) -> CaseResult:
    """The skip of a historical folder asked for under a scenario that runs on case variants only."""
    reason = f"the {scenario} scenario runs on case variants; a historical folder replays fresh and restored"
    return CaseResult(
        str(folder), folder.parent.name, f"{folder.name}, {scenario}", Status.SKIPPED, reason, kind=scenario
    )


def _sql_tests(
    paths: Sequence[str], keyword: str | None, shard: Shard | None, placed: list[tuple[int, int, CaseResult]], at: int
) -> list[SqlTest]:
    """The selected tests of the SQL test files under ``paths``; a file that does not load is
    placed as an error result."""
    from qtt.harness.sqltests.files import discover_sql, load_sql_tests

    tests: list[SqlTest] = []
    for path in discover_sql(paths):
        try:
            loaded = load_sql_tests(path)
        except QttError as unreadable:
            if _in_shard(shard, path, ""):
                placed.append((at, -1, report.load_error_result(str(path), unreadable)))
            continue
        tests += [t for t in loaded if selection.matches(t.name, keyword) and _in_shard(shard, path, t.name)]
    return tests


def _in_shard(shard: Shard | None, file: Path, case: str) -> bool:
    """Whether a case of ``file`` that does not load belongs to ``shard`` (it is an item too)."""
    return shard is None or shard.holds(case_identity(file, case))


def _case_index(path: str | None) -> int:
    """The position of the case a JSON path points into (``$.tests[3]...`` -> 3)."""
    match = re.match(r"\$\.tests\[(\d+)\]", path or "")
    return int(match.group(1)) if match else -1


def stale_plans(
    chosen: Selection, historical: str | Path = selection.HISTORICAL_ROOT, own: str | Path = selection.DEFAULT_CASES
) -> list[CaseResult]:
    """The up-to-date check of ``qtt check``, on the selected variants of the project's own cases.

    A variant of a case file under ``own`` whose plan differs from its newest plan persisted
    under ``historical`` (changed, never persisted, or persisted but unreadable) is stale: a
    failed result of kind ``plan`` names it, with the step diff, as pytest's ``@plan`` item of
    the same variant does. Nothing is checked when ``historical`` does not exist (a project
    that keeps no plans), and a case that does not plan is left to its replay's result.
    """
    from qtt.harness.historical.uptodate import PlanStatus, check_variant

    root = Path(historical)
    if not root.is_dir():
        return []
    cases = Path(own).resolve()
    stale = []
    for variant in chosen.variants:
        if cases not in Path(variant.file).resolve().parents:
            continue
        entry = check_variant(variant, root)
        if not entry.ok and entry.status is not PlanStatus.ERROR:
            reason = "\n".join([f"plan {entry.status}: {entry.reason}", *entry.diff[:PLAN_DIFF_LINES]])
            stale.append(
                CaseResult(
                    variant.file, variant.case, variant.variant, Status.FAILED, reason, kind="plan", hint=entry.hint
                )
            )
    return stale


#: the step-diff lines a stale plan shows in a run (``qtt check`` shows more)
PLAN_DIFF_LINES = 20
