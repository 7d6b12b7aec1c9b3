"""The swap-in-place scenarios: the cut they make (no Spark), and on Spark a swap that holds the
cutover invariant, under restart too, and a broken gate that the invariant catches."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from qtt.harness.cases.loader import load_file
from qtt.harness.replay import scenarios, swap
from qtt.harness.replay.driver import ReplayItem
from qtt.harness.status import Status
from qtt.plan.ir import gate_steps as gs
from qtt.plan.ir import steps as s
from qtt.plan.statements import plan_statements
from qtt.sql import parse_statements

STATEMENTS = [
    "CREATE STREAM scans (parcel VARCHAR KEY, depot VARCHAR, kg INT) WITH (kafka_topic='scans', value_format='JSON');",
    "CREATE TABLE per_depot AS SELECT depot, COUNT(*) AS n, SUM(kg) AS kg FROM scans GROUP BY depot;",
]
SCANS = [(f"parcel-{n}", "north" if n % 3 else "south", n) for n in range(12)]


def _case(name: str) -> dict[str, object]:
    return {
        "name": name,
        "statements": STATEMENTS,
        "inputs": [
            {"topic": "scans", "key": k, "value": {"depot": d, "kg": kg}, "timestamp": 10 * n}
            for n, (k, d, kg) in enumerate(SCANS)
        ],
    }


def _swap(restart: bool = False) -> swap.Swap:
    plan = plan_statements(parse_statements("\n".join(STATEMENTS))).plan
    inputs = ReplayItem.from_case(plan, load_file(_written(Path("/tmp"), "cut")).variants[0].inputs).inputs
    found = swap.swap_for(plan, inputs, (), restart=restart)
    assert isinstance(found, swap.Swap)
    return found


def _written(folder: Path, name: str) -> Path:
    path = folder / f"qtt-swap-{name}.json"
    path.write_text(json.dumps({"tests": [_case(name)]}), encoding="utf-8")
    return path


def test_the_cut_puts_each_partitions_control_event_apart_and_stop_gates_the_old_query() -> None:
    cut = _swap()
    first, second = sorted(cut.vector.offsets.items(), key=lambda item: item[1])
    assert first[1] < second[1], "the two partitions' control events arrive apart"
    between = list(cut.causes[first[1] + 1 : second[1]])
    late = second[0][1]
    assert any(c.partition == late for c in between), "records the late partition's old query still answers"
    assert any(c.partition != late for c in between), "records the new query's gate must hold"
    queries = cut.swapped.plan.queries()
    assert [q.query_id for q in queries] == ["CTAS_PER_DEPOT_0", "CTAS_PER_DEPOT_0" + swap.SWAPPED]
    old_steps = s.walk_steps(queries[0].physical_plan)
    (stop,) = [step for step in old_steps if isinstance(step, gs.StopGateV1)]
    controls = [r for r in cut.swapped.inputs if r.headers]
    assert [r.headers for r in controls] == [((gs.CONTROL_HEADER, b"2"),)] * 2
    inputs = cut.swapped.inputs
    offsets = {r.partition: sum(1 for o in inputs[: inputs.index(r)] if o.partition == r.partition) for r in controls}
    assert dict(stop.offsets) == offsets
    assert isinstance(queries[1].physical_plan.sources()[0], gs.StartGateV1)


def test_a_plan_whose_queries_all_join_is_not_swapped() -> None:
    plan = plan_statements(
        parse_statements(
            "CREATE STREAM a (id INT KEY, x INT) WITH (kafka_topic='a', value_format='JSON');"
            "CREATE TABLE b (id INT PRIMARY KEY, y INT) WITH (kafka_topic='b', value_format='JSON');"
            "CREATE STREAM j AS SELECT a.id, x, y FROM a JOIN b ON a.id = b.id;"
        )
    ).plan
    assert swap.swap_for(plan, (), (), restart=False) == (
        "no query reads one input topic alone (each joins two, or reads a topic another query writes)"
    )


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_a_swap_holds_the_cutover_invariant_and_under_restart_too(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    variants = list(load_file(_written(tmp_path, "holds")).variants)
    results = scenarios.run_scenarios(variants, ("swap", "swap-restart"), lambda: spark)
    assert [(r.kind, r.status) for r in results] == [("swap", Status.PASSED), ("swap-restart", Status.PASSED)], [
        r.reason for r in results
    ]
    restarted = results[1].replay
    assert restarted is not None and max(run.starts for run in restarted.runs) > 1


@pytest.mark.spark
@pytest.mark.usefixtures("no_active_streams")
def test_a_gate_that_opens_at_the_first_control_event_fails_the_invariant(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark import cloudpickle

    from qtt.runtime.operators import gates
    from tests.harness import leaky_gate

    cloudpickle.register_pickle_by_value(sys.modules[leaky_gate.__name__])
    try:
        monkeypatch.setattr(gates, "StartGate", leaky_gate.OpensAtTheFirstControlEvent)
        variants = list(load_file(_written(tmp_path, "leaks")).variants)
        (result,) = scenarios.run_scenarios(variants, ("swap",), lambda: spark)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[leaky_gate.__name__])
    assert result.status == Status.FAILED
    broken = "CTAS_PER_DEPOT_0 swapped in place for itself: its sink PER_DEPOT breaks the cutover invariant"
    assert broken in result.reason
    assert "not expected at the cut" in result.reason and "its start gate opened early" in result.reason
