"""Internal topics catch what they are for: a change of state layout fails the historical replay.

The historical plan of a table aggregation is replayed three ways: as it is (passes), with a
processor that stores the same accumulators in another field order (fails, naming the
internal topic), and with a processor that computes the same state another way (passes).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from pyspark import cloudpickle
from pyspark.sql import types as st

from qtt.harness.historical import plan_store
from qtt.harness.historical.replay import compare_internal_topics, load, replay_folders
from qtt.harness.historical.spec import SpecInternalRecord, SpecInternalTopic
from qtt.runtime.operators import stateful

ROOT = Path(__file__).parents[2] / "historical_plans"
TOPIC = "CTAS_CLUBS_0-Aggregate-Aggregate-changelog"


def _club_folder() -> Path:
    return next(f for f in plan_store.folders(ROOT) if "a_table_aggregation_retracts" in f.parent.name)


class ReorderedState(stateful.AggregateProcessor):
    """The same aggregation, storing the accumulator fields in reverse order (a layout change)."""

    def stored_schema(self) -> st.StructType:
        fields = super().stored_schema().fields
        return st.StructType([*reversed(fields[:-1]), fields[-1]])

    def handleInputRows(self, key, rows, timerValues):
        state = self.state

        class Reversed:
            def exists(self) -> bool:
                return state.exists()

            def get(self):
                stored = state.get()  # None for a key without a value, as Spark's get answers
                return None if stored is None else (*reversed(stored[:-1]), stored[-1])

            def update(self, value) -> None:
                state.update((*reversed(value[:-1]), value[-1]))

        self.state = Reversed()
        try:
            yield from super().handleInputRows(key, rows, timerValues)
        finally:
            self.state = state


class SameStateOtherCode(stateful.AggregateProcessor):
    """A refactoring that leaves state identical: it must not fail anything."""

    def handleInputRows(self, key, rows, timerValues):
        materialized = list(rows)
        yield from super().handleInputRows(key, iter(materialized), timerValues)


@pytest.fixture
def by_value():
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def test_every_stateful_historical_plan_records_its_internal_topics() -> None:
    for folder in plan_store.folders(ROOT):
        loaded = load(folder)
        stateful_plan = any(
            getattr(step, "stateful", False)
            for query in loaded.plan.queries()
            for step in __import__("qtt.plan.ir.steps", fromlist=["walk_steps"]).walk_steps(query.physical_plan)
        )
        if stateful_plan:
            assert loaded.spec.internal_topics, f"{folder}: a stateful plan without internal topics"
            written = {record.topic for record in loaded.spec.outputs}
            for query in loaded.plan.queries():
                if getattr(query.physical_plan, "topic", None) not in written:
                    continue  # a query whose every row is dropped keeps empty state
                # a start gate holds rows only while partitions' control events arrive apart,
                # which a case's inputs (all on one partition) never make
                kept = [
                    t
                    for t in loaded.spec.internal_topics
                    if t.name.startswith(f"{query.query_id}-") and not t.name.endswith("-StartGate-held-changelog")
                ]
                # a table side's store holds only the table's rows, which a LEFT JOIN may never get
                own = [t for t in kept if not t.name.endswith("-Reduce-changelog")]
                assert not own or any(topic.records for topic in own), (folder, query.query_id)


def test_comparison_names_the_topic_and_the_first_differing_record() -> None:
    record = SpecInternalRecord(key={"K": "a"}, value={"N": 1}, change="update", batch=0)
    recorded = [
        SpecInternalTopic(
            name="Q-Agg-changelog",
            key_schema="STRUCT<`K` STRING>",
            value_schema="STRUCT<`N` BIGINT>",
            records=(record,),
        )
    ]
    changed = [dataclasses.replace(recorded[0], records=(dataclasses.replace(record, value={"N": 2}),))]
    problems = compare_internal_topics(recorded, changed)
    assert problems == [
        "internal topic Q-Agg-changelog: record 0 differs: recorded batch 0 partition 0 update "
        'key={"K": "a"} value={"N": 1}, now batch 0 partition 0 update key={"K": "a"} value={"N": 2}'
    ]
    assert compare_internal_topics(recorded, recorded) == []
    assert compare_internal_topics(recorded, []) == [
        "internal topic Q-Agg-changelog: recorded, but today's replay does not write it"
    ]


@pytest.mark.spark
@pytest.mark.usefixtures("no_active_streams", "by_value")
def test_a_state_layout_change_fails_naming_the_internal_topic(spark, monkeypatch) -> None:
    folder = _club_folder()
    assert [r.status for r in replay_folders([folder], lambda: spark)] == ["passed"]

    monkeypatch.setattr(stateful, "AggregateProcessor", ReorderedState)
    [changed] = replay_folders([folder], lambda: spark)
    assert changed.status == "failed"
    assert changed.comparison is not None and changed.comparison.ok, "outputs are the same; only state differs"
    # The reordered fields hold the same values: the value schema is what names the change
    # (records compare field by field, as spec.json stores them with sorted fields).
    assert any(p.startswith(f"internal topic {TOPIC}: value schema recorded") for p in changed.problems)

    monkeypatch.setattr(stateful, "AggregateProcessor", SameStateOtherCode)
    [same] = replay_folders([folder], lambda: spark)
    assert same.status == "passed", same.problems
