"""The up-to-date check: today's plan against the newest persisted one, without Spark."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qtt.harness.cases.loader import load_file
from qtt.harness.cases.model import CaseVariant
from qtt.harness.historical.uptodate import PlanStatus, check_variant

REPO = Path(__file__).parents[2]
CASE_FILE = "cases/projection.json"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[CaseVariant, Path]:
    """A project holding one case file and its persisted history (the working directory)."""
    (tmp_path / "cases").mkdir()
    shutil.copy(REPO / CASE_FILE, tmp_path / CASE_FILE)
    monkeypatch.chdir(tmp_path)
    variant = load_file(CASE_FILE).variants[0]
    root = Path("historical_plans")
    slug = check_variant(variant, root).slug
    shutil.copytree(REPO / "historical_plans" / slug, root / slug)
    assert check_variant(variant, root).status == PlanStatus.UP_TO_DATE
    return variant, root


def _newest_plan(root: Path) -> Path:
    return max(root.glob("*/*/plan.json"), key=lambda p: p.parent.name.split("_")[-1])


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="truncated"),
        pytest.param(lambda b: b.replace(b'"@type"', b'"@t\xffpe"', 1), id="bad-utf8"),
        pytest.param(lambda b: b.replace(b'"ksqlPlanV1"', b"NaN", 1), id="NaN"),
        pytest.param(lambda b: b"", id="empty"),
    ],
)
def test_a_corrupt_newest_plan_is_named_corrupt_with_its_path(project, damage) -> None:  # type: ignore[no-untyped-def]
    variant, root = project
    plan_file = _newest_plan(root)
    plan_file.write_bytes(damage(plan_file.read_bytes()))
    entry = check_variant(variant, root)
    assert entry.status == PlanStatus.CORRUPT and not entry.ok
    assert str(plan_file) in entry.reason and "corrupt" in entry.reason
    assert "no plan was persisted before" not in "\n".join(entry.diff)
    assert f"git checkout -- {plan_file}" in entry.hint


def test_a_missing_plan_file_in_the_newest_folder_is_corrupt_too(project) -> None:  # type: ignore[no-untyped-def]
    variant, root = project
    _newest_plan(root).unlink()
    assert check_variant(variant, root).status == PlanStatus.CORRUPT


def _case(statements: list[str], **extra: object) -> CaseVariant:
    return load_file_text({"tests": [{"name": "c", "statements": statements, **extra}]})


def load_file_text(data: dict[str, object]) -> CaseVariant:
    from qtt.harness.cases.loader import load_text

    (variant,) = load_text(json.dumps(data), file="cases/c.json").variants
    return variant


INPUTS = {"inputs": [{"topic": "t", "key": 1, "value": {"V": 1}}], "outputs": []}


def test_sql_that_does_not_plan_is_an_error_unless_the_case_expects_one(tmp_path: Path) -> None:
    broken = _case(["CREATE STREAM s (k INT KEY, v INT) WITH (kafka_topic='t'"], **INPUTS)
    entry = check_variant(broken, tmp_path)
    assert entry.status == PlanStatus.ERROR and not entry.ok
    assert entry.reason.startswith("does not plan: ") and "expectedException" in entry.hint
    unknown = _case(["CREATE STREAM o AS SELECT * FROM nowhere;"], **INPUTS)
    assert check_variant(unknown, tmp_path).status == PlanStatus.ERROR
    expected = _case(
        ["CREATE STREAM o AS SELECT * FROM nowhere;"],
        expectedException={"type": "io.confluent.ksql.util.KsqlStatementException"},
    )
    assert check_variant(expected, tmp_path).status == PlanStatus.SKIPPED


def test_each_case_gets_one_word_and_the_summary_counts_by_those_words(tmp_path: Path) -> None:
    from qtt.harness.historical.uptodate import summary

    stream = "CREATE STREAM s (k INT KEY, v INT) WITH (kafka_topic='t', value_format='JSON');"
    fresh = check_variant(_case([stream], **INPUTS), tmp_path)
    assert (fresh.status, fresh.label) == (PlanStatus.MISSING, "new")
    assert fresh.reason.startswith("never persisted: no plan under ")
    table = "CREATE TABLE d (k INT PRIMARY KEY, w ARRAY<INT>) WITH (kafka_topic='d', value_format='JSON');"
    exploded = "CREATE STREAM o AS SELECT s.*, d.w FROM s JOIN d ON s.k = d.k PARTITION BY s.v;"
    unsupported = check_variant(_case([stream, table, exploded], **INPUTS), tmp_path)
    assert (unsupported.status, unsupported.label) == (PlanStatus.SKIPPED, "unsupported")
    assert unsupported.lines() == ["UNSUPPORTED cases/c.json: c: a qualified * with PARTITION BY over a join"]
    expects = check_variant(
        _case([stream], expectedException={"type": "io.confluent.ksql.util.KsqlStatementException"}), tmp_path
    )
    assert expects.label == "expected error"
    disabled = check_variant(_case([stream], enabled=False, **INPUTS), tmp_path)
    assert disabled.label == "disabled" and disabled.reason == "no plan: the case is disabled (enabled: false)"
    broken = check_variant(_case(["CREATE STREAM o AS SELECT * FROM nowhere;"], **INPUTS), tmp_path)
    assert broken.label == "error"
    entries = [fresh, unsupported, expects, disabled, broken]
    assert summary(entries) == "0 up to date, 0 changed, 1 new, 1 unsupported, 1 expected error, 1 disabled, 1 error"
    unloadable = summary(entries[:1], unloadable=2)
    assert unloadable == "0 up to date, 0 changed, 1 new, 0 unsupported, 0 expected error, 2 error"


def test_a_statement_that_does_not_plan_is_reported_at_its_place_in_the_case_file(tmp_path: Path) -> None:
    stream = "CREATE STREAM s (k INT KEY, v INT) WITH (kafka_topic='t', value_format='JSON');"
    entry = check_variant(_case([stream, "CREATE STREAM o AS SELECT k,\n v + FROM s;"], **INPUTS), tmp_path)
    assert entry.status == PlanStatus.ERROR
    first, source, caret = entry.lines()
    assert first.startswith(
        "ERROR cases/c.json: c: does not plan: $.tests[0].statements[1]: line 1: statement line 2:6: "
        "Syntax Error: unexpected 'FROM'"
    )
    assert (source, caret) == ("     v + FROM s;", "         ^^^^")
