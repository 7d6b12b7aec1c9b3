"""`qtt run`'s daily-loop options: -v, -x, --lf, --jsonl, the header, and plans out of date.

The cases here fail or pass before any replay starts (an expected error that never comes, an
expected error that comes), so no Spark is needed but where a test is marked.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qtt.cli import main
from qtt.harness import lastfailed
from qtt.harness.session import select, stale_plans

REPO = Path(__file__).parents[1]
CASES = REPO / "tests" / "fixtures" / "cases"
FAILS = str(CASES / "wrong_exception.json")  # one case, fails without a replay
PASSES = str(CASES / "named.json")  # four variants, each raises as expected


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_verbose_prints_one_line_per_variant_with_its_seconds(capsys):
    status, out, _ = run(capsys, "run", PASSES, "-v")
    assert status == 0
    lines = [line for line in out.splitlines() if line.startswith("PASSED ")]
    assert len(lines) == 4
    assert lines[2].startswith(f"PASSED {PASSES}: twice (") and lines[2].endswith("s)")


def test_exitfirst_stops_after_the_first_file_with_a_failure(capsys):
    status, out, _ = run(capsys, "run", FAILS, PASSES, "-x")
    assert status == 1
    assert "1 variant(s): 0 passed, 1 failed" in out
    assert "stopped at the first failure (-x): 4 selected item(s) not run" in out
    status, out, _ = run(capsys, "run", PASSES, FAILS, "-x")
    assert status == 1
    assert "5 variant(s): 4 passed, 1 failed" in out and "not run" not in out


def test_last_failed_reruns_only_the_cases_that_failed(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv(lastfailed.CACHE_ENV, str(tmp_path / "cache"))
    status, _, err = run(capsys, "run", FAILS, PASSES, "--lf")
    assert status == 1
    assert "--lf: no failure is recorded; running everything selected" in err
    status, out, err = run(capsys, "run", FAILS, PASSES, "--lf")
    assert status == 1
    assert "1 case variant(s) in 2 file(s)" in err
    assert "1 variant(s): 0 passed, 1 failed" in out
    status, out, _ = run(capsys, "run", PASSES, "--lf")  # the failure is not selected: everything runs
    assert status == 0 and "4 variant(s): 4 passed" in out
    assert lastfailed.load() == {(FAILS, "expects an error that never comes")}, "a run forgets only what it ran"


def test_the_cache_forgets_a_case_that_passes_and_keeps_one_that_did_not_run(tmp_path):
    from qtt.harness.results import CaseResult
    from qtt.harness.status import Status

    cache = tmp_path / "cache"
    assert lastfailed.load(cache) is None
    lastfailed.record(
        [CaseResult("a.json", "x", "", Status.FAILED), CaseResult("b.json", "y", "", Status.ERROR)], cache
    )
    assert lastfailed.load(cache) == {("a.json", "x"), ("b.json", "y")}
    lastfailed.record([CaseResult("a.json", "x", "", Status.PASSED)], cache)
    assert lastfailed.load(cache) == {("b.json", "y")}
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    (cache / lastfailed.FILE_NAME).write_text("{not json")
    assert lastfailed.load(cache) is None


def test_jsonl_writes_json_lines_and_json_is_its_former_name(capsys, tmp_path):
    report = tmp_path / "report.jsonl"
    status, _, err = run(capsys, "run", PASSES, "--jsonl", str(report))
    assert status == 0 and "now called --jsonl" not in err
    assert [json.loads(line)["status"] for line in report.read_text().splitlines()] == ["passed"] * 4
    status, _, err = run(capsys, "run", PASSES, "--json", str(report))
    assert status == 0
    assert "--json writes JSON Lines and is now called --jsonl" in err
    status, _, err = run(capsys, "run", PASSES, "--jsonl", str(tmp_path / "no" / "r.jsonl"))
    assert status == 2 and "--jsonl " in err and "does not exist" in err


def test_the_header_counts_the_stored_checkpoints_a_run_restores(capsys, tmp_path):
    root = REPO / "historical_plans"
    with_checkpoint = sorted(f.parent for f in root.glob("*/*/checkpoint.json"))[0]
    chosen = select([str(with_checkpoint.parent)])
    assert chosen.restorable() and set(chosen.restorable()) <= set(chosen.folders)


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(REPO / "cases", tmp_path / "cases", ignore=shutil.ignore_patterns("*.sql"))
    shutil.copytree(REPO / "historical_plans", tmp_path / "historical_plans")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "cases" / "filters.json"


def test_a_changed_plan_is_a_stale_plan_of_the_run(tmp_path, monkeypatch):
    cases = _project(tmp_path, monkeypatch)
    assert stale_plans(select(["cases/filters.json"])) == []
    cases.write_text(cases.read_text().replace("WHERE (minutes > 30 AND member)", "WHERE (minutes > 31 AND member)"))
    (stale,) = stale_plans(select(["cases/filters.json"]))
    assert (stale.case, stale.kind, stale.status) == ("and or not with three valued logic", "plan", "failed")
    assert stale.reason.startswith("plan changed: ")
    assert any("31" in line for line in stale.reason.splitlines()[1:]), "the step diff is shown"
    assert "qtt snapshot" in stale.hint


def test_cases_outside_the_projects_cases_and_projects_without_plans_are_not_checked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases").mkdir()
    shutil.copy(REPO / "cases" / "filters.json", tmp_path / "cases")
    assert stale_plans(select(["cases"])) == [], "no historical_plans/: nothing to be stale against"
    (tmp_path / "historical_plans").mkdir()
    never = stale_plans(select(["cases"]))
    assert never and all(s.kind == "plan" and "qtt snapshot" in s.hint for s in never), "never persisted: stale"
    assert stale_plans(select([str(REPO / "cases" / "filters.json")])) == [], "not this project's case"


@pytest.mark.spark
def test_run_fails_on_a_plan_out_of_date_as_pytest_does(capsys, tmp_path, monkeypatch, spark):
    cases = _project(tmp_path, monkeypatch)
    status, out, _ = run(capsys, "run", "cases/filters.json", "-k", "three valued")
    assert status == 0, out
    cases.write_text(cases.read_text().replace("minutes > 30 AND member", "minutes >= 30 AND member"))
    status, out, _ = run(capsys, "run", "cases/filters.json", "-k", "three valued", "--jsonl", "r.jsonl")
    assert status == 1
    assert "1 variant(s): 1 passed" in out
    assert "FAILED cases/filters.json: and or not with three valued logic: plan changed: " in out
    assert "1 plan(s) out of date: `qtt snapshot` persists them" in out
    kinds = [json.loads(line)["kind"] for line in Path("r.jsonl").read_text().splitlines()]
    assert kinds == ["case", "plan"]
