"""The benchmark's report: every figure printed, with its ratio to the floor (no Spark)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from qtt import bench


def _result(status: str, seconds: float, stateful: bool | None) -> SimpleNamespace:
    replay = None if stateful is None else SimpleNamespace(stateful=stateful)
    return SimpleNamespace(status=status, seconds=seconds, replay=replay)


def test_render_reports_cases_and_historical_plans_apart(tmp_path) -> None:
    figures = bench.Figures(jvm_start=8.0, query_start=1.5, micro_batch=0.5)
    cases = figures.sections[bench.CASES] = bench.Section(count=3, wall=30.0)
    for result in [_result("passed", 1.0, False), _result("passed", 4.0, True), _result("skipped", 0.0, None)]:
        cases.add(result)
    plans = figures.sections[bench.HISTORICAL] = bench.Section(count=1, wall=2.0)
    plans.add(_result("passed", 2.0, False))

    text = bench.render(figures)
    assert "JVM and SparkSession start" in text and "4.00 x floor" in text
    assert "median per case variant (n=3)" in text and "0.50 x floor" in text  # median 1.0 / floor 2.0
    assert "median per stateful case variant (n=1)" in text
    assert "median per stateless historical plan (n=1)" in text
    assert "case variants per minute" in text and "6.00" in text
    assert "statuses: 2 passed, 1 skipped" in text

    bench.write_json(figures, tmp_path / "b.json")
    written = json.loads((tmp_path / "b.json").read_text())
    assert written["case_variants"]["groups"]["stateful"] == {"n": 1, "median_s": 4.0}
    assert written["historical_plans"]["per_minute"] == 30.0
