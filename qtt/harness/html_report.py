"""``qtt run --html FILE`` and ``pytest --qtt-html FILE``: one self-contained page of a run.

The page is a grid: a row per case (and variant), a column per way it was replayed: the
fresh replay and each scenario of the case, each release's historical plan (``plan 0.7.0``)
and each restored checkpoint (``restored 0.7.0, spark 4.1.4``). A cell is coloured by its
worst status; a click opens its results below the grid: status, reason and the labelled diff
a failure prints on the terminal. Filters by status and by text, and the summary counts, are
at the top. Everything (styles, script, results) is inside the one file: it opens from disk,
with no server and no network.

Rendered with Jinja2 from ``templates/report.html.j2``, with autoescaping: a case name or a
diff can hold any text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cattrs

from qtt.harness import report
from qtt.harness.results import CaseResult
from qtt.harness.status import Status

#: a cell shows its worst status: the first of these its results have
WORST_FIRST = (
    Status.CORRUPT,
    Status.ERROR,
    Status.FAILED,
    Status.TIMED_OUT,
    Status.INFRA,
    Status.QUARANTINED,
    Status.SKIPPED,
    Status.PASSED,
)
_VERSION = re.compile(r"^(\d+(?:\.\d+)*)_\d+$")


@dataclass(frozen=True)
class Shown:
    """One result, as the page shows it: plain data, so that pytest-xdist's workers can send
    theirs to the process that writes the page (:func:`as_data`, :func:`from_data`)."""

    case: str
    variant: str
    column: str
    label: str
    file: str
    status: Status
    seconds: float
    text: str

    @classmethod
    def of(cls, result: CaseResult) -> Shown:
        text = report.render_failure(result) if result.status.bad else result.reason or str(result.status)
        return cls(
            result.case,
            _base_variant(result),
            column_of(result),
            result.label,
            result.file,
            result.status,
            result.seconds,
            text,
        )


_DATA = cattrs.Converter()
_DATA.register_unstructure_hook(Status, lambda status: str(status.value))  # execnet sends builtins only


def as_data(shown: Sequence[Shown]) -> list[dict[str, object]]:
    return [_DATA.unstructure(one) for one in shown]


def from_data(data: Sequence[dict[str, object]]) -> list[Shown]:
    return [_DATA.structure(one, Shown) for one in data]


@dataclass
class Cell:
    id: str
    entries: list[Shown] = field(default_factory=list)

    @property
    def status(self) -> Status:
        present = {entry.status for entry in self.entries}
        return next(status for status in WORST_FIRST if status in present)


@dataclass
class Row:
    label: str
    files: list[str]
    #: its place in the order results came in: cell ids are unique by it
    index: int
    cells: dict[str, Cell] = field(default_factory=dict)

    @property
    def statuses(self) -> str:
        """The statuses of its cells, for the status filter."""
        return " ".join(sorted({cell.status.name for cell in self.cells.values()}))


@dataclass
class Grid:
    columns: list[str]
    rows: list[Row]


def grid(shown: Iterable[Shown]) -> Grid:
    """The rows (cases and variants) and columns (replays) of the results."""
    rows: dict[tuple[str, str], Row] = {}
    columns: set[str] = set()
    for one in shown:
        key = (one.case, one.variant)
        columns.add(one.column)
        if key not in rows:
            rows[key] = Row(f"{one.case} [{one.variant}]" if one.variant else one.case, [], len(rows))
        row = rows[key]
        if one.file not in row.files:
            row.files.append(one.file)
        cell = row.cells.setdefault(one.column, Cell(f"c{row.index}-{len(row.cells)}"))
        cell.entries.append(one)
    return Grid(sorted(columns, key=_column_order), sorted(rows.values(), key=lambda row: row.label.lower()))


def column_of(result: CaseResult) -> str:
    """The column of a result: ``fresh``, a scenario, ``sql test``, ``plan 0.7.0`` or
    ``restored 0.7.0, spark 4.1.4``."""
    if result.kind == "historical":
        return f"plan {_release(result.file)}"
    if _restores(result.kind):
        writer = getattr(result, "writer", "")
        return f"{result.kind} {_release(result.file)}" + (f", spark {writer}" if writer else "")
    return _COLUMNS.get(result.kind, result.kind)  # else a scenario of a case or SQL test


_COLUMNS = {"sql": "sql test", "case": "fresh", "plan": "plan up to date", "load": "file"}


def _release(folder: str) -> str:
    """``0.7.0`` of ``historical_plans/<slug>/0.7.0_1795620141001``."""
    name = Path(folder).name
    found = _VERSION.match(name)
    return found.group(1) if found else name


def _base_variant(result: CaseResult) -> str:
    """The variant without what the column says (``, restart``; ``, restored ...``)."""
    variant = result.variant
    if result.kind not in _COLUMNS and result.kind != "historical":  # a scenario
        for mark in (result.kind, "restored"):
            if variant == mark or variant.startswith(f"{mark} ") or variant.startswith(f"{mark},"):
                return ""
            variant = variant.split(f", {mark}")[0]
    return variant


def _column_order(column: str) -> tuple[int, tuple[int, ...], str]:
    """The fresh replay, SQL tests and scenarios first, then the releases' plans, then the
    restored checkpoints, each by release."""
    first = ("fresh", "sql test", "restart", "rebatch", "batch")
    if column in first:
        return (0, (first.index(column),), column)
    kind, _, rest = column.partition(" ")
    release = tuple(int(part) for part in re.findall(r"\d+", rest.split(",")[0]))
    rank = 1 if kind == "plan" and column != _COLUMNS["plan"] else 2 if _restores(kind) else 3
    return (rank, release, column)


def _restores(kind: str) -> bool:
    """Whether results of ``kind`` are restored checkpoints (``restored``, ``restored-hdfs``, ...)."""
    return kind == "restored" or kind.startswith("restored-")


def render(shown: Sequence[Shown], *, title: str, seconds: float | None = None) -> str:
    """The page of the results ``shown``."""
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("qtt.harness", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    counts: Counter[str] = Counter(one.status for one in shown)
    summary = f"{len(shown)} result(s): {report.counts_text(counts)}" + (f" in {seconds:.1f}s" if seconds else "")
    return environment.get_template("report.html.j2").render(
        title=title,
        summary=summary,
        counts=[(status, counts[status]) for status in WORST_FIRST if counts[status]],
        grid=grid(shown),
    )


def write(shown: Sequence[Shown], path: str | Path, *, title: str, seconds: float | None = None) -> None:
    """Write the page of the results ``shown`` to ``path``."""
    Path(path).write_text(render(shown, title=title, seconds=seconds), encoding="utf-8")
