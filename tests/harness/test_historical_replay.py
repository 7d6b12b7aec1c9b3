"""Historical replay without Spark: reading a folder, and a corrupt recorded topology."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from qtt.errors import PlanFileError
from qtt.harness.historical.replay import compare_internal_topics, load, replay_folders
from qtt.harness.historical.spec import SpecInternalRecord, SpecInternalTopic
from qtt.harness.status import Status

HISTORICAL = Path(__file__).parents[2] / "historical_plans"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of one recorded folder (recorded folders are never changed)."""
    recorded = sorted(p for p in HISTORICAL.glob("*/*") if p.is_dir() and not p.parent.name.startswith("."))[0]
    copy = tmp_path / recorded.parent.name / recorded.name
    shutil.copytree(recorded, copy)
    return copy


def test_a_recorded_folder_loads_with_its_topology(folder: Path) -> None:
    loaded = load(folder)
    assert set(loaded.topology) == {query.query_id for query in loaded.plan.queries()}


def test_a_corrupt_topology_names_its_file(folder: Path) -> None:
    (folder / "topology").write_text("query Q\n  state\nnot a topology line\n", encoding="utf-8")
    with pytest.raises(PlanFileError) as info:
        load(folder)
    assert info.value.file == str(folder / "topology")
    assert info.value.line == 3
    assert str(info.value).startswith(f"{folder / 'topology'}: line 3: cannot read topology")


def test_a_folder_that_does_not_load_is_an_error_of_its_own(folder: Path) -> None:
    (folder / "topology").write_text("\x00garbage\n", encoding="utf-8")

    def no_spark():  # type: ignore[no-untyped-def]
        pytest.fail("a folder that does not load must not start Spark")

    [result] = replay_folders([folder], no_spark)
    assert result.status == Status.ERROR
    assert str(folder / "topology") in result.reason


def _topic(value: dict[str, object]) -> SpecInternalTopic:
    record = SpecInternalRecord(key={"ID": 1}, value=value, change="update", batch=0)
    return SpecInternalTopic(name="Q-GroupBy-changelog", key_schema="K", value_schema="V", records=(record,))


def test_a_recorded_state_record_compares_whatever_its_field_order() -> None:
    # spec.json writes mappings with sorted keys; today's state struct keeps its own order.
    recorded = _topic({"KSQL_INTERNAL_COL_0": 1.5, "SHELF": "top"})
    assert compare_internal_topics([recorded], [_topic({"SHELF": "top", "KSQL_INTERNAL_COL_0": 1.5})]) == []
    changed = compare_internal_topics([recorded], [_topic({"SHELF": "low", "KSQL_INTERNAL_COL_0": 1.5})])
    assert len(changed) == 1
    assert "record 0 differs" in changed[0]


def test_a_repartition_record_that_moved_in_time_fails_and_says_when() -> None:
    def repartition(timestamp: int) -> SpecInternalTopic:
        record = SpecInternalRecord(key={"ID": 1}, value={"V": 2}, change="append", batch=0, timestamp=timestamp)
        return SpecInternalTopic(name="Q-Join-repartition", key_schema="K", value_schema="V", records=(record,))

    assert compare_internal_topics([repartition(5)], [repartition(5)]) == []
    [problem] = compare_internal_topics([repartition(5)], [repartition(6)])
    assert "record 0 differs" in problem and "timestamp 5" in problem and "timestamp 6" in problem
    [missing] = compare_internal_topics([repartition(5)], [])
    assert missing == "internal topic Q-Join-repartition: recorded, but today's replay does not write it"


@pytest.mark.spark
def test_topologies_are_described_off_the_main_thread_and_a_changed_state_operator_fails_only_its_folder(
    spark,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    from qtt.runtime.execute import topology

    recorded = HISTORICAL / "aggregation__counts_sums_and_averages_per_station__880598fa" / "0.3.0_1795228811139"
    kept, changed = tmp_path / "a" / recorded.name, tmp_path / "b" / recorded.name
    shutil.copytree(recorded, kept)
    shutil.copytree(recorded, changed)
    text = (changed / "topology").read_text(encoding="utf-8")
    (changed / "topology").write_text(text.replace("TransformWithStateInPySpark opId=0", "StateStoreSave opId=0", 1))
    threads: list[str] = []
    describe = topology.describe_query

    def recording(session, query):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return describe(session, query)

    monkeypatch.setattr(topology, "describe_query", recording)
    passed, failed = replay_folders([kept, changed], lambda: spark)
    assert passed.status == Status.PASSED, passed.reason
    assert failed.status == Status.FAILED
    assert any("stateful operators recorded" in problem for problem in failed.problems), failed.problems
    assert threads and all(name.startswith("qtt-topology") for name in threads)


def test_only_queries_that_keep_state_are_described_and_a_stateless_one_that_builds_state_fails() -> None:
    from qtt.harness.historical.replay import described_queries, stateless_problems
    from qtt.harness.replay.driver import ReplayResult
    from qtt.runtime.jobs import QueryRun

    stateful = load(HISTORICAL / "aggregation__counts_sums_and_averages_per_station__880598fa" / "0.3.0_1795228811139")
    assert [query.query_id for query in described_queries(stateful)] == list(stateful.topology)
    folders = (load(folder) for folder in sorted(HISTORICAL.glob("bad_records__*/*")))
    stateless = next(loaded for loaded in folders if not any(one.state for one in loaded.topology.values()))
    assert described_queries(stateless) == []
    [query_id] = stateless.topology
    kept_none = ReplayResult(runs=[QueryRun(query_id, "T")])
    assert stateless_problems(stateless, {}, kept_none) == []
    built_one = ReplayResult(runs=[QueryRun(query_id, "T", state_operators=1)])
    assert stateless_problems(stateless, {}, built_one) == [
        f"topology of {query_id}: recorded without stateful operators, today's runtime built 1"
    ]
    # the recorded topology forgets a query: it is described, and the comparison names it new
    del stateless.topology[query_id]
    assert [query.query_id for query in described_queries(stateless)] == [query_id]


def test_topology_drift_shows_the_lines_that_differ() -> None:
    from qtt.harness.historical.replay import compare_topology
    from qtt.runtime.execute.topology_text import QueryTopology

    recorded = {"Q": QueryTopology("Q", ["op 0"], ["Project [a]", "Filter (a > 1)", "Scan"])}
    now = {"Q": QueryTopology("Q", ["op 0"], ["Project [a]", "Filter (a >= 1)", "Scan"])}
    problems, drift = compare_topology(recorded, now)
    assert problems == []
    assert drift == [
        "topology of Q: 1 plan line(s) differ from the recorded plan\n    - Filter (a > 1)\n    + Filter (a >= 1)"
    ]
    many = {"Q": QueryTopology("Q", ["op 0"], [f"line {i}" for i in range(10)])}
    _, drift = compare_topology(recorded, many)
    assert drift[0].endswith("... and 7 more")
