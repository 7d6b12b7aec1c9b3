"""``qtt bench``: what a replay costs, measured against Spark's own floor on this machine.

It prints, in one run: the JVM start; the floor (one query start, one micro-batch); for case
variants and for historical plans, the median seconds per replay (stateless and stateful
apart), replays per minute, and each figure's ratio to the floor. Nothing here is asserted:
it is measured and printed. Progress goes to stderr: a line per phase, and replayed X/Y.

It never ends in a traceback: what Spark could not run (an infrastructure error, or a
Spark that does not start) becomes a line of the report, and :attr:`Figures.exit_status`
is non-zero (3, as for ``qtt run``).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qtt.harness.results import CaseResult

CASES, HISTORICAL = "case variant", "historical plan"
#: the stateful case variants and historical plans, as their own figure (replayed in the sections above)
STATEFUL = "stateful plan"
#: historical folders resumed from their stored checkpoints (compared with the stateful median)
RESTORED = "restored checkpoint"
#: ksqlDB's own historical plan folders, translated and replayed (equal plans replay once)
KSQLDB = "ksqlDB plan"
#: the stateful replays that write windowed keys (windowed aggregations), a group of their own
WINDOWED = "windowed"
#: the replays that join (a step of context ``Join``, as ksqlDB names every join step), a group of their own
JOINS = "join"
#: the baseline that the registry formats' replays are compared with
BASELINE_FORMAT = "JSON"
#: how many times each format's batch replays (its figures pool every run)
FORMAT_REPEATS = 3


@dataclass
class Section:
    """The replays of one kind (case variants, or historical plans)."""

    count: int = 0
    wall: float = 0.0
    seconds: list[float] = field(default_factory=list)
    groups: dict[str, list[float]] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)

    def add(self, result: CaseResult) -> None:
        """Count one replay's status and seconds."""
        self.statuses[result.status] = self.statuses.get(result.status, 0) + 1
        self.seconds.append(result.seconds)
        if result.replay is not None:
            group = "stateful" if result.replay.stateful else "stateless"
            self.groups.setdefault(group, []).append(result.seconds)
            if result.replay.stateful and _windowed(result.replay):
                self.groups.setdefault(WINDOWED, []).append(result.seconds)
            if _joins(result.replay):
                self.groups.setdefault(JOINS, []).append(result.seconds)

    @property
    def per_minute(self) -> float:
        return self.count / self.wall * 60 if self.wall else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "wall_s": round(self.wall, 3),
            "median_s": round(_median(self.seconds), 3),
            "per_minute": round(self.per_minute, 2),
            "statuses": self.statuses,
            "groups": {k: {"n": len(v), "median_s": round(_median(v), 3)} for k, v in self.groups.items()},
        }


@dataclass
class Figures:
    """Everything ``qtt bench`` measured."""

    jvm_start: float = 0.0
    query_start: float = 0.0
    micro_batch: float = 0.0
    sections: dict[str, Section] = field(default_factory=dict)
    #: what could not be measured, and why (an infrastructure error)
    errors: list[str] = field(default_factory=list)

    @property
    def exit_status(self) -> int:
        """0 when everything was measured; 3 when something could not run (see :mod:`qtt.harness.status`)."""
        from qtt.harness.status import EXIT_INFRASTRUCTURE, Status

        infra = any(section.statuses.get(Status.INFRA) for section in self.sections.values())
        return EXIT_INFRASTRUCTURE if self.errors or infra else 0

    @property
    def floor(self) -> float:
        """One query start plus one micro-batch: the cheapest possible replay."""
        return self.query_start + self.micro_batch

    def as_json(self) -> dict[str, Any]:
        return {
            "jvm_start_s": round(self.jvm_start, 3),
            "floor_query_start_s": round(self.query_start, 3),
            "floor_micro_batch_s": round(self.micro_batch, 3),
            **{kind.replace(" ", "_") + "s": section.as_json() for kind, section in self.sections.items()},
            "errors": self.errors,
        }


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def _to_stderr(line: str) -> None:
    print(f"qtt bench: {line}", file=sys.stderr, flush=True)


def run(
    paths: Sequence[str],
    folders: Sequence[Path] = (),
    *,
    ksqldb: Sequence[Path] = (),
    repetitions: int = 3,
    log: Callable[[str], None] = _to_stderr,
) -> Figures:
    """Measure everything in one process; the JVM must not be running yet.

    ``log`` gets the progress lines. An infrastructure error ends the measuring, and is
    recorded in :attr:`Figures.errors`; what was measured before it is kept.
    """
    from qtt.errors import InfrastructureError
    from qtt.harness.replay.runner import spark_session, started

    figures = Figures()
    try:
        log("starting Spark")
        began = time.perf_counter()
        spark = started(spark_session)
        from qtt.runtime.spark.floor import measure
        from qtt.runtime.spark.session import started_seconds

        figures.jvm_start = started_seconds() or (time.perf_counter() - began)
        log(f"measuring the floor ({repetitions} repetitions)")
        try:
            floor = measure(spark, repetitions=repetitions)
        except Exception as e:
            _raise_if_infrastructure(e, "the floor could not be measured")
            raise
        figures.query_start, figures.micro_batch = floor.query_start, floor.micro_batch
        _replay_sections(figures, paths, folders, log, ksqldb)
    except InfrastructureError as e:
        figures.errors.append(f"infrastructure error: {e.message}")
        log(f"infrastructure error: {e.message}")
    return figures


def _raise_if_infrastructure(error: Exception, what: str) -> None:
    from qtt.errors import InfrastructureError
    from qtt.runtime.spark import infrastructure

    if infrastructure.is_infrastructure(error):
        msg = f"{what}: {infrastructure.reason(error)}"
        raise InfrastructureError(msg, hint=infrastructure.HINT) from error


def _replay_sections(
    figures: Figures,
    paths: Sequence[str],
    folders: Sequence[Path],
    log: Callable[[str], None],
    ksqldb: Sequence[Path] = (),
) -> None:
    from qtt.harness.historical.restored import has_checkpoint
    from qtt.harness.selection import load_variants
    from qtt.harness.session import Kind, run_items

    variants, _ = load_variants(paths)
    stateful_variants = {id(v) for v in variants if _variant_is_stateful(v)}
    stateful_folders = {f for f in folders if _folder_is_stateful(f)}

    # Each section replays its stateless and its stateful items as two batches, so that the
    # stateful ones also make a figure of their own: replays per minute over stateful plans.
    def runs(kind: Kind, chosen: Sequence[Any]) -> Callable[[Callable[[int, int], None]], Sequence[CaseResult]]:
        return lambda progress: run_items(kind, chosen, progress=progress)

    halves = []
    for stateful in (False, True):
        mine = [v for v in variants if (id(v) in stateful_variants) == stateful]
        halves.append((CASES, stateful, len(mine), runs(Kind.CASES, mine), ""))
    for stateful in (False, True):
        theirs = [f for f in folders if (f in stateful_folders) == stateful]
        halves.append((HISTORICAL, stateful, len(theirs), runs(Kind.HISTORICAL, theirs), ""))
    stored = [f for f in folders if has_checkpoint(f)]
    halves.append((RESTORED, False, len(stored), runs(Kind.RESTORED, stored), f"{RESTORED}s"))
    halves.append((KSQLDB, False, len(ksqldb), runs(Kind.KSQLDB, ksqldb), f"{KSQLDB}s"))
    for kind, stateful, count, replay, label in halves:
        if not count:
            continue
        label = label or f"{'stateful' if stateful else 'stateless'} {kind}s"
        log(f"replaying {count} {label}")
        section = figures.sections.setdefault(kind, Section())
        both = [section, figures.sections.setdefault(STATEFUL, Section())] if stateful else [section]
        began = time.perf_counter()

        def progress(done: int, total: int, label: str = label, began: float = began) -> None:
            log(f"  replayed {done}/{total} {label} ({time.perf_counter() - began:.0f}s)")

        results = replay(progress)
        wall = time.perf_counter() - began
        for target in both:
            target.count += count
            target.wall += wall
            for result in results:
                target.add(result)
    for fmt, same_cases in format_batches(variants).items():
        kind = format_kind(fmt)
        count = len(same_cases) * FORMAT_REPEATS
        log(f"replaying {count} {kind}s")
        section = figures.sections[kind] = Section(count=count)
        began = time.perf_counter()
        for _ in range(FORMAT_REPEATS):
            for result in run_items(Kind.CASES, same_cases):
                section.add(result)
        section.wall = time.perf_counter() - began
    if STATEFUL in figures.sections:  # printed after the sections whose replays it pools
        figures.sections[STATEFUL] = figures.sections.pop(STATEFUL)


def _windowed(replay: Any) -> bool:
    return any(record.window is not None for records in replay.outputs.values() for record in records)


def _joins(replay: Any) -> bool:
    return any(context.endswith("Join") for steps in replay.step_schemas.values() for context in steps)


def _variant_is_stateful(variant: Any) -> bool:
    from qtt.errors import QttError
    from qtt.harness.replay.runner import plan_variant, unevaluated
    from qtt.plan.ir.shape import query_order

    try:
        planned = plan_variant(variant, unevaluated)
    except QttError:
        return False
    plan = getattr(planned, "plan", None)
    return plan is not None and any(shape.stateful for _, shape in query_order(plan))


def _folder_is_stateful(folder: Path) -> bool:
    from qtt.errors import QttError
    from qtt.harness.historical.replay import load
    from qtt.plan.ir.shape import query_order

    try:
        return any(shape.stateful for _, shape in query_order(load(folder).plan))
    except QttError:
        return False


def format_kind(fmt: str) -> str:
    return f"{fmt} matrix variant"


def format_batches(variants: Sequence[Any]) -> dict[str, list[Any]]:
    """Format -> the variants of every case that runs both as JSON and in a registry format.

    Only JSON and the registry formats take part, each format's variants replay as a batch of
    their own (:data:`FORMAT_REPEATS` times), so that their costs compare on the same queries,
    the same data and the same grouping (the cases of ``cases/formats_matrix.json``).
    """
    from qtt.serde import get_format
    from qtt.serde.registry.registry_format import RegistryFormat

    def compared(fmt: str) -> bool:
        return fmt == BASELINE_FORMAT or (
            fmt.isupper() and isinstance(_format_or_none(get_format, fmt), RegistryFormat)
        )

    by_case: dict[tuple[str, str], dict[str, Any]] = {}
    for variant in variants:
        by_case.setdefault((variant.file, variant.case), {})[variant.variant] = variant
    batches: dict[str, list[Any]] = {}
    for formats in by_case.values():
        taking_part = {fmt: variant for fmt, variant in formats.items() if compared(fmt)}
        if BASELINE_FORMAT in taking_part and len(taking_part) > 1:
            for fmt, variant in taking_part.items():
                batches.setdefault(fmt, []).append(variant)
    return dict(sorted(batches.items(), key=lambda item: (item[0] != BASELINE_FORMAT, item[0])))


def _format_or_none(get_format: Callable[[str], Any], name: str) -> Any:
    from qtt.errors import StatementError

    try:
        return get_format(name)
    except StatementError:
        return None


def render(figures: Figures) -> str:
    """The figures as the text ``qtt bench`` prints."""
    floor = figures.floor or float("nan")

    def row(label: str, seconds: float, ratio: bool = True) -> str:
        suffix = f"  {seconds / floor:6.2f} x floor" if ratio else ""
        return f"  {label:<44} {seconds:8.3f} s{suffix}"

    lines = [
        "qtt bench",
        row("JVM and SparkSession start", figures.jvm_start),
        row("floor: one query start", figures.query_start, ratio=False),
        row("floor: one micro-batch", figures.micro_batch, ratio=False),
        row("floor: query start + one batch", figures.floor, ratio=False),
    ]
    for kind, section in figures.sections.items():
        lines.append(row(f"median per {kind} (n={section.count})", _median(section.seconds)))
        for group, values in sorted(section.groups.items()):
            if kind.startswith(f"{group} "):  # the section itself ("stateful" of the stateful plans)
                continue
            lines.append(row(f"  median per {group} {kind} (n={len(values)})", _median(values)))
        lines.append(f"  {kind + 's per minute':<44} {section.per_minute:8.2f}")
        lines.append(row(f"wall time for all {kind}s", section.wall, ratio=False))
        lines.append("  statuses: " + ", ".join(f"{v} {k}" for k, v in sorted(section.statuses.items())))
    baseline = figures.sections.get(format_kind(BASELINE_FORMAT))
    for kind, section in figures.sections.items():
        if baseline is not None and section is not baseline and kind.endswith(format_kind("")[1:]):
            fmt = kind.split(" ", 1)[0]
            median = _median(section.seconds) / (_median(baseline.seconds) or float("nan"))
            wall = section.wall / (baseline.wall or float("nan"))
            lines.append(
                f"  {fmt + ' / ' + BASELINE_FORMAT + ' (same cases)':<44} median {median:5.2f} x, wall {wall:5.2f} x"
            )
    restored, stateful = figures.sections.get(RESTORED), figures.sections.get(STATEFUL)
    if restored is not None and stateful is not None and restored.seconds and stateful.seconds:
        ratio = _median(restored.seconds) / (_median(stateful.seconds) or float("nan"))
        lines.append(f"  {RESTORED + ' / ' + STATEFUL + ' median':<44} {ratio:5.2f} x")
    lines += [f"  {error}" for error in figures.errors]
    return "\n".join(lines)


def write_json(figures: Figures, path: str | Path) -> None:
    """Write the figures as JSON to ``path``."""
    import json

    Path(path).write_text(json.dumps(figures.as_json(), indent=2) + "\n", encoding="utf-8")
