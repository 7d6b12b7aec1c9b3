"""Real evolution: release 0.1.0 wrote streamSinkV1 plans, 0.2.0 writes streamSinkV2.

V2 routes each output record by key, as Kafka's producer does, and pins the partition count
in the plan; V1 kept the input record's partition. Both must keep replaying green.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.harness.cases.model import Record
from qtt.harness.historical import plan_store
from qtt.harness.historical.replay import load, replay_folders
from qtt.harness.replay.driver import replay
from qtt.plan.ir import steps as s
from qtt.plan.statements import plan_statements
from qtt.runtime.execute.spark_runtime import SparkRuntime
from qtt.sql import parse_statements
from qtt.topics.partitioner import partition_for

ROOT = Path(__file__).parents[2] / "historical_plans"


def _sinks(plan: s.Plan) -> list[s.ExecutionStep]:
    return [q.physical_plan for q in plan.queries()]


def test_the_planner_writes_v2_sinks_with_the_topic_partition_count() -> None:
    sql = (
        "CREATE STREAM a (k STRING KEY, v INT) WITH (kafka_topic='a', value_format='JSON', partitions=3);\n"
        "CREATE STREAM b WITH (partitions=4) AS SELECT k, v FROM a;\n"
        "CREATE STREAM c AS SELECT k, v FROM a;\n"
        "INSERT INTO b SELECT k, v FROM c;"
    )
    sinks = _sinks(plan_statements(parse_statements(sql)).plan)
    assert [type(x).__name__ for x in sinks] == ["StreamSinkV2"] * 3
    assert [x.partitions for x in sinks] == [4, 3, 4]  # type: ignore[attr-defined]


def test_historical_plans_hold_two_released_versions() -> None:
    versions = {plan_store.parse_folder(p).version for p in plan_store.folders(ROOT)}
    assert {"0.1.0", "0.2.0"} <= versions
    tags = set()
    for path in plan_store.folders(ROOT):
        plan = json.loads((path / "plan.json").read_text())
        tags |= {st["queryPlan"]["physicalPlan"]["@type"] for st in plan["statements"] if st["queryPlan"]}
    assert {"streamSinkV1", "streamSinkV2"} <= tags


def _partitioned_case_folders() -> tuple[Path, Path]:
    """The 0.1.0 and 0.2.0 folders of the case whose sink topic has two partitions."""
    case = next(p for p in ROOT.iterdir() if p.name.startswith("projection__explicit_sink_topic"))
    folders = sorted(case.iterdir())
    old = next(f for f in folders if f.name.startswith("0.1.0_"))
    new = next(f for f in folders if f.name.startswith("0.2.0_"))
    return old, new


@pytest.mark.spark
def test_v1_keeps_input_partitions_and_v2_routes_by_key(spark) -> None:
    old, new = _partitioned_case_folders()
    assert isinstance(_sinks(load(old).plan)[0], s.StreamSinkV1)
    assert not isinstance(_sinks(load(old).plan)[0], s.StreamSinkV2)
    v2 = _sinks(load(new).plan)[0]
    assert isinstance(v2, s.StreamSinkV2) and v2.partitions > 1

    results = replay_folders([old, new], lambda: spark)
    assert [r.status for r in results] == ["passed", "passed"]
    old_out = [o for records in results[0].replay.outputs.values() for o in records]  # type: ignore[union-attr]
    new_out = [o for records in results[1].replay.outputs.values() for o in records]  # type: ignore[union-attr]
    assert {o.partition for o in old_out} == {0}
    assert [o.partition for o in new_out] == [partition_for(o.key_bytes, v2.partitions) for o in new_out]


@pytest.mark.spark
@pytest.mark.usefixtures("no_active_streams")
def test_v2_spreads_keys_over_the_sink_partitions_as_kafka_would(spark) -> None:
    sql = (
        "CREATE STREAM a (k STRING KEY, v INT) WITH (kafka_topic='a', value_format='JSON');\n"
        "CREATE STREAM b WITH (partitions=3) AS SELECT k, v FROM a;"
    )
    plan = plan_statements(parse_statements(sql)).plan
    keys = ["D1", "D2", "D3", "D5", None]
    result = replay(
        plan, [Record(topic="a", key=k, value={"V": i}) for i, k in enumerate(keys)], runtime=SparkRuntime(spark)
    )
    # murmur2 as Kafka's producer: D1 -> 2, D2 -> 0, D3 -> 1, D5 -> 1; a null key stays where it came from
    assert [(o.key, o.partition) for o in result.outputs["B"]] == [
        ("D1", 2),
        ("D2", 0),
        ("D3", 1),
        ("D5", 1),
        (None, 0),
    ]
