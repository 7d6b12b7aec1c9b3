"""The qtt command: help, exit statuses, the JSON report and the printed report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qtt import __version__
from qtt.cli import main
from qtt.harness.shard import Shard

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
        "--jsonl FILE",
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
    status, out, _ = run(capsys, "run", str(CASES / "named.json"), "--jsonl", str(report))
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
        "--jsonl",
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
        "--jsonl",
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
        "--jsonl",
        str(report),
    )
    assert status == 1
    assert "replayed 2/2 case variants" in err
    assert '  - expected: {"key": 1, "value": {"W": 9}}' in out
    assert '  + actual:   {"key": 1, "value": {"W": 8}}' in out
    rows = {json.loads(line)["case"]: json.loads(line)["status"] for line in report.read_text().splitlines()}
    assert rows == {"doubles": "passed", "doubles the wrong way": "failed"}
    passing = run(capsys, "run", str(CASES / "replays.json"))
    assert passing[0] == 0


def test_an_unsupported_feature_skips_with_the_feature_named(capsys, tmp_path):
    report = tmp_path / "report.json"
    status, out, _ = run(capsys, "run", str(CASES / "unsupported.json"), "--jsonl", str(report))
    assert status == 0
    (row,) = [json.loads(line) for line in report.read_text().splitlines()]
    assert row["status"] == "skipped"
    assert row["reason"].startswith("unsupported: ")
    assert f"SKIPPED {CASES / 'unsupported.json'}: re-keys a join: {row['reason']}" in out


REPO = Path(__file__).parents[1]
SYNTAX_ERROR = {
    "name": "cut short",
    "statements": ["CREATE STREAM s (k INT KEY, v INT) WITH (kafka_topic='t'"],
    "inputs": [{"topic": "t", "key": 1, "value": {"V": 1}}],
    "outputs": [],
}


def _cases(tmp_path: Path, *tests: dict[str, object], name: str = "c.json") -> Path:
    (tmp_path / "cases").mkdir(exist_ok=True)
    path = tmp_path / "cases" / name
    path.write_text(json.dumps({"tests": list(tests)}))
    return path


def test_check_with_no_cases_here_fails_and_says_why(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, "check")
    assert status == 2
    assert "nothing to check" in err
    (tmp_path / "empty").mkdir()
    assert run(capsys, "check", "empty")[0] == 2


def test_check_fails_on_a_case_that_does_not_load(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases").mkdir()
    shutil.copy(CASES / "broken.json", tmp_path / "cases")
    status, out, err = run(capsys, "check")
    assert status == 1
    assert "unknown field(s) 'ouputs'" in err
    assert out.endswith(" changed, 0 new, 0 unsupported, 1 expected error, 1 error\n")


def test_check_fails_on_sql_that_does_not_plan(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _cases(tmp_path, SYNTAX_ERROR)
    status, out, _ = run(capsys, "check")
    assert status == 1
    assert "ERROR cases/c.json: cut short: does not plan: " in out
    assert "0 up to date, 0 changed, 0 new, 0 unsupported, 0 expected error, 1 error" in out
    assert "hint: fix the statements, or declare the error the case expects (expectedException)" in out


def test_check_points_a_syntax_error_at_its_one_place_in_the_case_file(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stream = "CREATE STREAM s (k INT KEY, v STRING) WITH (kafka_topic='t', value_format='JSON');"
    bad = "CREATE STREAM o AS SELECT k, v FROM s\n WHERE v = 'x' AND AND v = 'y';"
    case = {"name": "and and", "statements": [stream, bad], "inputs": [{"topic": "t", "key": 1, "value": {}}]}
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "c.json").write_text(json.dumps({"tests": [case]}, indent=2))
    status, out, _ = run(capsys, "check")
    assert status == 1
    first, source, caret, *_ = out.splitlines()
    assert first.startswith(
        "ERROR cases/c.json: and and: does not plan: $.tests[0].statements[1]: line 7: statement line 2:20: "
        "Syntax Error: unexpected 'AND'; expecting {"
    )
    assert (source, caret) == ("     WHERE v = 'x' AND AND v = 'y';", "    " + " " * 19 + "^^^")
    assert "line 3:" not in out and "Statement:" not in out


def test_check_names_the_feature_of_an_unsupported_case_and_does_not_fail_on_it(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases").mkdir()
    shutil.copy(CASES / "unsupported.json", tmp_path / "cases")
    (tmp_path / "historical_plans").mkdir()
    status, out, _ = run(capsys, "check")
    assert status == 0, out
    assert out.splitlines() == [
        "UNSUPPORTED cases/unsupported.json: re-keys a join: a qualified * with PARTITION BY over a join",
        "0 up to date, 0 changed, 0 new, 1 unsupported, 0 expected error, 0 error",
    ]


def test_check_calls_a_case_never_persisted_new_and_counts_it_so(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stream = "CREATE STREAM s (k INT KEY, v INT) WITH (kafka_topic='t', value_format='JSON');"
    fresh = {"name": "fresh", "statements": [stream], "inputs": [{"topic": "t", "key": 1, "value": {"V": 1}}]}
    expects = {
        "name": "expects",
        "statements": ["CREATE STREAM o AS SELECT * FROM nowhere;"],
        "expectedException": {"type": "io.confluent.ksql.util.KsqlStatementException"},
    }
    _cases(tmp_path, fresh, expects)
    status, out, _ = run(capsys, "check")
    assert status == 1
    lines = out.splitlines()
    assert lines[0].startswith("NEW cases/c.json: fresh: never persisted: no plan under historical_plans/")
    assert "0 up to date, 0 changed, 1 new, 0 unsupported, 1 expected error, 0 error" in lines
    assert "EXPECTED ERROR" not in out
    status, out, _ = run(capsys, "check", "-v")
    assert (
        "EXPECTED ERROR cases/c.json: expects: no plan: the case expects an error "
        "(io.confluent.ksql.util.KsqlStatementException)"
    ) in out.splitlines()


def test_check_names_a_corrupt_newest_plan_and_does_not_advise_a_snapshot(capsys, tmp_path, monkeypatch):
    shutil.copytree(REPO / "cases", tmp_path / "cases")
    shutil.copytree(REPO / "historical_plans", tmp_path / "historical_plans")
    monkeypatch.chdir(tmp_path)
    plan_file = max(  # the newest: by the epoch milliseconds of its folder
        (tmp_path / "historical_plans").glob("aggregation__counts_sums*/*/plan.json"),
        key=lambda path: int(path.parent.name.rsplit("_", 1)[1]),
    )
    plan_file.write_text(plan_file.read_text()[:100])
    status, out, _ = run(capsys, "check", "cases/aggregation.json")
    assert status == 1
    corrupt = "CORRUPT cases/aggregation.json: counts sums and averages per station: the newest persisted plan is"
    corrupt += " corrupt"
    assert f"{corrupt}: {plan_file.relative_to(tmp_path)}: line " in out and "not valid JSON" in out
    assert "no plan was persisted before" not in out
    assert "git checkout --" in out and "qtt snapshot" not in out


@pytest.mark.parametrize("spelling", ["cases", "./cases", "absolute", "elsewhere"])
def test_check_finds_every_case_up_to_date_however_the_path_is_spelled(capsys, monkeypatch, tmp_path, spelling):
    monkeypatch.chdir(REPO)
    argv = ["check", str(REPO / "cases") if spelling in ("absolute", "elsewhere") else spelling]
    if spelling == "elsewhere":
        monkeypatch.chdir(tmp_path)
        argv += ["--historical", str(REPO / "historical_plans")]
    status, out, _ = run(capsys, *argv)
    assert status == 0, out
    assert "UNSUPPORTED" not in out
    assert "1083 up to date, 0 changed, 0 new, 0 unsupported, 733 expected error, 0 error" in out.splitlines()


def test_check_takes_k_like_run_and_snapshot(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    status, out, _ = run(capsys, "check", "-k", "counts sums and averages")
    assert status == 0, out
    assert "1 up to date, 0 changed, 0 new, 0 unsupported, 0 expected error, 0 error" in out.splitlines()
    status, _, err = run(capsys, "check", "-k", "no case is named like this")
    assert status == 2
    assert "-k 'no case is named like this' matches nothing" in err


def test_check_fails_on_a_historical_folder_that_differs_from_the_ledger(capsys, monkeypatch, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(REPO / "cases", project / "cases")
    shutil.copytree(REPO / "historical_plans", project / "historical_plans")
    monkeypatch.chdir(project)
    # a plan folder, not snapshot's staging folder (.qtt-staging, which a snapshot leaves behind)
    folder = sorted(p for p in (project / "historical_plans").glob("[!.]*/*") if p.is_dir())[0]
    (folder / "topology").write_text("changed by hand\n")
    status, out, _ = run(capsys, "check")
    assert status == 1
    assert f"CORRUPT {folder.relative_to(project)}: " in out
    assert "topology: its content differs from the ledger's hash" in out
    assert "1 corrupt historical folder(s)" in out
    assert "hint: restore it from version control (git checkout -- " in out


def test_check_refuses_cases_outside_the_project_of_the_historical_plans(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, "check", str(REPO / "cases"))
    assert status == 2
    assert "lie outside the project" in err and "--historical DIR" in err


def test_a_lone_surrogate_or_a_long_name_is_checked_without_a_crash(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    stream = "CREATE STREAM s (k INT KEY, v INT) WITH (kafka_topic='t', value_format='JSON');"
    case = {"statements": [stream], "inputs": [{"topic": "t", "key": 1, "value": {"V": 1}}], "outputs": []}
    _cases(tmp_path, {**case, "name": "lone \udcff surrogate"}, {**case, "name": "n" * 400}, name="s" * 200 + ".json")
    status, out, _ = run(capsys, "check")
    assert status == 1
    assert out.count("NEW ") == 2 and "0 up to date, 0 changed, 2 new," in out


def test_snapshot_with_nothing_to_read_fails_and_says_why(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, "snapshot")
    assert status == 2 and "nothing to snapshot" in err
    _cases(tmp_path, SYNTAX_ERROR)
    status, _, err = run(capsys, "snapshot", "-k", "no such case")
    assert status == 2 and "-k 'no such case' matches nothing" in err
    assert not (tmp_path / "historical_plans").exists()


def test_snapshot_reports_what_does_not_load_or_plan_without_starting_spark(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _cases(tmp_path, SYNTAX_ERROR)
    shutil.copy(CASES / "broken.json", tmp_path / "cases" / "broken.json")
    status, out, err = run(capsys, "snapshot", "--dry-run")
    assert status == 1
    assert "NOT SNAPSHOTTED cases/c.json: cut short: does not plan: " in out
    assert "unknown field(s) 'ouputs'" in err
    assert "qtt snapshot --dry-run: planning 2 case variant(s)" in err
    assert out.splitlines()[-1] == "1 not snapshotted, 1 skipped, 1 that do not load"


def _historical(tmp_path: Path, case: str) -> Path:
    """A historical root with one folder whose spec names ``case`` and whose plan is broken."""
    folder = tmp_path / "historical_plans" / "c__0123abcd" / "0.1.0_1700000000000"
    folder.mkdir(parents=True)
    (folder / "plan.json").write_text("{")
    (folder / "spec.json").write_text(json.dumps({"case": {"file": "cases/c.json", "name": case, "variant": ""}}))
    (folder / "topology").write_text("")
    return folder.parents[1]


def test_k_filters_historical_plans_in_run(capsys, tmp_path):
    root = _historical(tmp_path, "alpha")
    status, out, err = run(capsys, "run", str(root), "-k", "beta")
    assert status == 2
    assert "-k 'beta' matches nothing" in err
    status, out, err = run(capsys, "run", str(root), "-k", "ALPHA")
    assert status == 1 and "1 historical plan(s)" in err
    assert "1 variant(s): 0 passed, 0 failed, 0 skipped, 1 error" in out


def test_run_with_nothing_to_run_or_a_selection_of_nothing_fails(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    status, _, err = run(capsys, "run", str(tmp_path / "empty"))
    assert status == 2 and "nothing to run" in err
    status, _, err = run(capsys, "run", str(CASES / "named.json"), "-k", "no such case")
    assert status == 2 and "matches nothing" in err


@pytest.mark.parametrize("where", ["missing/report.json", "."])
def test_json_path_is_checked_before_anything_runs(capsys, tmp_path, where):
    status, out, err = run(capsys, "run", str(CASES / "named.json"), "--jsonl", str(tmp_path / where))
    assert status == 2
    assert err.startswith(f"qtt: --jsonl {tmp_path / where}: ")
    assert out == "" and "case variant(s)" not in err


@pytest.mark.parametrize("value", ["0/3", "4/3", "x"])
def test_a_bad_shard_is_a_usage_error_naming_the_option_value_and_form(capsys, value):
    with pytest.raises(SystemExit) as info:
        main(["run", str(CASES / "named.json"), "--shard", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --shard: {value!r}: " in err
    assert "expected K/N with 1 <= K <= N" in err


def _doubling_cases(folder: Path, files: int, cases: int) -> None:
    """``files`` case files of ``cases`` stateless cases each, every one replayed on Spark."""
    folder.mkdir()
    template = json.loads((CASES / "replays.json").read_text())["tests"][0]
    for f in range(files):
        tests = [{**template, "name": f"doubles {f}.{c}"} for c in range(cases)]
        (folder / f"doubles_{f}.json").write_text(json.dumps({"tests": tests}))


def test_the_shard_is_in_the_first_line_and_an_empty_shard_runs_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases").mkdir()
    shutil.copy(CASES / "named.json", tmp_path / "cases" / "named.json")  # expected errors: no Spark
    labels = ["Café filter — on délai & co [JSON]", "Café filter — on délai & co [KAFKA]", "twice", "twice"]
    holding = {k for k in range(1, 51) for label in labels if Shard(k, 50).holds(f"cases/named.json::{label}")}
    k = min(holding)
    status, _, err = run(capsys, "run", "cases", "--shard", f"{k}/50")
    assert status == 0
    assert err.startswith(f"qtt {__version__} shard {k}/50: ")
    empty = min(set(range(1, 51)) - holding)
    status, _, err = run(capsys, "run", "cases", "--shard", f"{empty}/50")
    assert status == 0
    assert f"qtt run: shard {empty}/50 holds none of the 4 selected item(s); nothing to run" in err


@pytest.mark.spark
def test_three_shards_through_the_cli_run_every_variant_exactly_once(capsys, tmp_path, monkeypatch, spark):
    monkeypatch.chdir(tmp_path)
    _doubling_cases(tmp_path / "cases", files=2, cases=4)
    ran: list[tuple[str, str]] = []
    for k in (1, 2, 3):
        report = tmp_path / f"shard{k}.json"
        status, _, err = run(capsys, "run", "cases", "--shard", f"{k}/3", "--jsonl", str(report))
        assert status == 0, err
        assert err.startswith(f"qtt {__version__} shard {k}/3: ")
        ran += [(row["file"], row["case"]) for row in map(json.loads, report.read_text().splitlines())]
    assert sorted(ran) == sorted((f"cases/doubles_{f}.json", f"doubles {f}.{c}") for f in range(2) for c in range(4))


def test_sql_test_files_run_beside_case_files_and_a_bad_one_names_its_line(capsys, tmp_path):
    refused = tmp_path / "refused.sql"
    refused.write_text(
        "--@test: a re-keyed query is refused\n"
        "--@expected.error: io.confluent.ksql.util.KsqlException\n"
        "--@expected.message: Key columns must be identical\n"
        "CREATE STREAM a (id INT KEY, x INT) WITH (kafka_topic='a', value_format='JSON');\n"
        "CREATE STREAM b AS SELECT * FROM a PARTITION BY x;\n"
        "CREATE OR REPLACE STREAM b AS SELECT * FROM a PARTITION BY id;\n"
    )
    status, out, err = run(capsys, "run", str(tmp_path))  # judged while planning: no Spark starts
    assert status == 0, out
    assert "1 SQL test(s)" in err
    assert f"{refused} .  1 passed" in out
    (tmp_path / "typo.sql").write_text("--@test: t\n--@expect.error: x\n")
    status, out, _ = run(capsys, "run", str(tmp_path))
    assert status == 1
    assert "typo.sql: (file): line 2: unknown directive '--@expect.error:'" in out


def test_a_sql_test_under_another_scenario_is_skipped_with_the_reason(capsys, tmp_path):
    (tmp_path / "one.sql").write_text("--@test: planned only\nSET 'a'='b';\n")
    status, out, _ = run(capsys, "run", str(tmp_path), "--scenario", "restart")
    assert status == 0
    assert "SKIPPED" in out and "a SQL test runs fresh" in out
    assert "1 variant(s): 0 passed, 0 failed, 1 skipped" in out


def test_the_command_line_starts_without_the_heavy_libraries(modules_loaded_by):
    # --help and usage errors answer at once: deepdiff (and pandas under it) and pyspark load
    # only when a command needs them
    loaded = modules_loaded_by("qtt.cli")
    assert not {"deepdiff", "pandas", "pyspark"} & loaded
