"""qtt snapshot and the up-to-date check, end to end on Spark (one small case)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.harness.cases.loader import load_file
from qtt.harness.historical import plan_store, uptodate
from qtt.harness.historical.replay import replay_folders
from qtt.harness.historical.snapshot import Action, snapshot

CASE = {
    "tests": [
        {
            "name": "doubled",
            "statements": [
                "CREATE STREAM src (id INT KEY, n INT) WITH (kafka_topic='src', value_format='JSON');",
                "CREATE STREAM out AS SELECT id, n * 2 AS twice FROM src;",
            ],
            "inputs": [{"topic": "src", "key": 1, "value": {"n": 4}}],
            "outputs": [{"topic": "OUT", "key": 1, "value": {"TWICE": 8}}],
        }
    ]
}


def _variants(path: Path):  # type: ignore[no-untyped-def]
    return list(load_file(path).variants)


@pytest.mark.spark
def test_snapshot_writes_once_then_only_for_a_changed_plan(spark, tmp_path: Path) -> None:
    case_file, root = tmp_path / "case.json", tmp_path / "historical_plans"
    case_file.write_text(json.dumps(CASE))

    first = snapshot(_variants(case_file), lambda: spark, root=root, version="9.9.9", epoch_ms=1_700_000_000_000)
    assert [e.action for e in first] == [Action.ADDED]
    assert len(plan_store.folders(root)) == 1
    folder = plan_store.folders(root)[0]
    assert {p.name for p in folder.iterdir()} == {"plan.json", "spec.json", "topology"}
    assert all(e.ok for e in uptodate.check(_variants(case_file), root))

    again = snapshot(_variants(case_file), lambda: spark, root=root, version="9.9.9", epoch_ms=1_700_000_000_001)
    assert [e.action for e in again] == [Action.UNCHANGED]
    assert len(plan_store.folders(root)) == 1

    changed = json.loads(case_file.read_text())
    changed["tests"][0]["statements"][1] = "CREATE STREAM out AS SELECT id, n * 2 AS twice FROM src WHERE n > 0;"
    case_file.write_text(json.dumps(changed))
    stale = uptodate.check(_variants(case_file), root)
    assert [e.status for e in stale] == [uptodate.PlanStatus.CHANGED]
    assert "qtt snapshot" in stale[0].reason
    assert any("WhereFilter" in line for line in stale[0].diff)

    dry = snapshot(_variants(case_file), lambda: spark, root=root, dry_run=True, epoch_ms=1_700_000_000_002)
    assert dry[0].action == "would add" and len(plan_store.folders(root)) == 1

    second = snapshot(_variants(case_file), lambda: spark, root=root, version="9.9.9", epoch_ms=1_700_000_000_003)
    assert [e.action for e in second] == [Action.ADDED]
    assert len(plan_store.folders(root)) == 2
    assert (folder / "plan.json").exists(), "the old folder is untouched"

    results = replay_folders(plan_store.folders(root), lambda: spark)
    assert [r.status for r in results] == ["passed", "passed"]

    # the case file can go: a historical plan is self-contained
    case_file.unlink()
    assert [r.status for r in replay_folders(plan_store.folders(root), lambda: spark)] == ["passed", "passed"]


@pytest.mark.spark
def test_a_failing_case_is_reported_not_snapshotted(spark, tmp_path: Path) -> None:
    broken = json.loads(json.dumps(CASE))
    broken["tests"][0]["outputs"][0]["value"] = {"TWICE": 9}
    case_file, root = tmp_path / "case.json", tmp_path / "historical_plans"
    case_file.write_text(json.dumps(broken))
    entries = snapshot(_variants(case_file), lambda: spark, root=root)
    assert entries[0].action == Action.NOT_SNAPSHOTTED
    assert "did not pass" in entries[0].reason
    assert plan_store.folders(root) == []


@pytest.mark.spark
def test_the_snapshot_command_shows_its_progress_and_records_the_project_relative_path(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from qtt.cli import main

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "case.json").write_text(json.dumps(CASE))
    monkeypatch.chdir(tmp_path)
    assert main(["snapshot", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert "qtt snapshot --dry-run: planning 1 case variant(s)" in err
    assert "qtt snapshot --dry-run: replaying 1 new or changed plan(s)" in err
    assert "replayed 1/1 case variants" in err
    assert out.startswith("WOULD ADD historical_plans/case__doubled__")
    assert not (tmp_path / "historical_plans").exists()

    assert main(["snapshot", str(tmp_path / "cases")]) == 0
    (folder,) = plan_store.folders(tmp_path / "historical_plans")
    assert json.loads((folder / "spec.json").read_text())["case"]["file"] == "cases/case.json"
    assert list((tmp_path / "historical_plans").glob("**/.staging-*")) == []
    assert main(["check", "./cases"]) == 0
