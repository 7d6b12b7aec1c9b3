"""Spark's documented refusals: restores that fail because Spark does not support the path.

A restore that fails with a Spark error class is a failure, unless an entry of
``spark_refusals.toml`` (beside this module, listed in docs/spark-upgrades.md) says, with a
date and a reference, that Spark refuses that path: then it is reported as Spark's refusal, a
skip naming the error class and the entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from qtt.harness.entries_file import read_entries
from qtt.runtime.spark.infrastructure import error_classes

ENTRIES_FILE = Path(__file__).with_name("spark_refusals.toml")
_FIELDS = ("scenario", "error_class", "spark", "writer", "since", "reason", "reference")


@dataclass(frozen=True)
class Refusal:
    """One entry: Spark refuses ``scenario``'s restore with ``error_class``."""

    scenario: str
    error_class: str
    spark: str
    writer: str
    since: str
    reason: str
    reference: str

    def matches(self, scenario: str, error_classes: Sequence[str], spark: str, writer: str) -> bool:
        return (
            self.scenario == scenario
            and any(found == self.error_class or found.startswith(f"{self.error_class}.") for found in error_classes)
            and _on_line(self.spark, spark)
            and _on_line(self.writer, writer)
        )


def find(scenario: str, message: str, *, spark: str, writer: str) -> Refusal | None:
    """The entry that covers this failed restore, if any."""
    found = error_classes(message)
    return next((entry for entry in entries() if entry.matches(scenario, found, spark, writer)), None)


@cache
def entries(path: Path = ENTRIES_FILE) -> tuple[Refusal, ...]:
    """Every entry of the file, checked: a malformed entry is an error naming it."""
    return tuple(Refusal(**entry) for entry in read_entries(path, "refusal", _FIELDS))


def _on_line(pattern: str, version: str) -> bool:
    """``4.3`` holds for 4.3.0 and 4.3.1; ``*`` for every version."""
    return pattern == "*" or version == pattern or version.startswith(f"{pattern}.")
