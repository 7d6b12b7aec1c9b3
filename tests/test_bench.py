"""The benchmark's report: every figure printed, with its ratio to the floor (no Spark)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from qtt import bench


def _result(
    status: str, seconds: float, stateful: bool | None, *, windowed: bool = False, joins: bool = False
) -> SimpleNamespace:
    outputs = {"T": [SimpleNamespace(window=SimpleNamespace(start=0, end=10, type="time") if windowed else None)]}
    steps = {"CSAS_T_0": {"KafkaTopic_Left/Source": "", **({"Join": ""} if joins else {}), "Project": ""}}
    replay = None if stateful is None else SimpleNamespace(stateful=stateful, outputs=outputs, step_schemas=steps)
    return SimpleNamespace(status=status, seconds=seconds, replay=replay)


def test_render_reports_cases_and_historical_plans_apart(tmp_path) -> None:
    figures = bench.Figures(jvm_start=8.0, query_start=1.5, micro_batch=0.5)
    cases = figures.sections[bench.CASES] = bench.Section(count=3, wall=30.0)
    for result in [_result("passed", 1.0, False), _result("passed", 4.0, True), _result("skipped", 0.0, None)]:
        cases.add(result)
    plans = figures.sections[bench.HISTORICAL] = bench.Section(count=2, wall=4.0)
    plans.add(_result("passed", 2.0, False))
    plans.add(_result("passed", 6.0, True, windowed=True))
    plans.add(_result("passed", 3.0, True, joins=True))

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
    # windowed aggregations (stateful, windowed keys) get a median of their own
    assert written["historical_plans"]["groups"]["windowed"] == {"n": 1, "median_s": 6.0}
    assert "median per windowed historical plan (n=1)" in text
    # joins get one too
    assert written["historical_plans"]["groups"]["join"] == {"n": 1, "median_s": 3.0}


def test_a_spark_that_cannot_run_is_a_line_of_the_report_and_a_non_zero_exit(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def no_spark() -> None:
        raise RuntimeError("[JAVA_GATEWAY_EXITED] Java gateway process exited before sending its port number.")

    monkeypatch.setattr("qtt.harness.replay.runner.spark_session", no_spark)
    lines: list[str] = []
    figures = bench.run(["cases"], log=lines.append)
    assert lines == ["starting Spark", f"infrastructure error: {figures.errors[0].split(': ', 1)[1]}"]
    assert "Java gateway process exited" in figures.errors[0]
    assert figures.exit_status == 3
    assert bench.render(figures).splitlines()[-1].startswith("  infrastructure error: Spark did not start")
    assert bench.Figures().exit_status == 0


def test_format_batches_pair_each_case_with_its_json_variant() -> None:
    from types import SimpleNamespace

    from qtt.bench import format_batches

    def variant(case: str, fmt: str) -> SimpleNamespace:
        return SimpleNamespace(file="f.json", case=case, variant=fmt)

    variants = [
        variant("a", "JSON"),
        variant("a", "AVRO"),
        variant("b", "AVRO"),
        variant("c", ""),
        variant("d", "JSON"),
    ]
    batches = format_batches(variants)
    assert list(batches) == ["JSON", "AVRO"], "JSON first: the baseline"
    assert [v.case for v in batches["AVRO"]] == ["a"], "only cases that also run as JSON"
    assert [v.case for v in batches["JSON"]] == ["a"], "only cases that also run in a registry format"


def test_render_compares_the_restored_median_with_the_stateful_one() -> None:
    figures = bench.Figures(jvm_start=8.0, query_start=1.5, micro_batch=0.5)
    stateful = figures.sections[bench.STATEFUL] = bench.Section(count=2, wall=8.0)
    for seconds in (3.0, 5.0):
        stateful.add(_result("passed", seconds, True))
    restored = figures.sections[bench.RESTORED] = bench.Section(count=1, wall=6.0)
    restored.add(_result("passed", 6.0, True))
    text = bench.render(figures)
    assert "median per restored checkpoint (n=1)" in text
    # the stateful plans' own "stateful" group is the section itself: one line, not two
    assert text.count("median per stateful plan") == 1
    assert "restored checkpoint / stateful plan median" in text and " 1.50 x" in text
