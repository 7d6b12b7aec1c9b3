"""``qtt bench``: what a replay costs, measured against Spark's own floor on this machine.

It prints, in one run: the JVM start; the floor (one query start, one micro-batch); the
median seconds per case variant and per historical plan; case variants per minute; and each
figure's ratio to the floor. Nothing here is asserted: it is measured and printed.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Figures:
    jvm_start: float = 0.0
    query_start: float = 0.0
    micro_batch: float = 0.0
    variants: int = 0
    replayed: int = 0
    wall: float = 0.0
    per_variant: list[float] = field(default_factory=list)
    groups: dict[str, list[float]] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def floor(self) -> float:
        """One query start plus one micro-batch: the cheapest possible replay."""
        return self.query_start + self.micro_batch

    def as_json(self) -> dict[str, Any]:
        return {
            "jvm_start_s": round(self.jvm_start, 3),
            "floor_query_start_s": round(self.query_start, 3),
            "floor_micro_batch_s": round(self.micro_batch, 3),
            "variants": self.variants,
            "replayed": self.replayed,
            "wall_s": round(self.wall, 3),
            "median_s_per_variant": round(_median(self.per_variant), 3),
            "variants_per_minute": round(self.variants / self.wall * 60, 2) if self.wall else 0.0,
            "statuses": self.statuses,
            "groups": {k: {"n": len(v), "median_s": round(_median(v), 3)} for k, v in self.groups.items()},
        }


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def run(paths: Sequence[str], *, repetitions: int = 3) -> Figures:
    """Measure everything in one process; the JVM must not be running yet."""
    from qtt.harness.loader import discover, load_file
    from qtt.harness.runner import run_variants
    from qtt.runtime import session as spark_session
    from qtt.runtime.floor import measure

    figures = Figures()
    began = time.perf_counter()
    spark = spark_session.get_session()
    figures.jvm_start = spark_session.started_seconds() or (time.perf_counter() - began)
    floor = measure(spark, repetitions=repetitions)
    figures.query_start, figures.micro_batch = floor.query_start, floor.micro_batch

    variants = [v for path in discover(paths) for v in load_file(path, display=str(path)).variants]
    figures.variants = len(variants)
    began = time.perf_counter()
    results = run_variants(variants, spark_session.get_session)
    figures.wall = time.perf_counter() - began
    for result in results:
        figures.statuses[result.status] = figures.statuses.get(result.status, 0) + 1
        figures.per_variant.append(result.seconds)
        if result.replay is not None:
            figures.replayed += 1
            stateful = any(run.batches > 1 for run in result.replay.runs)
            figures.groups.setdefault("stateful" if stateful else "stateless", []).append(result.seconds)
    return figures


def render(figures: Figures) -> str:
    floor = figures.floor or float("nan")

    def row(label: str, seconds: float, ratio: bool = True) -> str:
        suffix = f"  {seconds / floor:6.2f} x floor" if ratio else ""
        return f"  {label:<38} {seconds:8.3f} s{suffix}"

    median = _median(figures.per_variant)
    lines = [
        "qtt bench",
        row("JVM and SparkSession start", figures.jvm_start),
        row("floor: one query start", figures.query_start, ratio=False),
        row("floor: one micro-batch", figures.micro_batch, ratio=False),
        row("floor: query start + one batch", figures.floor, ratio=False),
        row(f"median per case variant (n={figures.variants})", median),
    ]
    for group, values in sorted(figures.groups.items()):
        lines.append(row(f"median per {group} variant (n={len(values)})", _median(values)))
    per_minute = figures.variants / figures.wall * 60 if figures.wall else 0.0
    lines.append(f"  {'case variants per minute':<38} {per_minute:8.2f}")
    lines.append(f"  {'wall time for all variants':<38} {figures.wall:8.3f} s")
    lines.append("  statuses: " + ", ".join(f"{v} {k}" for k, v in sorted(figures.statuses.items())))
    return "\n".join(lines)


def write_json(figures: Figures, path: str | Path) -> None:
    import json

    Path(path).write_text(json.dumps(figures.as_json(), indent=2) + "\n", encoding="utf-8")
