"""tableAggregateV1 and V2 on Spark: the step's two versions, as persisted plans see them.

V1 (qtt 0.3.0) emits a group after the retraction and again after the addition, even when an
update keeps the row in its group. V2 emits such an update once, as ksqlDB does. Old plans
keep V1's outputs: that is what their historical replays compare against.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qtt.harness.cases.loader import load_file
from qtt.harness.replay.driver import ReplayItem, ReplayResult, replay_many
from qtt.harness.replay.runner import plan_variant
from qtt.plan.ir import codec
from qtt.runtime.execute.spark_runtime import SparkRuntime

CASE = "a table row updated within its group emits the group once"
TABLES = Path(__file__).parents[2] / "cases" / "tables.json"


def _floors(result: ReplayResult) -> list[tuple[str, int, int]]:
    return [(r.key, r.value["ROOMS"], r.value["SEATS"]) for r in result.outputs["FLOORS"]]


@pytest.mark.spark
def test_v2_emits_a_same_group_update_once_and_v1_keeps_its_old_outputs(spark) -> None:  # type: ignore[no-untyped-def]
    variant = next(v for v in load_file(TABLES).variants if v.case == CASE)
    v2 = plan_variant(variant).plan
    text = codec.dumps(v2)
    assert '"tableAggregateV2"' in text
    v1 = codec.loads(text.replace('"tableAggregateV2"', '"tableAggregateV1"'))
    items = [ReplayItem.from_case(plan, variant.inputs) for plan in (v2, v1)]
    new, old = replay_many(items, runtime=SparkRuntime(spark))
    assert isinstance(new, ReplayResult) and isinstance(old, ReplayResult)
    assert _floors(new) == [("ground", 1, 10), ("ground", 2, 14), ("ground", 2, 16), ("ground", 1, 12), ("first", 1, 4)]
    # V1: key 1's update in "ground" first emits the group without the row, then with it
    assert _floors(old) == [
        ("ground", 1, 10),
        ("ground", 2, 14),
        ("ground", 1, 4),
        ("ground", 2, 16),
        ("ground", 1, 12),
        ("first", 1, 4),
    ]
