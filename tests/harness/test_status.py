"""One status table: JSON strings, marks, and the counts every report prints."""

from __future__ import annotations

import json
from pathlib import Path

from qtt.harness import report
from qtt.harness.results import CaseResult
from qtt.harness.status import Status


def test_statuses_are_the_json_report_strings(tmp_path: Path) -> None:
    results = [CaseResult("f.json", f"c{i}", "", status) for i, status in enumerate(Status)]
    report.write_json(results, tmp_path / "r.json")
    rows = [json.loads(line) for line in (tmp_path / "r.json").read_text().splitlines()]
    assert [row["status"] for row in rows] == [
        "passed",
        "failed",
        "skipped",
        "error",
        "corrupt",
        "infrastructure error",
        "timed out",
        "quarantined",
    ]


def test_marks_and_counts_follow_the_table() -> None:
    results = [CaseResult("f.json", "a", "", Status.PASSED), CaseResult("f.json", "b", "", Status.ERROR)]
    assert report.file_lines(results) == [("f.json", ".E  1 passed, 1 error")]
    assert report.summary(results) == "1 passed, 0 failed, 0 skipped, 1 error"
    assert report.per_file(results) == [("f.json", "1 passed, 0 failed, 0 skipped, 1 error")]
    assert [s for s in Status if s.bad] == [
        Status.FAILED,
        Status.ERROR,
        Status.CORRUPT,
        Status.INFRA,
        Status.TIMED_OUT,
    ]


def test_a_failure_report_ends_with_the_results_own_hint() -> None:
    result = CaseResult(
        "f.json", "a", "JSON", Status.FAILED, reason="outputs differ", hint="rerun it alone: qtt run f.json -k a"
    )
    assert report.render_failure(result).splitlines() == [
        "FAILED f.json: a [JSON]: outputs differ",
        "hint: rerun it alone: qtt run f.json -k a",
    ]


def test_infrastructure_errors_are_counted_apart_and_only_when_there_are_some() -> None:
    results = [CaseResult("f.json", "a", "", Status.PASSED), CaseResult("f.json", "b", "", Status.INFRA)]
    assert report.file_lines(results) == [("f.json", ".I  1 passed, 1 infrastructure error")]
    assert report.summary(results) == "1 passed, 0 failed, 0 skipped, 0 error, 1 infrastructure error"
    assert report.summary(results[:1]) == "1 passed, 0 failed, 0 skipped, 0 error"


def test_a_corrupt_golden_is_counted_apart_and_fails_the_run() -> None:
    results = [CaseResult("f.json", "a", "", Status.PASSED), CaseResult("f.json", "b", "", Status.CORRUPT)]
    assert report.file_lines(results) == [("f.json", ".C  1 passed, 1 corrupt")]
    assert report.summary(results) == "1 passed, 0 failed, 0 skipped, 0 error, 1 corrupt"
    assert report.exit_status(results) == 1
    assert report.exit_status([results[1], CaseResult("f.json", "c", "", Status.INFRA)]) == 1


def test_exit_status_says_whether_anything_was_proven() -> None:
    def run(*statuses: Status) -> int:
        return report.exit_status(CaseResult("f.json", str(i), "", s) for i, s in enumerate(statuses))

    assert run(Status.PASSED, Status.SKIPPED) == 0
    assert run(Status.PASSED, Status.INFRA) == 3
    assert run(Status.FAILED, Status.INFRA) == 1
    assert run(Status.ERROR) == 1
