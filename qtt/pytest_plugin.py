"""pytest plugin: every case variant and every historical plan is a test item.

Three kinds of items:

- ``cases/f.json::name[variant]`` replays a case through today's engine;
- ``cases/f.json::name[variant]@plan`` checks that today's plan equals the newest persisted
  plan (only for the project's own case roots, not for ``--qtt-cases`` extras);
- ``historical_plans::<slug>/<version>_<ms>`` replays a persisted plan with today's runtime.

A thin adapter. Collection reads JSON only and never starts a JVM. The first item of a kind
that runs replays its whole batch through :mod:`qtt.harness`, so replays share Spark
queries; each item then reports its own result. Under pytest-xdist the batch is the item's
file (or folder), so workers never repeat each other's work.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from qtt.errors import CaseFileError, QttError

if TYPE_CHECKING:
    from qtt.harness.model import CaseVariant
    from qtt.harness.runner import CaseResult

RESULTS = pytest.StashKey[dict[str, "CaseResult"]]()
CASE_ROOTS = pytest.StashKey[list[Path]]()
OWN_ROOTS = pytest.StashKey[list[Path]]()
HISTORICAL_ROOT = pytest.StashKey[Path]()


class QttDriftWarning(UserWarning):
    """A historical plan's Spark physical plan changed outside its stateful operators."""


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
    master = config.getoption("qtt_spark_master")
    if master:
        import os

        os.environ["QTT_SPARK_MASTER"] = master
    # --qtt-cases may point outside the paths pytest was asked to collect.
    for path in extra:
        if str(path) not in config.args:
            config.args.append(str(path))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix != ".json":
        return None
    roots = parent.config.stash[CASE_ROOTS]
    resolved = file_path.resolve()
    if any(resolved == root or root in resolved.parents for root in roots):
        return CaseFile.from_parent(parent, path=file_path)
    return None


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if path.resolve() == parent.config.stash[HISTORICAL_ROOT]:
        return HistoricalPlans.from_parent(parent, path=path)
    return None


def slug(text: str) -> str:
    """An ASCII, space-free id, so ``-k`` and ``--lf`` work on any case name.

    Accented letters keep their base letter (``Café`` -> ``Cafe``); anything else that is
    not a letter, digit, ``_``, ``.`` or ``-`` becomes ``_``.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", ascii_text).strip("_") or "case"


class CaseFile(pytest.File):
    """A case file: one item per case variant."""

    def collect(self) -> Iterator[pytest.Item]:
        from qtt.harness.loader import load_file

        try:
            loaded = load_file(self.path, display=self.nodeid)
        except CaseFileError as unreadable:
            yield BrokenCaseItem.from_parent(self, name="load", error=unreadable)
            return
        seen: dict[str, int] = {}
        for variant in loaded.variants:
            name = slug(variant.case) + (f"[{slug(variant.variant)}]" if variant.variant else "")
            count = seen.get(name, 0)
            seen[name] = count + 1
            if count:
                name = f"{name}-{count + 1}"
            yield CaseItem.from_parent(self, name=name, variant=variant)
            if self._own():
                yield PlanCheckItem.from_parent(self, name=f"{name}@plan", variant=variant)
        for error in loaded.errors:
            yield BrokenCaseItem.from_parent(self, name=slug(error.case or "case") + "-load", error=error)

    def _own(self) -> bool:
        """Plan checks apply to the project's own cases, once it keeps historical plans."""
        if not self.config.stash[HISTORICAL_ROOT].is_dir():
            return False
        resolved = self.path.resolve()
        return any(root in resolved.parents for root in self.config.stash[OWN_ROOTS])


class CaseItem(pytest.Item):
    """One case variant, replayed through the current engine."""

    def __init__(self, *, variant: CaseVariant, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.variant = variant
        self.add_marker("qtt")
        self.add_marker("spark")

    def runtest(self) -> None:
        results = self.config.stash[RESULTS]
        if self.nodeid not in results:
            _run_batch(self)
        result = results[self.nodeid]
        if result.status == "skipped":
            pytest.skip(result.reason)
        if result.status != "passed":
            raise CaseFailure(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailure):
            from qtt.harness.report import render_failure

            hint = "run `qtt run {}` to see the same report outside pytest".format(self.variant.file.split("::")[0])
            return render_failure(excinfo.value.result, hint=hint)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"case: {self.variant.label}"


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


def _run_batch(first: CaseItem) -> None:
    """Replay ``first`` together with every not-yet-run case item of its batch."""
    from qtt.harness.runner import run_variants
    from qtt.runtime.session import get_session

    results = first.config.stash[RESULTS]
    under_xdist = hasattr(first.config, "workerinput")
    batch = [
        item
        for item in first.session.items
        if isinstance(item, CaseItem) and item.nodeid not in results and (not under_xdist or item.path == first.path)
    ]
    if first not in batch:
        batch.insert(0, first)
    outcomes = run_variants([item.variant for item in batch], get_session)
    for item, outcome in zip(batch, outcomes, strict=True):
        results[item.nodeid] = outcome


class PlanCheckItem(pytest.Item):
    """Today's plan of a case variant must equal its newest persisted plan."""

    def __init__(self, *, variant: CaseVariant, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.variant = variant
        self.add_marker("qtt")

    def runtest(self) -> None:
        from qtt.harness.uptodate import check_variant

        entry = check_variant(self.variant, self.config.stash[HISTORICAL_ROOT])
        if entry.status == "skipped":
            pytest.skip(entry.reason)
        if not entry.ok:
            raise PlanOutOfDate(entry)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, PlanOutOfDate):
            entry = excinfo.value.entry
            lines = [f"PLAN {entry.status.upper()} {self.variant.file}: {self.variant.label}: {entry.reason}"]
            lines += [f"  {line}" for line in entry.diff[:40]]
            lines.append("hint: run `qtt snapshot` to persist today's plan (after checking the diff)")
            return "\n".join(lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"plan up to date: {self.variant.label}"


class PlanOutOfDate(Exception):
    def __init__(self, entry: Any) -> None:
        super().__init__(entry.reason)
        self.entry = entry


class HistoricalPlans(pytest.Directory):
    """``historical_plans/``: one item per ``<slug>/<version>_<epoch-ms>`` folder."""

    def collect(self) -> Iterator[pytest.Item]:
        from qtt.harness.plan_store import folders

        for folder in folders(self.path):
            yield HistoricalItem.from_parent(self, name=f"{folder.parent.name}/{folder.name}", folder=folder)


class HistoricalItem(pytest.Item):
    """A persisted plan, replayed with today's runtime against its own spec.json."""

    def __init__(self, *, folder: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.folder = folder
        self.add_marker("qtt")
        self.add_marker("spark")

    def runtest(self) -> None:
        import warnings

        results = self.config.stash[RESULTS]
        if self.nodeid not in results:
            _run_historical_batch(self)
        result = results[self.nodeid]
        for line in getattr(result, "drift", []):
            warnings.warn(QttDriftWarning(f"{self.name}: {line}"), stacklevel=1)
        if result.status != "passed":
            raise CaseFailure(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailure):
            from qtt.harness.report import render_failure

            hint = (
                f"run `qtt run {self.folder}` to see the same report; a historical plan must keep "
                "replaying: fix the runtime, never the folder"
            )
            return render_failure(excinfo.value.result, hint=hint)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.folder, None, f"historical plan: {self.name}"


def _run_historical_batch(first: HistoricalItem) -> None:
    from qtt.harness.historical_replay import replay_folders
    from qtt.runtime.session import get_session

    results = first.config.stash[RESULTS]
    under_xdist = hasattr(first.config, "workerinput")
    batch = [
        item
        for item in first.session.items
        if isinstance(item, HistoricalItem) and item.nodeid not in results and (not under_xdist or item is first)
    ]
    if first not in batch:
        batch.insert(0, first)
    outcomes = replay_folders([item.folder for item in batch], get_session)
    for item, outcome in zip(batch, outcomes, strict=True):
        results[item.nodeid] = outcome
