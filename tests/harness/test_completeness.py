"""The completeness gate: every buildable step has a stored plan, every stateful one a stored
checkpoint, or an entry saying why not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qtt.cli import main
from qtt.errors import QttError
from qtt.harness.upkeep import completeness

REPO = Path(__file__).parents[2]
STEPS = {"streamSourceV1": False, "streamAggregateV1": True, "tableFilterV9": False}


def _folder(historical: Path, name: str, tags: list[str], *, checkpoint: bool = False) -> None:
    folder = historical / name / "0.1.0_1"
    folder.mkdir(parents=True)
    plan = {"statements": [{"@type": "ksqlPlanV1", "queryPlan": {"steps": [{"@type": tag} for tag in tags]}}]}
    (folder / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    if checkpoint:
        (folder / "checkpoint.json").write_text("{}", encoding="utf-8")


def test_each_step_counts_the_plans_that_use_it_and_the_checkpoints_that_exercise_it(tmp_path: Path) -> None:
    historical = tmp_path / "historical_plans"
    _folder(historical, "a", ["streamSourceV1", "streamAggregateV1"], checkpoint=True)
    _folder(historical, "b", ["streamSourceV1", "streamAggregateV1"])
    table = {entry.tag: entry for entry in completeness.coverage(historical, STEPS)}
    assert (table["streamSourceV1"].plans, table["streamAggregateV1"].checkpoints) == (2, 1)
    assert table["tableFilterV9"].missing == ["stored plan"] and not table["tableFilterV9"].ok
    assert table["tableFilterV9"].line() == "UNCOVERED tableFilterV9: 0 stored plan(s); no stored plan"


def test_a_stateful_step_without_a_stored_checkpoint_fails_unless_an_entry_says_why(tmp_path: Path) -> None:
    historical = tmp_path / "historical_plans"
    _folder(historical, "b", ["streamSourceV1", "streamAggregateV1"])
    (entry,) = [e for e in completeness.coverage(historical, STEPS) if e.tag == "streamAggregateV1"]
    assert entry.missing == ["stored checkpoint"] and not entry.ok
    (tmp_path / "completeness.toml").write_text(
        '[[uncovered]]\nstep = "streamAggregateV1"\nreason = "only in old plans"\n', encoding="utf-8"
    )
    (entry,) = [e for e in completeness.coverage(historical, STEPS) if e.tag == "streamAggregateV1"]
    assert entry.ok and entry.line().endswith("; exempt: only in old plans")


def test_a_malformed_entry_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "completeness.toml").write_text('[[uncovered]]\nstep = "x"\n', encoding="utf-8")
    with pytest.raises(QttError, match="uncovered entry 1: missing reason; an entry has step, reason"):
        completeness.load_exceptions(tmp_path)


def test_today_s_tree_passes_and_losing_the_only_plans_of_a_step_fails_it(capsys, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    shutil.copytree(REPO / "cases", tmp_path / "cases")
    shutil.copytree(REPO / "historical_plans", tmp_path / "historical_plans")
    shutil.copy(REPO / "completeness.toml", tmp_path / "completeness.toml")
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "STEP streamStreamJoinV2 (stateful): " in out and ", 0 without a stored plan or checkpoint" in out
    for plan in (tmp_path / "historical_plans").glob("*/*/plan.json"):  # a copy: goldens stay as they are
        if '"streamStreamJoinV2"' in plan.read_text(encoding="utf-8"):
            shutil.rmtree(plan.parent)
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert "UNCOVERED streamStreamJoinV2 (stateful): 0 stored plan(s), 0 stored checkpoint(s)" in out
    assert "1 without a stored plan or checkpoint" in out
