"""run_groups: nothing to run starts nothing; a group that cannot be built ends its own replays, not the run."""

from __future__ import annotations

from typing import Any

import pytest

from qtt.runtime.execute.executor import run_groups


def test_no_groups_yield_nothing_and_build_nothing() -> None:
    session: Any = None  # never touched without a group
    assert list(run_groups(session, [], [])) == []


def _variants(tmp_path: Any, *names: str) -> list[Any]:
    import json

    from qtt.harness.selection import load_variants

    stream = "CREATE STREAM s (k INT KEY, v INT) WITH (kafka_topic='t', value_format='JSON');"
    cases = [
        {
            "name": name,
            "statements": [stream, f"CREATE STREAM {name} AS SELECT k, v + {n} AS w FROM s;"],
            "inputs": [{"topic": "t", "key": 1, "value": {"v": 1}}],
            "outputs": [{"topic": name.upper(), "key": 1, "value": {"W": 1 + n}}],
        }
        for n, name in enumerate(names)
    ]
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"tests": cases}))
    variants, _ = load_variants([str(path)])
    return variants


@pytest.mark.spark
def test_a_build_that_fails_with_no_qtt_error_ends_one_replay_not_the_run(spark, tmp_path, monkeypatch) -> None:
    from qtt.harness.session import Kind, run_items
    from qtt.runtime.execute import executor

    real = executor._source

    def flaky(session: Any, jobs: Any, checkpoint: str) -> Any:
        # a bug of qtt's in the group: it breaks whenever the job of case "broken" is in it
        if any(job.query.query_id.startswith("CSAS_BROKEN") for job in jobs):
            raise ValueError("precision should be between 1 and 38")
        return real(session, jobs, checkpoint)

    monkeypatch.setattr(executor, "_source", flaky)
    results = run_items(Kind.CASES, _variants(tmp_path, "fine", "broken", "also_fine"), lambda: spark)
    by_case = {result.case: result for result in results}
    assert by_case["fine"].status == "passed" and by_case["also_fine"].status == "passed"
    assert by_case["broken"].status == "error"
    assert "qtt could not build the query of this replay: ValueError: precision should be" in by_case["broken"].reason
