"""Scenarios: the names, the seeded splits, the verdicts (no Spark), and each scenario on Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.errors import QttError
from qtt.harness.cases.loader import load_file
from qtt.harness.replay import scenarios
from qtt.harness.replay.driver import OutputRecord, ReplayResult
from qtt.harness.results import CaseResult
from qtt.harness.status import Status
from qtt.runtime.jobs import InternalRecord, InternalTopic


def test_parse_keeps_the_order_given_and_refuses_unknown_names() -> None:
    assert scenarios.parse("restart, rebatch,restart") == ("restart", "rebatch")
    with pytest.raises(QttError, match="unknown scenario replay; the scenarios are fresh, restored"):
        scenarios.parse("fresh,replay")
    with pytest.raises(QttError, match="unknown scenario"):
        scenarios.parse(" , ")


def test_rebatched_splits_are_seeded_and_differ_from_the_fresh_batching() -> None:
    for count in range(2, 12):
        for key in ("a", "b", "c"):
            stateful = scenarios.rebatched(count, stateful=True, key=key)
            stateless = scenarios.rebatched(count, stateful=False, key=key)
            assert stateful == scenarios.rebatched(count, stateful=True, key=key)  # reproducible
            assert stateful is not None and stateless is not None
            assert not stateful[0] and not all(stateful[1:])  # joins two records somewhere
            assert any(stateless)  # splits the one batch somewhere
    assert scenarios.rebatched(1, stateful=True, key="a") is None


def _out(key: bytes, value: bytes | None, seq: int, batch: int = -1) -> OutputRecord:
    return OutputRecord("T", key.decode(), value, 0, seq, "Q", key_bytes=key, value_bytes=value, batch=batch)


def _result() -> CaseResult:
    return CaseResult("f.json", "case", "restart", Status.PASSED, kind="restart")


def test_a_restart_that_loses_an_output_or_a_state_change_fails() -> None:
    fresh = ReplayResult(outputs={"T": [_out(b"a", b"1", 0, 0), _out(b"a", b"2", 1, 1)]}, stateful=True)
    fresh.internal_topics = [InternalTopic("Q-S-changelog", "k", "v", [InternalRecord("a", 1, "update", 0, 0)])]
    lost = ReplayResult(outputs={"T": [_out(b"a", b"1", 0)]}, stateful=True)
    result = _result()
    scenarios._judge(scenarios.RESTART, result, fresh, lost, ["T"])
    assert result.status == Status.FAILED
    assert "restarted after every micro-batch" in result.reason and "outputs differ on T from record 1" in result.reason
    assert "internal topics differ from the uninterrupted run" in result.reason
    assert result.comparison is not None
    assert result.comparison.diffs[0].details == [
        "fresh 2 record(s), now 1",
        "first difference: an output of input 1 (inputs are numbered from 0), written in fresh micro-batch 1",
        "expected: the fresh replay; actual: the restart replay",
    ]


def test_a_stateful_rebatch_compares_final_tables_only() -> None:
    fresh = ReplayResult(outputs={"T": [_out(b"a", b"1", 0), _out(b"b", b"5", 1), _out(b"a", b"2", 2)]}, stateful=True)
    fewer = ReplayResult(outputs={"T": [_out(b"b", b"5", 1), _out(b"a", b"2", 2)]}, stateful=True)
    result = _result()
    scenarios._judge(scenarios.REBATCH, result, fresh, fewer, ["T"])
    assert result.status == Status.PASSED, result.reason
    wrong = ReplayResult(outputs={"T": [_out(b"a", b"2", 0), _out(b"b", b"6", 1, 0)]}, stateful=True)
    result = _result()
    scenarios._judge(scenarios.REBATCH, result, fresh, wrong, ["T"])
    assert result.status == Status.FAILED and "fed in other micro-batches" in result.reason
    assert result.comparison is not None
    assert result.comparison.diffs[0].details[0] == (
        "first difference: an output of input 1 (inputs are numbered from 0), written in rebatch micro-batch 0"
    )


CASES = {
    "tests": [
        {
            "name": "tripled",
            "statements": [
                "CREATE STREAM readings (id INT KEY, v INT) WITH (kafka_topic='readings', value_format='JSON');",
                "CREATE STREAM tripled AS SELECT id, v * 3 AS v3 FROM readings WHERE v > 0;",
            ],
            "inputs": [{"topic": "readings", "key": k, "value": {"v": v}} for k, v in [(1, 2), (2, -1), (1, 4)]],
            "outputs": [{"topic": "TRIPLED", "key": k, "value": {"V3": v}} for k, v in [(1, 6), (1, 12)]],
        },
        {
            "name": "totals",
            "comment": "HISTOGRAM's map comes back from the state store in its own key order, which later outputs show",
            "statements": [
                "CREATE STREAM readings (id INT KEY, v INT, tag VARCHAR) "
                "WITH (kafka_topic='readings', value_format='JSON');",
                "CREATE TABLE totals AS SELECT id, SUM(v) AS total, COUNT(*) AS n, HISTOGRAM(tag) AS tags "
                "FROM readings GROUP BY id;",
            ],
            "inputs": [
                {"topic": "readings", "key": k, "value": {"v": v, "tag": tag}}
                for k, v, tag in [(1, 2, "pear"), (2, 7, "fig"), (1, 4, "apple"), (1, 1, "pear")]
            ],
            "outputs": [
                {"topic": "TOTALS", "key": k, "value": {"TOTAL": t, "N": n, "TAGS": tags}}
                for k, t, n, tags in [
                    (1, 2, 1, {"pear": 1}),
                    (2, 7, 1, {"fig": 1}),
                    (1, 6, 2, {"pear": 1, "apple": 1}),
                    (1, 7, 3, {"pear": 2, "apple": 1}),
                ]
            ],
        },
    ]
}


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_every_scenario_runs_or_says_why_not(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "scenarios.json"
    path.write_text(json.dumps(CASES), encoding="utf-8")
    variants = list(load_file(path).variants)
    chosen = ("fresh", "restored", "restart", "rebatch", "batch")
    results = scenarios.run_scenarios(variants, chosen, lambda: spark)
    table = {(r.case, r.kind): r for r in results}
    assert [table[("tripled", k)].status for k in ("case", "restart", "rebatch")] == [Status.PASSED] * 3
    assert [table[("totals", k)].status for k in ("case", "restart", "rebatch")] == [Status.PASSED] * 3, [
        r.reason for r in results
    ]
    assert table[("totals", "restored")].status == Status.SKIPPED
    assert "stored checkpoint" in table[("totals", "restored")].reason
    assert [table[(case, "batch")].status for case in ("tripled", "totals")] == [Status.PASSED] * 2, [
        r.reason for r in results
    ]
    assert [run.starts for run in table[("totals", "batch")].replay.runs] == [1]  # type: ignore[union-attr]
    # the restart scenario really restarted: one query start per micro-batch, state compared
    restarted = table[("totals", "restart")].replay
    assert restarted is not None and restarted.internal_topics
    assert [run.starts for run in restarted.runs] == [4]
    assert [run.starts for run in table[("totals", "case")].replay.runs] == [1]  # type: ignore[union-attr]
    assert table[("totals", "restart")].variant == "restart"


def test_an_unknown_scenario_is_a_usage_error_that_lists_the_scenarios(capsys) -> None:  # type: ignore[no-untyped-def]
    from qtt.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["run", "--scenario", "restart,replay", "cases"])
    assert stopped.value.code == 2
    assert (
        "unknown scenario replay; the scenarios are fresh, restored, restart, rebatch, batch" in capsys.readouterr().err
    )
