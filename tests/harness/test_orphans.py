"""Renames and orphans: a renamed case keeps its history by naming its former name; a folder
whose case is gone is an orphan `qtt check` lists (and still replays); retired.toml retires one
deliberately. Tested on a copy of the project."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from qtt.cli import main
from qtt.errors import QttError
from qtt.harness.upkeep import orphans

REPO = Path(__file__).parents[2]
SLUG = "smoke__filter_and_project_orders__92770666"
OLD = '"name": "filter and project orders",'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(REPO / "cases", tmp_path / "cases")
    shutil.copytree(REPO / "historical_plans", tmp_path / "historical_plans")
    shutil.copy(REPO / "completeness.toml", tmp_path / "completeness.toml")
    shutil.copy(REPO / orphans.RETIRED_FILE, tmp_path / orphans.RETIRED_FILE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _rename(project: Path, new: str) -> None:
    smoke = project / "cases" / "smoke.json"
    text = smoke.read_text(encoding="utf-8")
    assert OLD in text
    smoke.write_text(text.replace(OLD, new), encoding="utf-8")


def test_the_project_has_no_orphans(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    assert main(["check"]) == 0
    assert "ORPHAN" not in capsys.readouterr().out


def test_a_renamed_case_without_its_former_name_is_new_and_leaves_an_orphan(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    _rename(project, '"name": "filter and project the orders",')
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert "NEW cases/smoke.json: filter and project the orders: never persisted" in out
    assert f"ORPHAN historical_plans/{SLUG}: 2 folder(s) whose case is gone" in out
    assert "1 orphaned case(s), 2 folder(s)" in out and "qttFormerNames" in out


def test_a_renamed_case_that_names_its_former_name_keeps_its_history(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    _rename(project, '"name": "filter and project the orders", "qttFormerNames": ["filter and project orders"],')
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "ORPHAN" not in out and "NEW" not in out


def test_a_case_moved_to_another_file_names_the_old_file_too(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    (project / "cases" / "smoke.json").rename(project / "cases" / "first.json")
    text = (project / "cases" / "first.json").read_text(encoding="utf-8")
    former = '"qttFormerNames": ["cases/smoke.json::filter and project orders"],'
    (project / "cases" / "first.json").write_text(text.replace(OLD, OLD + former), encoding="utf-8")
    assert main(["check"]) == 0
    assert "ORPHAN" not in capsys.readouterr().out


def test_a_retired_slug_is_listed_with_its_reason_not_as_an_orphan(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    _rename(project, '"name": "filter and project the orders",')
    entry = f'\n[[retired]]\nslug = "{SLUG}"\nreason = "replaced by a better case"\nsince = "2026-12-02"\n'
    with (project / orphans.RETIRED_FILE).open("a", encoding="utf-8") as retired:
        retired.write(entry)
    main(["check"])
    out = capsys.readouterr().out
    assert f"RETIRED historical_plans/{SLUG}: 2 folder(s), since 2026-12-02: replaced by a better case" in out
    assert "ORPHAN" not in out


def test_a_malformed_retired_entry_names_what_it_lacks(tmp_path: Path) -> None:
    (tmp_path / orphans.RETIRED_FILE).write_text('[[retired]]\nslug = "x"\n', encoding="utf-8")
    with pytest.raises(QttError, match=r"retired entry 1: missing reason, since; an entry has slug, reason, since"):
        orphans.load_retired(tmp_path)
