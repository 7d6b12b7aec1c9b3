"""The Spark runtime a replay runs on: :class:`qtt.runtime.jobs.Runtime` over one SparkSession."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from qtt.errors import QttError
from qtt.runtime.execute import executor
from qtt.runtime.jobs import Job, QueryRun
from qtt.runtime.spark.checkpoint_files import unreadable_state
from qtt.runtime.spark.session import activate


@dataclass(frozen=True)
class SparkRuntime:
    """Jobs run as Structured Streaming queries on ``session``."""

    session: SparkSession

    def run_groups(self, groups: Sequence[Sequence[Job]], checkpoints: Sequence[str]) -> Iterator[dict[int, QueryRun]]:
        activate(self.session)
        return executor.run_groups(self.session, groups, checkpoints)

    def run_jobs(
        self, jobs: Sequence[Job], checkpoint: str, *, seed: Callable[[Path], None] | None = None
    ) -> dict[int, QueryRun]:
        activate(self.session)  # the caller may be a thread of its own (restored runs are)
        return executor.run_jobs(self.session, jobs, checkpoint, seed=seed)

    def unreadable_state(self, checkpoint: Path, error: QttError) -> str | None:
        return unreadable_state(self.session, checkpoint, error)
