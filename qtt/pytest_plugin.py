"""pytest plugin: every case variant and every historical plan is a test item.

Four kinds of items:

- ``cases/f.json::name[variant]`` replays a case through today's engine;
- ``cases/f.json::name[variant]@plan`` checks that today's plan equals the newest persisted
  plan (only for the project's own case roots, not for ``--qtt-cases`` extras);
- ``historical_plans::<slug>/<version>_<ms>`` replays a persisted plan with today's runtime;
- ``cases/f.sql::name`` runs a SQL test (statements, inserts, upgrades and assertions in order).

A thin adapter. Collection reads JSON and SQL test files only and never starts a JVM. The first item of a kind
that runs replays its whole batch through :mod:`qtt.harness`, so replays share Spark
queries; each item then reports its own result. Under pytest-xdist the batch is the item's
file (``historical_plans`` for every folder) and the plugin distributes with ``--dist loadfile``
instead of xdist's default ``load``: a whole batch goes to one worker, so workers never repeat
each other's work.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from qtt.errors import CaseFileError, QttError
from qtt.harness.cases.slugs import node_names, node_slug
from qtt.harness.status import Status

if TYPE_CHECKING:
    from qtt.harness.cases.model import CaseVariant
    from qtt.harness.historical.uptodate import CheckEntry
    from qtt.harness.results import CaseResult
    from qtt.harness.shard import Shard
    from qtt.harness.sqltests.files import SqlTest
    from qtt.harness.upkeep.quarantine import Quarantine

SHARD = pytest.StashKey["Shard | None"]()
RESULTS = pytest.StashKey[dict[str, "CaseResult"]]()
CASE_ROOTS = pytest.StashKey[list[Path]]()
OWN_ROOTS = pytest.StashKey[list[Path]]()
HISTORICAL_ROOT = pytest.StashKey[Path]()
SCENARIOS = pytest.StashKey["tuple[str, ...] | None"]()
QUARANTINE = pytest.StashKey["Quarantine"]()


class QttDriftWarning(UserWarning):
    """A historical plan's Spark physical plan changed outside its stateful operators."""


class QttQuarantineWarning(UserWarning):
    """A quarantined item passes now: its mark in quarantine.toml can go."""


class CaseFailure(Exception):
    """Raised by a case item whose variant failed; rendered by :meth:`CaseItem.repr_failure`."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(result.reason)
        self.result = result


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("qtt", "qtt: query translation tests")
    group.addoption(
        "--qtt-cases",
        action="append",
        default=[],
        metavar="PATH",
        help="also collect case files (*.json) from PATH; may be repeated",
    )
    group.addoption(
        "--qtt-spark-master",
        metavar="URL",
        default=None,
        help="Spark master: local[N] (default local[2]), spark://host:7077 or sc://host:15002",
    )
    group.addoption(
        "--qtt-shard",
        metavar="K/N",
        default=None,
        help="run only shard K of N: a deterministic 1/N of all collected items (unit tests included), by a "
        "stable hash of each node id, so N machines with 1/N .. N/N together run the suite once",
    )
    group.addoption(
        "--qtt-scenario",
        metavar="NAME[,NAME]",
        default=None,
        help="run every case under these scenarios: fresh, restored, restart, rebatch, batch, and the "
        "restores after Spark's upgrade operations: restored-partitions, restored-hdfs, restored-format2, "
        "restored-no-changelog (default: fresh, and restored for historical folders with a stored "
        'checkpoint); see docs/guide.md, "Scenarios"',
    )
    group.addoption(
        "--qtt-schema-registry",
        metavar="URL",
        default=None,
        help="a Confluent-compatible schema registry for the registry formats, or 'docker' to start one "
        "(default: embedded, one per replay)",
    )
    group.addoption(
        "--qtt-html",
        metavar="FILE",
        default=None,
        help="also write the qtt items' results as one self-contained HTML page to FILE (see qtt run --html)",
    )
    group.addoption(
        "--qtt-time-limit",
        metavar="SECONDS",
        default=None,
        help="stop a streaming query that has not ended after SECONDS: its item fails as 'timed out', "
        "showing what had arrived on each topic, and the next item runs (default 600, or QTT_TIME_LIMIT)",
    )
    parser.addini(
        "qtt_cases",
        type="paths",
        default=[],
        help="directories whose *.json files are qtt case files (default: ./cases)",
    )
    parser.addini(
        "qtt_historical_plans",
        default="historical_plans",
        help="the historical plans directory, relative to the rootdir (default: historical_plans)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", None) == "load":
        # xdist's default splits a file's items over workers, and each would replay the batch
        config.option.dist = "loadfile"
    config.addinivalue_line("markers", "qtt: a qtt case variant or historical plan")
    config.addinivalue_line("markers", "spark: needs a SparkSession (case variants and historical replays do)")
    # Without qtt_cases in the ini file, ./cases counts both under the rootdir and under the
    # directory pytest was started from: a path option value such as `--qtt-cases ../x` takes
    # part in pytest's rootdir guess and can move the rootdir away from the project.
    defaults = {
        Path(config.rootpath, "cases").resolve(),
        Path(config.invocation_params.dir, "cases").resolve(),
    }
    roots = [Path(p).resolve() for p in config.getini("qtt_cases")] or sorted(defaults)
    extra = [Path(p).resolve() for p in config.getoption("qtt_cases")]
    config.stash[CASE_ROOTS] = roots + extra
    config.stash[OWN_ROOTS] = roots
    config.stash[HISTORICAL_ROOT] = Path(config.rootpath, config.getini("qtt_historical_plans")).resolve()
    config.stash[RESULTS] = {}
    config.stash[SHARD] = _shard_option(config.getoption("qtt_shard"))
    config.stash[SCENARIOS] = _scenario_option(config.getoption("qtt_scenario"))
    _time_limit_option(config.getoption("qtt_time_limit"))
    if config.getoption("qtt_html"):
        from qtt.pytest_report_page import ReportPage

        config.pluginmanager.register(ReportPage(config.getoption("qtt_html"), lambda: config.stash[RESULTS]))
    config.stash[QUARANTINE] = _quarantine(config.rootpath)
    master = config.getoption("qtt_spark_master")
    registry = config.getoption("qtt_schema_registry")
    import os

    if master:
        os.environ["QTT_SPARK_MASTER"] = master
    if registry:
        from qtt.serde.registry.registry_container import RegistryUnavailable, resolve
        from qtt.serde.registry.schema_registry import REGISTRY_URL_ENV

        try:
            os.environ[REGISTRY_URL_ENV] = resolve(registry)
        except RegistryUnavailable as e:
            raise pytest.UsageError(f"--qtt-schema-registry {registry}: {e}") from None
    # --qtt-cases may point outside the paths pytest was asked to collect.
    for path in extra:
        if str(path) not in config.args:
            config.args.append(str(path))


def _scenario_option(text: str | None) -> tuple[str, ...] | None:
    from qtt.harness.replay.scenarios import parse

    if text is None:
        return None
    try:
        return parse(text)
    except QttError as e:
        raise pytest.UsageError(f"--qtt-scenario: {e.message}") from None


def _time_limit_option(text: str | None) -> None:
    from qtt.runtime.spark import time_limit

    if text is None:
        return
    try:
        time_limit.set_seconds(time_limit.parse(text, where="--qtt-time-limit"))
    except QttError as e:
        raise pytest.UsageError(e.message) from None


def _quarantine(root: Path) -> Quarantine:
    from qtt.harness.upkeep import quarantine

    try:
        return quarantine.load(root)
    except QttError as e:
        raise pytest.UsageError(e.message) from None


def _scenarios(config: pytest.Config) -> tuple[str, ...]:
    """The scenarios asked for; without the option, fresh (and restored for historical folders)."""
    return config.stash[SCENARIOS] or ("fresh", "restored")


def _shard_option(text: str | None) -> Shard | None:
    from qtt.harness.shard import parse

    if text is None:
        return None
    try:
        return parse(text, option="--qtt-shard")
    except QttError as e:
        raise pytest.UsageError(e.message) from None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--qtt-shard K/N``: keep this shard's items. Deselected items leave ``session.items``
    before anything runs, so no batch replay (:meth:`ReplayedItem._batch`) includes them."""
    shard = config.stash[SHARD]
    if shard is None:
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (kept if shard.holds(item.nodeid) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """A skip of a case, SQL test or folder is reported at the item (its file and line), not at
    the plugin line that raised it."""
    report = yield
    if report.skipped and isinstance(item, ReplayedItem | PlanCheckItem) and isinstance(report.longrepr, tuple):
        path, line, _ = item.location
        report.longrepr = (path, line, report.longrepr[2])
    return report


def _case_line(variant: CaseVariant) -> int | None:
    """The 0-based line of a case's first statement in its file, where pytest points at it."""
    return variant.statement_lines[0] - 1 if variant.statement_lines else None


def pytest_report_header(config: pytest.Config) -> str | None:
    shard = config.stash[SHARD]
    return f"qtt: shard {shard} (--qtt-shard)" if shard else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix not in (".json", ".sql"):
        return None
    roots = parent.config.stash[CASE_ROOTS]
    resolved = file_path.resolve()
    if any(resolved == root or root in resolved.parents for root in roots):
        if file_path.suffix == ".sql":
            return SqlTestFile.from_parent(parent, path=file_path)
        return CaseFile.from_parent(parent, path=file_path)
    return None


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if path.resolve() == parent.config.stash[HISTORICAL_ROOT]:
        return HistoricalPlans.from_parent(parent, path=path)
    return None


class CaseFile(pytest.File):
    """A case file: one item per case variant."""

    def collect(self) -> Iterator[pytest.Item]:
        from qtt.harness.cases.loader import load_file

        try:
            loaded = load_file(self.path, display=self.nodeid)
        except CaseFileError as unreadable:
            yield BrokenCaseItem.from_parent(self, name="load", error=unreadable)
            return
        chosen = _scenarios(self.config)
        for name, variant in node_names(loaded.variants):
            if "fresh" in chosen:
                yield CaseItem.from_parent(self, name=name, variant=variant)
            # without --qtt-scenario, a case runs fresh only (restored is for historical folders)
            for scenario in chosen if self.config.stash[SCENARIOS] else ():
                if scenario != "fresh":
                    yield ScenarioItem.from_parent(self, name=f"{name}[{scenario}]", variant=variant, scenario=scenario)
            if self._own():
                yield PlanCheckItem.from_parent(self, name=f"{name}@plan", variant=variant)
        for error in loaded.errors:
            yield BrokenCaseItem.from_parent(self, name=node_slug(error.case or "case") + "-load", error=error)

    def _own(self) -> bool:
        """Plan checks apply to the project's own cases, once it keeps historical plans."""
        if not self.config.stash[HISTORICAL_ROOT].is_dir():
            return False
        resolved = self.path.resolve()
        return any(root in resolved.parents for root in self.config.stash[OWN_ROOTS])


class ReplayedItem(pytest.Item):
    """An item whose result comes from a batch replay: the first item to run replays the
    batch, each item then reports its own result."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_marker("qtt")
        self.add_marker("spark")

    def _batch(self) -> list[ReplayedItem]:
        """This item and every not-yet-run item of its batch kind (under xdist: of its file)."""
        results = self.config.stash[RESULTS]
        under_xdist = hasattr(self.config, "workerinput")
        batch = [
            item
            for item in self.session.items
            if isinstance(item, ReplayedItem)
            and item.batch_kind == self.batch_kind
            and item.nodeid not in results
            and (not under_xdist or item.batch_file == self.batch_file)
        ]
        return batch if self in batch else [self, *batch]

    @property
    def batch_kind(self) -> str:
        """Items of one batch kind replay together: fresh case variants with historical folders
        (a case then takes the run of its newest folder when plan and inputs are the same, see
        :func:`qtt.harness.replay.same_jobs.sharing`), every other kind on its own."""
        return "fresh" if type(self) in (CaseItem, HistoricalItem) else type(self).__name__

    @property
    def batch_file(self) -> str:
        """The batch this item replays in under xdist: the file part of its node id, the scope
        ``--dist loadfile`` sends to one worker."""
        return self.nodeid.split("::", 1)[0]

    #: the kind of item it is, as the run session names it (:class:`qtt.harness.session.Kind`),
    #: and the scenario it runs under: the run session's item protocol (``session.Item``)
    kind = ""
    scenario = "fresh"

    def subject(self) -> Any:
        """What the run session runs for this item: a variant, a SQL test or a folder."""
        raise NotImplementedError

    def _replay(self, batch: Sequence[ReplayedItem]) -> list[CaseResult]:
        from qtt.harness.session import run_batch

        return run_batch(batch, quarantine=self.config.stash[QUARANTINE])

    def result(self) -> CaseResult:
        """This item's result, replaying its batch first if needed."""
        results = self.config.stash[RESULTS]
        if self.nodeid not in results:
            batch = self._batch()
            for item, outcome in zip(batch, self._replay(batch), strict=True):
                results[item.nodeid] = outcome
        return results[self.nodeid]

    def runtest(self) -> None:
        """Skip or fail on this item's result (an item with more to check overrides it)."""
        self._judge(self.result())

    def _judge(self, result: CaseResult) -> None:
        """Skip, expect the failure of a quarantined item, or fail; warn when a mark can go."""
        import warnings

        from qtt.harness.upkeep.quarantine import passes_now

        if result.status == Status.SKIPPED:
            pytest.skip(result.reason)
        if result.status == Status.QUARANTINED:
            pytest.xfail(result.reason)
        if result.status != Status.PASSED:
            raise CaseFailure(result)
        if passes_now(result):
            warnings.warn(QttQuarantineWarning(f"{self.name}: {result.reason}"), stacklevel=1)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailure):
            from dataclasses import replace

            from qtt.harness.report import render_failure

            result = excinfo.value.result
            return render_failure(replace(result, hint=self._rerun_hint(result.hint)))
        return str(super().repr_failure(excinfo))

    def _rerun_hint(self, hint: str) -> str:
        """The result's hint, with its ``qtt run ...`` rerun as this item under pytest."""
        import re
        import shlex

        return re.sub(r"qtt run [^;]*", lambda _: f"pytest {shlex.quote(self.nodeid)}", hint, count=1)


class CaseItem(ReplayedItem):
    """One case variant, replayed through the current engine."""

    def __init__(self, *, variant: CaseVariant, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.variant = variant

    kind = "case variants"

    def subject(self) -> Any:
        return self.variant

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, _case_line(self.variant), f"case: {self.variant.label}"


class ScenarioItem(CaseItem):
    """One case variant under a scenario other than fresh, compared with its fresh replay."""

    def __init__(self, *, scenario: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, _case_line(self.variant), f"case: {self.variant.label} ({self.scenario})"


class SqlTestFile(pytest.File):
    """A SQL test file (ksqlDB's SQL-format tests): one item per test."""

    def collect(self) -> Iterator[pytest.Item]:
        from qtt.harness.sqltests.files import load_sql_tests

        try:
            tests = load_sql_tests(self.path, display=self.nodeid)
        except CaseFileError as unreadable:
            yield BrokenCaseItem.from_parent(self, name="load", error=unreadable)
            return
        names: dict[str, int] = {}
        for test in tests:
            name = node_slug(test.name)
            names[name] = names.get(name, 0) + 1
            shown = name if names[name] == 1 else f"{name}-{names[name]}"
            yield SqlTestItem.from_parent(self, name=shown, test=test)


class SqlTestItem(ReplayedItem):
    """One test of a SQL test file: its statements run in order, its assertions judged."""

    def __init__(self, *, test: SqlTest, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.test = test

    kind = "SQL tests"

    def subject(self) -> Any:
        return self.test

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, self.test.line - 1, f"SQL test: {self.test.name}"


class BrokenCaseItem(pytest.Item):
    """A case (or file) that could not be loaded: fails with the loader's message."""

    def __init__(self, *, error: QttError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return f"ERROR {excinfo.value}"

    def reportinfo(self) -> tuple[Path, int | None, str]:
        what = f"case: {self.error.case}" if self.error.case else f"case file: {self.path.name}"
        return self.path, None, f"{what} (does not load)"


class PlanCheckItem(pytest.Item):
    """Today's plan of a case variant must equal its newest persisted plan."""

    def __init__(self, *, variant: CaseVariant, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.variant = variant
        self.add_marker("qtt")

    def runtest(self) -> None:
        from qtt.harness.historical.uptodate import PlanStatus, check_variant

        # the slug hashes the file's path relative to the project, never the node id's spelling
        entry = check_variant(self.variant, self.config.stash[HISTORICAL_ROOT], file=self.path)
        if entry.status == PlanStatus.SKIPPED:
            pytest.skip(entry.reason)
        if not entry.ok:
            raise PlanOutOfDate(entry)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, PlanOutOfDate):
            entry = excinfo.value.entry
            lines = [f"PLAN {entry.status.upper()} {self.variant.file}: {self.variant.label}: {entry.reason}"]
            lines += [f"  {line}" for line in entry.diff[:40]]
            lines.append(f"hint: {entry.hint}")
            return "\n".join(lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, _case_line(self.variant), f"plan up to date: {self.variant.label}"


class PlanOutOfDate(Exception):
    """Raised by a plan check item whose plan is not the newest persisted one."""

    def __init__(self, entry: CheckEntry) -> None:
        super().__init__(entry.reason)
        self.entry = entry


class HistoricalPlans(pytest.Directory):
    """``historical_plans/``: one item per ``<slug>/<version>_<epoch-ms>`` folder."""

    def collect(self) -> Iterator[pytest.Item]:
        from qtt.harness.historical.plan_store import folders
        from qtt.harness.historical.restored import has_checkpoint
        from qtt.harness.replay.scenarios import RESTORES

        chosen = _scenarios(self.config)
        for folder in folders(self.path):
            name = f"{folder.parent.name}/{folder.name}"
            if "fresh" in chosen:
                yield HistoricalItem.from_parent(self, name=name, folder=folder)
            for scenario in (s for s in RESTORES if s in chosen) if has_checkpoint(folder) else ():
                yield RestoredItem.from_parent(self, name=f"{name}[{scenario}]", folder=folder, scenario=scenario)


class HistoricalItem(ReplayedItem):
    """A persisted plan, replayed with today's runtime against its own spec.json."""

    def __init__(self, *, folder: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.folder = folder

    kind = "historical plans"

    def subject(self) -> Any:
        return self.folder

    def runtest(self) -> None:
        import warnings

        result = self.result()
        for line in getattr(result, "drift", []):
            warnings.warn(QttDriftWarning(f"{self.name}: {line}"), stacklevel=1)
        self._judge(result)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.folder, None, f"historical plan: {self.name}"


class RestoredItem(HistoricalItem):
    """A persisted plan's stored checkpoint, resumed by today's runtime over the inputs after it
    (``scenario``: plainly, or after one of Spark's upgrade operations)."""

    kind = "restored checkpoints"

    def __init__(self, *, scenario: str = "restored", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario

    @property
    def batch_kind(self) -> str:
        return f"{type(self).__name__}[{self.scenario}]"

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.folder, None, f"restored checkpoint: {self.name}"
