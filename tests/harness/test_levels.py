"""A plan's queries that read only what earlier queries wrote run side by side, in one round.

Running a level at once must record exactly what running the queries one by one records: the
same outputs (offsets included, where two queries write one topic), processing log, internal
topics, step schemas and registry subjects.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from qtt.harness.historical import plan_store
from qtt.harness.historical.replay import inputs_of, load
from qtt.harness.replay import driver
from qtt.harness.replay.driver import ReplayItem, ReplayResult, replay_many
from qtt.plan.ir.shape import query_order
from qtt.runtime.execute.spark_runtime import SparkRuntime
from qtt.runtime.jobs import CAPTURE
from tests.harness.groupings import facts

ROOT = Path(__file__).parents[2] / "historical_plans"
#: five stateful queries over two input topics; two stateless queries that write one topic
FOLDERS = ("joins__table-table_joins_inner_left", "insert_into__two_sources_merge_into_one_stream")


def _items() -> list[ReplayItem]:
    items = []
    for prefix in FOLDERS:
        path = next(f for f in plan_store.folders(ROOT) if f.parent.name.startswith(prefix))
        loaded = load(path)
        items.append(ReplayItem.from_recorded(loaded.plan, inputs_of(loaded.spec), loaded.spec.schemas))
    return items


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_a_level_of_queries_records_what_the_queries_one_by_one_record(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    side_by_side = replay_many([replace(i, mode=CAPTURE) for i in _items()], runtime=SparkRuntime(spark))
    monkeypatch.setattr(driver, "query_levels", lambda plan: [[query] for query in query_order(plan)])
    one_by_one = replay_many([replace(i, mode=CAPTURE) for i in _items()], runtime=SparkRuntime(spark))

    assert all(isinstance(r, ReplayResult) for r in side_by_side), side_by_side
    # both plans' seven queries ran in one group; one by one, a round held a query of each plan
    assert {run.group_size for r in side_by_side for run in r.runs} == {7}  # type: ignore[union-attr]
    assert {run.group_size for r in one_by_one for run in r.runs} == {1, 2}  # type: ignore[union-attr]
    for together, apart in zip(side_by_side, one_by_one, strict=True):
        assert facts(together) == facts(apart)
    assert facts(side_by_side[0])["internal"]
