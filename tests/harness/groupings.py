"""The same jobs replayed alone, together and together in the other order, and what a replay records.

A replay's result must never depend on its company on the shared stateful path; the tests of
each stateful operator check it with these helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from qtt.errors import QttError
from qtt.harness.cases.loader import load_file
from qtt.harness.replay import driver
from qtt.harness.replay.driver import ReplayItem, ReplayResult, replay_many
from qtt.harness.replay.runner import plan_variant
from qtt.runtime.execute.spark_runtime import SparkRuntime
from qtt.runtime.jobs import CAPTURE

Results = list[ReplayResult | QttError]


def case_items(path: Path, names: Sequence[str]) -> list[ReplayItem]:
    """The replays of the cases of ``path`` whose names start with one of ``names``, in the file's order."""
    variants = [v for v in load_file(path).variants if v.case.startswith(tuple(names))]
    assert len(variants) == len(names)
    return [ReplayItem.from_case(plan_variant(v).plan, v.inputs) for v in variants]


def facts(result: ReplayResult | QttError) -> dict[str, Any]:
    """Everything a replay records, minus timings and group sizes."""
    assert isinstance(result, ReplayResult), result
    return {
        "outputs": {
            topic: [
                (r.key_bytes, r.value_bytes, r.timestamp, r.seq, r.partition, r.query_id, r.window) for r in records
            ]
            for topic, records in result.outputs.items()
        },
        "log": result.processing_log,
        "internal": [(t.name, t.key_schema, t.value_schema, t.records) for t in result.internal_topics],
        "steps": result.step_schemas,
        "schemas": result.schemas,
    }


def replay_in_three_groupings(
    items: Callable[[], list[ReplayItem]], spark: Any, monkeypatch: Any
) -> tuple[Results, Results, Results]:
    """``items`` replayed one query each, all together, and together in the other order
    (results in ``items`` order), each capturing state."""
    monkeypatch.setattr(driver, "GROUP_SIZE", 1)
    alone = replay_many([replace(i, mode=CAPTURE) for i in items()], runtime=SparkRuntime(spark))
    monkeypatch.undo()
    together = replay_many([replace(i, mode=CAPTURE) for i in items()], runtime=SparkRuntime(spark))
    reversed_ = replay_many([replace(i, mode=CAPTURE) for i in items()[::-1]], runtime=SparkRuntime(spark))[::-1]
    return alone, together, reversed_


def assert_same_facts(alone: Results, together: Results, reversed_: Results) -> None:
    for one, grouped, other in zip(alone, together, reversed_, strict=True):
        assert facts(grouped) == facts(one)
        assert facts(other) == facts(one)
