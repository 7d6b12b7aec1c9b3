"""The qtt command: help, exit statuses, the JSON report and the printed report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.cli import main

CASES = Path(__file__).parent / "fixtures" / "cases"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_help_explains_the_command(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "run" in out
    assert "replay every case under ./cases" in out


def test_run_help_explains_options_and_exit_statuses(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "--help"])
    assert info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for text in (
        "--json FILE",
        "-k TEXT",
        "Exit status: 0 when nothing failed, 1 when a variant failed",
        "2 on a usage error",
    ):
        assert text in out


def test_no_command_prints_help_and_is_a_usage_error(capsys):
    status, out, _ = run(capsys)
    assert status == 2
    assert "usage: qtt" in out


def test_unknown_option_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "--no-such-option"])
    assert info.value.code == 2


def test_a_missing_path_is_a_usage_error(capsys, tmp_path):
    status, _, err = run(capsys, "run", str(tmp_path / "nowhere.json"))
    assert status == 2
    assert "no such file or directory" in err


def test_all_passing_exits_zero_and_writes_the_json_report(capsys, tmp_path):
    report = tmp_path / "report.json"
    status, out, _ = run(capsys, "run", str(CASES / "named.json"), "--json", str(report))
    assert status == 0
    assert f"{CASES / 'named.json'} ....  4 passed" in out
    assert "4 variant(s): 4 passed, 0 failed, 0 skipped, 0 error" in out
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert len(rows) == 4
    assert {"file", "case", "variant", "status", "reason", "seconds"} <= set(rows[0])
    assert [(r["case"], r["variant"], r["status"]) for r in rows] == [
        ("Café filter — on délai & co", "JSON", "passed"),
        ("Café filter — on délai & co", "KAFKA", "passed"),
        ("twice", "", "passed"),
        ("twice", "", "passed"),
    ]
    assert all(isinstance(r["seconds"], float) for r in rows)


def test_a_failure_exits_one_and_prints_the_report(capsys, tmp_path):
    report = tmp_path / "report.json"
    status, out, _ = run(
        capsys,
        "run",
        str(CASES / "wrong_exception.json"),
        str(CASES / "named.json"),
        "--json",
        str(report),
    )
    assert status == 1
    assert "FAILED" in out and "expects an error that never comes" in out
    assert "hint: rerun it alone: qtt run" in out
    statuses = [json.loads(line)["status"] for line in report.read_text().splitlines()]
    assert statuses == ["failed", "passed", "passed", "passed", "passed"]


def test_a_broken_case_is_an_error_and_the_rest_still_run(capsys, tmp_path):
    report = tmp_path / "report.json"
    status, out, _ = run(
        capsys,
        "run",
        str(CASES / "broken.json"),
        str(CASES / "unloadable.json"),
        "--json",
        str(report),
    )
    assert status == 1
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert sorted((r["case"], r["status"]) for r in rows) == [
        ("(file)", "error"),
        ("misspelt outputs", "error"),
        ("still runs", "passed"),
    ]
    assert "unknown field(s) 'ouputs'" in out


def test_k_filters_case_names_ignoring_case(capsys):
    status, out, err = run(capsys, "run", str(CASES / "named.json"), "-k", "TWICE")
    assert status == 0
    assert "2 variant(s): 2 passed" in out
    assert "2 case variant(s) in 1 file(s)" in err


@pytest.mark.spark
def test_replays_report_pass_and_fail(capsys, tmp_path, spark):
    report = tmp_path / "report.json"
    status, out, err = run(
        capsys,
        "run",
        str(CASES / "replays.json"),
        str(CASES / "wrong_output.json"),
        "--json",
        str(report),
    )
    assert status == 1
    assert "replayed 2/2 queries" in err
    assert '  - expected: {"key": 1, "value": {"W": 9}}' in out
    assert '  + actual:   {"key": 1, "value": {"W": 8}}' in out
    rows = {json.loads(line)["case"]: json.loads(line)["status"] for line in report.read_text().splitlines()}
    assert rows == {"doubles": "passed", "doubles the wrong way": "failed"}
    passing = run(capsys, "run", str(CASES / "replays.json"))
    assert passing[0] == 0


def test_an_unsupported_feature_skips_with_the_feature_named(capsys, tmp_path):
    report = tmp_path / "report.json"
    status, out, _ = run(capsys, "run", str(CASES / "unsupported.json"), "--json", str(report))
    assert status == 0
    (row,) = [json.loads(line) for line in report.read_text().splitlines()]
    assert row["status"] == "skipped"
    assert row["reason"].startswith("unsupported: ")
    assert f"SKIPPED {CASES / 'unsupported.json'}: adds a column: {row['reason']}" in out
