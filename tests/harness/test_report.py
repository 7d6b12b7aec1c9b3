"""Failure reports: records numbered as the docs say, pointing at the case file; names that do not exist."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qtt.harness import report
from qtt.harness.cases.loader import load_file
from qtt.harness.replay.compare import Comparison, TopicDiff, UnknownField
from qtt.harness.replay.runner import run_variants
from qtt.harness.results import CaseResult
from qtt.harness.status import Status


def _failure(*diffs: TopicDiff, reason: str = "outputs differ on O") -> list[str]:
    result = CaseResult("cases/x.json", "c", "", Status.FAILED, reason, comparison=Comparison(list(diffs)))
    return report.render_failure(result).splitlines()


def test_the_first_difference_says_how_records_count_and_where_the_expected_one_is_written() -> None:
    diff = TopicDiff(
        "O",
        2,
        [{"key": 3, "value": {"NAME": "CY"}}],
        [{"key": 3, "value": {"NAME": "cy"}}],
        ["record 2: ['value']['NAME']: expected 'CY', got 'cy'"],
        expected_output=4,
        expected_line=48,
    )
    assert _failure(diff)[1:4] == [
        "topic O: first difference at record 2 of O, counting from 0 (expected: outputs[4], cases/x.json line 48)",
        "  record 2: ['value']['NAME']: expected 'CY', got 'cy'",
        '  - expected: {"key": 3, "value": {"NAME": "CY"}}',
    ]
    # outputs generated in code have no line; a record the query wrote beyond them has no expected place
    assert report.render_comparison(Comparison([TopicDiff("O", 2, [], [], [], 4)]))[0].endswith(
        "counting from 0 (expected: outputs[4])"
    )
    assert report.render_comparison(Comparison([TopicDiff("O", 2, [], [], [])])) == [
        "topic O: first difference at record 2 of O, counting from 0"
    ]


def test_a_topic_no_query_writes_is_named_with_a_suggestion_not_a_diff() -> None:
    diff = TopicDiff("o", 0, [{"key": 1, "value": {"NAME": "bob"}}], [], [], 0, 28, written=("O", "P"))
    assert _failure(diff, reason="outputs differ on o")[1:] == [
        "topic o: no such topic: no query writes o (expected by outputs[0], cases/x.json line 28); "
        "the queries write O, P. Did you mean 'O'?"
    ]
    nothing = TopicDiff("o", 0, [], [], [], 0, None, written=())
    assert report.render_comparison(Comparison([nothing])) == [
        "topic o: no such topic: no query writes o (expected by outputs[0]), nor any other topic"
    ]


def test_a_field_the_written_records_lack_is_named_with_a_suggestion() -> None:
    diff = TopicDiff(
        "O",
        0,
        [{"key": 1, "value": {"NAEM": "bob"}}],
        [{"key": 1, "value": {"NAME": "bob"}}],
        [],
        0,
        14,
        [(0, 0, 14, UnknownField("value", ("NAEM",), ("NAME",)))],
    )
    assert _failure(diff)[1:] == [
        "topic O: no such field: expected record 0 (outputs[0], cases/x.json line 14) names the value field NAEM, "
        "which record 0 written to O does not have (its value has NAME). Did you mean 'NAME'?",
        '  - expected: {"key": 1, "value": {"NAEM": "bob"}}',
        '  + actual:   {"key": 1, "value": {"NAME": "bob"}}',
    ]
    nested = UnknownField("value", ("S", "naem"), ("ID", "NAME"))
    (line,) = report.render_comparison(Comparison([TopicDiff("O", 1, [], [], [], 3, None, [(1, 3, None, nested)])]))
    assert line.endswith(
        "names the value field S.naem, which record 1 written to O does not have "
        "(its value in S has ID, NAME). Did you mean 'NAME'?"
    )


def test_an_errors_file_and_case_are_said_once() -> None:
    reason = "cases/x.json: case 'c': $.tests[0].statements[1]: line 7: statement line 2:20: Syntax Error: x"
    (first,) = _failure(reason=reason)
    assert first == "FAILED cases/x.json: c: $.tests[0].statements[1]: line 7: statement line 2:20: Syntax Error: x"


FIXTURE = Path(__file__).parent / "fixtures" / "report" / "names.json"


def _rendered(results: list[CaseResult], case: str) -> list[str]:
    (result,) = [r for r in results if r.case == case]
    return report.render_failure(result).splitlines()


def test_a_topic_in_the_wrong_case_is_no_such_topic_from_a_replay(tmp_path: Path) -> None:
    from tests.harness.test_progress import FakeRuntime

    variants = [
        v for v in load_file(FIXTURE, display="cases/names.json").variants if v.case == "topic in the wrong case"
    ]
    results = run_variants(variants, _no_spark, workdir=tmp_path, runtime=FakeRuntime())
    assert _rendered(results, "topic in the wrong case")[1] == (
        "topic o: no such topic: no query writes o (expected by outputs[0], cases/names.json line 29); "
        "the queries write O. Did you mean 'O'?"
    )


def _no_spark() -> Any:
    raise AssertionError("no Spark session may start")


@pytest.mark.spark
def test_field_names_and_record_numbers_from_a_replay(spark: Any, tmp_path: Path) -> None:
    results = run_variants(load_file(FIXTURE, display="cases/names.json").variants, lambda: spark, workdir=tmp_path)
    assert [r.status for r in results] == [Status.FAILED] * 3
    assert _rendered(results, "misspelled field")[1] == (
        "topic O: no such field: expected record 0 (outputs[0], cases/names.json line 15) names the value field "
        "NAEM, which record 0 written to O does not have (its value has NAME). Did you mean 'NAME'?"
    )
    assert _rendered(results, "third record differs")[1:3] == [
        "topic O: first difference at record 2 of O, counting from 0 (expected: outputs[4], cases/names.json line 49)",
        "  record 2: ['value']['NAME']: expected 'CY', got 'cy'",
    ]
