"""One status table: JSON strings, marks, and the counts every report prints."""

from __future__ import annotations

import json
from pathlib import Path

from qtt.harness import report
from qtt.harness.runner import CaseResult
from qtt.harness.status import Status


def test_statuses_are_the_json_report_strings(tmp_path: Path) -> None:
    results = [CaseResult("f.json", f"c{i}", "", status) for i, status in enumerate(Status)]
    report.write_json(results, tmp_path / "r.json")
    rows = [json.loads(line) for line in (tmp_path / "r.json").read_text().splitlines()]
    assert [row["status"] for row in rows] == ["passed", "failed", "skipped", "error"]


def test_marks_and_counts_follow_the_table() -> None:
    results = [CaseResult("f.json", "a", "", Status.PASSED), CaseResult("f.json", "b", "", Status.ERROR)]
    assert report.file_lines(results) == [("f.json", ".E  1 passed, 1 error")]
    assert report.summary(results) == "1 passed, 0 failed, 0 skipped, 1 error"
    assert report.per_file(results) == [("f.json", "1 passed, 0 failed, 0 skipped, 1 error")]
    assert [s for s in Status if s.bad] == [Status.FAILED, Status.ERROR]


def test_a_failure_report_ends_with_the_results_own_hint() -> None:
    result = CaseResult(
        "f.json", "a", "JSON", Status.FAILED, reason="outputs differ", hint="rerun it alone: qtt run f.json -k a"
    )
    assert report.render_failure(result).splitlines() == [
        "FAILED f.json: a [JSON]: outputs differ",
        "hint: rerun it alone: qtt run f.json -k a",
    ]
