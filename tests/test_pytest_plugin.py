"""The pytest plugin, driven through nested pytest runs (pytester)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

FIXTURES = Path(__file__).parent / "fixtures" / "cases"
REPO = Path(__file__).parents[1]


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A project directory with an ini file (so it is the rootdir) and an empty cases/ folder."""
    pytester.makeini("[pytest]\n")
    (pytester.path / "cases").mkdir()
    # subprocess runs must import this worktree's qtt, as the in-process runs do
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return pytester


def add_cases(project: pytest.Pytester, *names: str) -> None:
    for name in names:
        shutil.copy(FIXTURES / name, project.path / "cases" / name)


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_one_item_per_variant_with_ascii_space_free_ids(project):
    add_cases(project, "named.json")
    result = project.runpytest("--collect-only", "-q")
    ids = collected(result)
    assert ids == [
        "cases/named.json::Cafe_filter_on_delai_co[JSON]",
        "cases/named.json::Cafe_filter_on_delai_co[KAFKA]",
        "cases/named.json::twice",
        "cases/named.json::twice-2",
    ]
    assert all(i.isascii() and " " not in i for i in ids)


def test_k_selects_variants(project):
    add_cases(project, "named.json")
    result = project.runpytest("--collect-only", "-q", "-k", "KAFKA or twice-2")
    assert collected(result) == [
        "cases/named.json::Cafe_filter_on_delai_co[KAFKA]",
        "cases/named.json::twice-2",
    ]


def test_expected_exception_cases_run_without_spark(project):
    add_cases(project, "named.json")
    result = project.runpytest("-q")
    result.assert_outcomes(passed=4)


def test_a_failure_is_a_report_not_a_traceback(project):
    add_cases(project, "wrong_exception.json")
    result = project.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "FAILED cases/wrong_exception.json: expects an error that never comes: expected "
            "io.confluent.ksql.util.KsqlStatementException containing 'no such luck', "
            "but every statement planned",
            "hint: rerun it alone: pytest cases/wrong_exception.json::expects_an_error_that_never_comes",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "def runtest" not in result.stdout.str()


def test_a_broken_case_fails_only_its_own_item(project):
    add_cases(project, "broken.json", "unloadable.json")
    result = project.runpytest("-q", "-rA")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*case: misspelt outputs (does not load)*",
            "ERROR cases/broken.json: case 'misspelt outputs': $.tests[0].ouputs: line 7: "
            "unknown field(s) 'ouputs' Did you mean 'outputs'?",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*case file: unloadable.json (does not load)*",
            "ERROR cases/unloadable.json: line 3:1: not valid JSON*",
        ]
    )
    result.stdout.fnmatch_lines(["PASSED cases/broken.json::still_runs"])
    assert "Traceback" not in result.stdout.str()


def test_collection_never_imports_pyspark(project):
    add_cases(project, "named.json", "broken.json", "wrong_output.json")
    project.makeconftest(
        "import sys\n"
        "def pytest_collection_finish(session):\n"
        "    print('PYSPARK_IMPORTED=%s' % ('pyspark' in sys.modules))\n"
    )
    result = project.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["PYSPARK_IMPORTED=False"])
    assert len(collected(result)) == 7


@pytest.mark.parametrize("spelling", ["--qtt-cases={}", "--qtt-cases {}"])
def test_qtt_cases_collects_another_directory(project, tmp_path_factory, spelling):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    shutil.copy(FIXTURES / "extra.json", elsewhere / "extra.json")
    add_cases(project, "wrong_exception.json")
    result = project.runpytest("--collect-only", "-q", *spelling.format(elsewhere).split(" "))
    ids = collected(result)
    assert len(ids) == 2, ids
    assert any(i.endswith("cases/wrong_exception.json::expects_an_error_that_never_comes") for i in ids)
    assert any(i.endswith("extra.json::from_elsewhere") for i in ids)


def test_json_files_outside_the_case_roots_are_not_collected(project):
    (project.path / "data.json").write_text('{"not": "a case file"}')
    add_cases(project, "wrong_exception.json")
    result = project.runpytest("--collect-only", "-q")
    assert collected(result) == ["cases/wrong_exception.json::expects_an_error_that_never_comes"]


@pytest.mark.spark
def test_a_wrong_output_shows_the_labelled_per_topic_diff(project):
    add_cases(project, "wrong_output.json")
    # in a subprocess: an in-process run forgets the pyspark modules it imported while the
    # JVM's session outlives it, and a later test of this process would meet two Column classes
    result = project.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "FAILED cases/wrong_output.json: doubles the wrong way: outputs differ on OUT",
            "topic OUT: first difference at record 0 of OUT, counting from 0 "
            "(expected: outputs[0], cases/wrong_output.json line 10)",
            "  record 0: ['value']['W']: expected 9, got 8",
            '  - expected: {"key": 1, "value": {"W": 9}}',
            '  + actual:   {"key": 1, "value": {"W": 8}}',
            "hint: *",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_plan_checks_and_historical_folders_are_items(project):
    add_cases(project, "named.json")
    historical = project.path / "historical_plans"
    (historical / "some_case__abcd1234" / "0.1.0_1700000000000").mkdir(parents=True)
    result = project.runpytest("--collect-only", "-q")
    ids = collected(result)
    assert "historical_plans::some_case__abcd1234/0.1.0_1700000000000" in ids
    assert any(i.endswith("@plan") for i in ids)
    assert all(" " not in i and i.isascii() for i in ids)


def test_not_spark_leaves_only_the_items_that_need_no_spark(project):
    add_cases(project, "named.json")
    historical = project.path / "historical_plans"
    (historical / "some_case__abcd1234" / "0.1.0_1700000000000").mkdir(parents=True)
    ids = collected(project.runpytest("--collect-only", "-q", "-m", "not spark"))
    assert ids and all(i.endswith("@plan") for i in ids)


def test_a_stale_plan_fails_with_the_step_diff_and_the_fix(project):
    add_cases(project, "replays.json")
    (project.path / "historical_plans").mkdir()
    result = project.runpytest("-q", "-k", "plan")
    assert "no plan was persisted before" in result.stdout.str()
    assert "hint: run `qtt snapshot`" in result.stdout.str()
    assert "Traceback" not in result.stdout.str()


def test_a_corrupt_historical_folder_fails_only_itself(project):
    folder = project.path / "historical_plans" / "broken__abcd1234" / "0.1.0_1700000000000"
    folder.mkdir(parents=True)
    (folder / "plan.json").write_text('{"config": {}, "statements": [{"@type": "ksqlPlanV9"}]}\n')
    (folder / "spec.json").write_text("{}\n")
    (folder / "topology").write_text("")
    other = project.path / "historical_plans" / "broken__abcd1234" / "0.1.0_1700000000001"
    other.mkdir()
    result = project.runpytest("-q", "-p", "no:randomly")
    text = result.stdout.str()
    assert "plan.json" in text and "unknown statement plan type 'ksqlPlanV9'" in text
    assert "plan.json is missing" in text
    result.assert_outcomes(failed=2)


def test_plan_checks_hash_the_case_path_as_qtt_check_does(project):
    """The project (the directory holding the historical plans) need not be the rootdir."""
    from qtt.harness.cases.loader import load_file
    from qtt.harness.cases.slugs import case_slug
    from qtt.harness.replay.runner import plan_variant
    from qtt.plan.ir import codec

    project.makeini("[pytest]\nqtt_cases = sub/cases\nqtt_historical_plans = sub/historical_plans\n")
    (project.path / "sub" / "cases").mkdir(parents=True)
    shutil.copy(FIXTURES / "replays.json", project.path / "sub" / "cases" / "replays.json")
    variants = load_file(project.path / "sub" / "cases" / "replays.json").variants
    for variant in variants:
        slug = case_slug("cases/replays.json", variant.case, variant.variant)
        folder = project.path / "sub" / "historical_plans" / slug / "0.1.0_1700000000000"
        folder.mkdir(parents=True)
        (folder / "plan.json").write_text(codec.dumps(plan_variant(variant).plan))
    result = project.runpytest("-q", "-k", "plan", "-m", "not spark")
    result.assert_outcomes(passed=len(variants))


def test_qtt_shard_deselects_and_the_three_shards_partition_the_items(project):
    add_cases(project, "named.json")  # expected errors: no Spark
    project.makepyfile(test_units="\n".join(f"def test_{i}(): pass" for i in range(12)))
    everything = collected(project.runpytest("--collect-only", "-q"))
    assert len(everything) == 16
    ran: list[str] = []
    for k in (1, 2, 3):
        result = project.runpytest("--collect-only", "-q", "--qtt-shard", f"{k}/3")
        mine = collected(result)
        assert 0 < len(mine) < 16
        assert f"{len(mine)}/16 tests collected ({16 - len(mine)} deselected)" in result.stdout.str()
        ran += mine
    assert sorted(ran) == sorted(everything)


@pytest.mark.parametrize("value", ["0/3", "4/3", "x"])
def test_a_bad_qtt_shard_is_a_usage_error(project, value):
    result = project.runpytest("--collect-only", "-q", "--qtt-shard", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--qtt-shard {value!r}: " in result.stderr.str()
    assert "expected K/N with 1 <= K <= N" in result.stderr.str()


def test_qtt_scenario_adds_an_item_per_variant_and_scenario(project):
    add_cases(project, "named.json")
    plain = collected(project.runpytest("--collect-only", "-q"))
    result = project.runpytest("--collect-only", "-q", "--qtt-scenario", "fresh,restart,rebatch")
    ids = collected(result)
    assert len(ids) == 3 * len(plain)
    assert [i for i in ids if i.endswith("[restart]")] == [f"{i}[restart]" for i in plain]
    only = collected(project.runpytest("--collect-only", "-q", "--qtt-scenario", "rebatch"))
    assert only == [f"{i}[rebatch]" for i in plain]


def test_an_unknown_qtt_scenario_is_a_usage_error(project):
    result = project.runpytest("--collect-only", "-q", "--qtt-scenario", "sideways")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--qtt-scenario: unknown scenario sideways; the scenarios are fresh*"])


def test_a_skip_points_at_the_case_not_at_the_plugin(project):
    add_cases(project, "unsupported.json")
    (project.path / "historical_plans").mkdir()
    result = project.runpytest("-q", "-rs", "-m", "not spark")
    skips = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert skips, result.outlines
    assert all("cases/unsupported.json:" in line and "pytest_plugin" not in line for line in skips), skips


def test_under_xdist_a_case_files_batch_runs_on_one_worker(project):
    """xdist's default ``--dist load`` splits a file's items over workers, and each worker
    replayed the whole batch: the plugin distributes by file (``loadfile``) instead."""
    add_cases(project, "named.json", "wrong_exception.json")
    result = project.runpytest_subprocess("-n", "2", "-v", "-p", "no:cacheprovider")
    workers: dict[str, set[str]] = {}
    for line in result.outlines:
        if "::" in line and line.startswith("[gw"):
            worker, rest = line.split("]", 1)
            node = rest.split()[-1] if "::" in rest.split()[-1] else next(w for w in rest.split() if "::" in w)
            workers.setdefault(node.split("::")[0], set()).add(worker)
    assert set(workers) == {"cases/named.json", "cases/wrong_exception.json"}, result.outlines
    assert all(len(on) == 1 for on in workers.values()), workers
    assert "pytest cases/wrong_exception.json::" in result.stdout.str(), "the rerun hint drops the group"


def test_qtt_html_writes_the_page_of_the_items_judged(project):
    add_cases(project, "named.json", "wrong_exception.json")
    result = project.runpytest("-q", "--qtt-html", "page.html")
    result.assert_outcomes(passed=4, failed=1)
    page = (project.path / "page.html").read_text(encoding="utf-8")
    assert "5 result(s): 4 passed, 1 failed" in page
    assert "expects an error that never comes" in page and "but every statement planned" in page


def test_under_xdist_the_workers_results_make_one_page(project):
    add_cases(project, "named.json", "wrong_exception.json")
    result = project.runpytest_subprocess("-n", "2", "-q", "-p", "no:cacheprovider", "--qtt-html", "page.html")
    result.assert_outcomes(passed=4, failed=1)
    page = (project.path / "page.html").read_text(encoding="utf-8")
    assert "5 result(s): 4 passed, 1 failed" in page
