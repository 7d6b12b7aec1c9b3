"""The compatibility matrix: which stored checkpoints today's Spark restores, by writer line.

Rows are the stateful cases (by their historical slug), columns the Spark lines that wrote
their stored checkpoints, each cell the restore's verdict on today's Spark: ``passed``, or the
status and the first line of the reason (a refusal quotes Spark's error class). A case with
several folders by one line shows its worst verdict, and how many folders it covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from qtt.harness.historical.replay import HistoricalResult
from qtt.harness.results import CaseResult
from qtt.harness.status import Status
from qtt.runtime.spark.lines import line

#: the order verdicts are kept in a cell: the worst first
_WORST = (Status.CORRUPT, Status.ERROR, Status.FAILED, Status.TIMED_OUT, Status.INFRA, Status.SKIPPED, Status.PASSED)


def render(given: Sequence[CaseResult], today: str) -> str:
    """The Markdown matrix of restored results (of :func:`restore_folders`) on pyspark ``today``."""
    results = [r for r in given if isinstance(r, HistoricalResult)]
    columns = sorted({line(r.writer) for r in results if r.writer})
    cells: dict[str, dict[tuple[int, int], list[HistoricalResult]]] = {}
    for result in results:
        if result.writer:
            cells.setdefault(Path(result.file).parent.name, {}).setdefault(line(result.writer), []).append(result)
    names = [f"{major}.{minor}" for major, minor in columns]
    out = [
        f"Stored checkpoints restored on pyspark {today}, by the Spark line that wrote them "
        f"({len([r for r in results if r.writer])} checkpoint(s) of {len(cells)} case(s); `qtt matrix`).",
        "",
        "| case | " + " | ".join(f"written by {name}" for name in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for slug in sorted(cells):
        row = [_cell(cells[slug].get(column, [])) for column in columns]
        out.append(f"| {slug} | " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def _cell(results: list[HistoricalResult]) -> str:
    if not results:
        return "-"
    worst = min(results, key=lambda r: _WORST.index(r.status) if r.status in _WORST else 0)
    verdict = str(worst.status)
    if worst.status != Status.PASSED:
        reason = (worst.reason or "").splitlines()[0][:120].replace("|", "\\|")
        verdict = f"{verdict}: {reason}"
    return verdict + (f" ({len(results)} folders)" if len(results) > 1 else "")
