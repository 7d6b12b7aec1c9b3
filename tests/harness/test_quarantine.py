"""Quarantine: a marked item still runs; it is ``quarantined`` while it fails, says so when it
passes, and ``qtt check`` fails once a mark's release has come."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qtt import __version__
from qtt.cli import main
from qtt.errors import QttError
from qtt.harness.results import CaseResult
from qtt.harness.status import Status, exit_status
from qtt.harness.upkeep import quarantine

REPO = Path(__file__).parents[2]
SMOKE = "smoke__filter_and_project_orders__92770666"


def _mark(item: str, fix_by: str = "99.0.0", scenario: str | None = None) -> str:
    line = f'scenario = "{scenario}"\n' if scenario else ""
    return f'[[quarantine]]\nitem = "{item}"\n{line}reason = "known to differ"\nissue = "#7"\nfix_by = "{fix_by}"\n'


def _project(tmp_path: Path, *marks: str) -> Path:
    folder = tmp_path / "historical_plans" / "slug" / "0.1.0_1"
    folder.mkdir(parents=True)
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "c.json").write_text("{}", encoding="utf-8")
    (tmp_path / quarantine.FILE_NAME).write_text("\n".join(marks), encoding="utf-8")
    return folder


def test_a_failing_marked_folder_is_quarantined_and_does_not_fail_the_run(tmp_path: Path) -> None:
    folder = _project(tmp_path, _mark("historical_plans/slug/0.1.0_1"))
    marks = quarantine.load(tmp_path)
    failed = CaseResult(str(folder), "c", "", Status.FAILED, "outputs differ", kind="historical")
    restored = CaseResult(str(folder), "c", "restored", Status.FAILED, "state differs", kind="restored")
    marks.apply([failed, restored])
    assert failed.status == restored.status == Status.QUARANTINED
    assert failed.reason == "quarantined (#7, to be fixed by 99.0.0: known to differ); still failed: outputs differ"
    assert exit_status([failed.status, restored.status]) == 0 and not Status.QUARANTINED.bad


def test_a_known_hang_can_be_quarantined_too(tmp_path: Path) -> None:
    folder = _project(tmp_path, _mark("historical_plans/slug/0.1.0_1"))
    hung = CaseResult(str(folder), "c", "", Status.TIMED_OUT, "query Q did not end", kind="historical")
    quarantine.load(tmp_path).apply([hung])
    assert hung.status == Status.QUARANTINED
    assert hung.reason.endswith("still timed out: query Q did not end")


def test_a_passing_marked_item_says_the_mark_can_go(tmp_path: Path) -> None:
    folder = _project(tmp_path, _mark("historical_plans/slug/0.1.0_1"))
    passed = CaseResult(str(folder), "c", "", Status.PASSED, kind="historical")
    quarantine.load(tmp_path).apply([passed])
    assert passed.status == Status.PASSED
    assert passed.reason == "passes now: remove the mark (quarantine.toml: historical_plans/slug/0.1.0_1, #7)"


def test_a_mark_holds_for_its_scenario_and_its_case_only(tmp_path: Path) -> None:
    folder = _project(tmp_path, _mark("historical_plans/slug/0.1.0_1", scenario="restored"), _mark("cases/c.json::b"))
    marks = quarantine.load(tmp_path)
    fresh = CaseResult(str(folder), "c", "", Status.FAILED, kind="historical")
    case_a = CaseResult(str(tmp_path / "cases" / "c.json"), "a", "", Status.FAILED)
    case_b = CaseResult(str(tmp_path / "cases" / "c.json"), "b", "", Status.ERROR)
    infra = CaseResult(str(folder), "c", "", Status.INFRA, kind="restored")
    corrupt = CaseResult(str(folder), "c", "", Status.CORRUPT, kind="restored")
    marks.apply([fresh, case_a, case_b, infra, corrupt])
    assert [r.status for r in (fresh, case_a, case_b, infra, corrupt)] == [
        Status.FAILED,  # the mark is for the restored scenario
        Status.FAILED,  # another case of the file
        Status.QUARANTINED,
        Status.INFRA,  # nothing was proven: still an infrastructure error
        Status.CORRUPT,  # damaged files are not the known failure a mark is for
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[quarantine]]\nitem = "cases/c.json"\n', "quarantine entry 1: missing reason, issue, fix_by"),
        (_mark("cases/c.json", fix_by="soon"), "quarantine entry 1: fix_by 'soon' is not a release such as 0.15.0"),
        (_mark("cases/gone.json"), "quarantine entry 1: cases/gone.json does not exist"),
        (_mark("cases/c.json") + 'owner = "me"\n', "quarantine entry 1: unknown field owner"),
        ("[[quarantine]\n", "not valid TOML"),
        ("[marks]\n", "unknown table marks; entries are [[quarantine]] tables"),
    ],
)
def test_a_malformed_mark_names_the_file_the_mark_and_what_was_expected(
    tmp_path: Path, text: str, message: str
) -> None:
    _project(tmp_path, text)
    with pytest.raises(QttError) as raised:
        quarantine.load(tmp_path)
    assert str(tmp_path / "quarantine.toml") in raised.value.message and message in raised.value.message


def test_no_file_no_marks(tmp_path: Path) -> None:
    assert quarantine.load(tmp_path).marks == ()


def test_a_mark_expires_at_its_release(tmp_path: Path) -> None:
    _project(tmp_path, _mark("cases/c.json", fix_by="0.14.0"), _mark("cases/c.json::x", fix_by="0.13.1"))
    marks = quarantine.load(tmp_path)
    assert [m.fix_by for m in quarantine.expired(marks, "0.14.0")] == ["0.14.0", "0.13.1"]
    assert [m.fix_by for m in quarantine.expired(marks, "0.13.1")] == ["0.13.1"]
    lines, expired = quarantine.check_lines(marks, "0.13.1")
    assert expired and lines[0].startswith("QUARANTINED cases/c.json: known to differ (#7, to be fixed by 0.14.0)")
    assert lines[1].startswith("EXPIRED cases/c.json::x:")


def test_check_lists_every_mark_and_fails_on_an_expired_one(capsys, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    shutil.copytree(REPO / "cases", tmp_path / "cases")
    shutil.copytree(REPO / "historical_plans", tmp_path / "historical_plans")
    monkeypatch.chdir(tmp_path)
    folder = next(p for p in (tmp_path / "historical_plans" / SMOKE).iterdir()).relative_to(tmp_path)
    (tmp_path / "quarantine.toml").write_text(_mark(str(folder), fix_by="99.0.0"), encoding="utf-8")
    assert main(["check", "cases/smoke.json"]) == 0
    out = capsys.readouterr().out
    assert f"QUARANTINED {folder}: known to differ (#7, to be fixed by 99.0.0)" in out
    assert "1 quarantine mark(s) in" in out and ", 0 expired" in out
    (tmp_path / "quarantine.toml").write_text(_mark(str(folder), fix_by=__version__), encoding="utf-8")
    assert main(["check", "cases/smoke.json"]) == 1
    out = capsys.readouterr().out
    assert f"EXPIRED {folder}:" in out and "fix the item, remove its mark" in out


@pytest.mark.spark
@pytest.mark.slow
def test_qtt_run_reports_a_quarantined_failure_and_a_mark_that_can_go(capsys, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    source = sorted((REPO / "historical_plans" / SMOKE).iterdir())
    broken, clean = (tmp_path / "historical_plans" / SMOKE / p.name for p in source[:2])
    for original, copy in zip(source[:2], (broken, clean), strict=True):
        shutil.copytree(original, copy)
    spec = json.loads((broken / "spec.json").read_text(encoding="utf-8"))
    spec["outputs"] = spec["outputs"][:-1]  # a golden the runtime no longer matches
    (broken / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    marks = [_mark(str(p.relative_to(tmp_path))) for p in (broken, clean)]
    (tmp_path / "quarantine.toml").write_text("\n".join(marks), encoding="utf-8")
    assert main(["run", "historical_plans"]) == 0  # a quarantined failure does not fail the run
    out = capsys.readouterr().out
    assert f"QUARANTINED {broken.relative_to(tmp_path)}: " in out and "still failed" in out
    assert f"PASSES NOW {clean.relative_to(tmp_path)}: " in out and "remove the mark" in out
    assert "1 passed, 0 failed, 0 skipped, 0 error, 1 quarantined" in out
