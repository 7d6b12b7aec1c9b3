"""The compatibility matrix: stateful cases by the Spark line that wrote their checkpoints."""

from __future__ import annotations

import pytest

from qtt import cli
from qtt.harness.historical.matrix import render
from qtt.harness.historical.replay import HistoricalResult
from qtt.harness.status import Status


def _restored(slug: str, writer: str, status: Status = Status.PASSED, reason: str = "") -> HistoricalResult:
    folder = f"historical_plans/{slug}/0.13.0_1796182612083"
    return HistoricalResult(folder, slug, "restored", status, reason, kind="restored", writer=writer)


def test_rows_are_cases_columns_writer_lines_and_a_cell_its_worst_verdict() -> None:
    text = render(
        [
            _restored("tables__a", "4.3.0"),
            _restored("tables__a", "4.1.4"),
            _restored("tables__a", "4.1.3", Status.FAILED, "today's runtime cannot resume: [STATE_STORE_X] boom\nmore"),
            _restored("windows__b", "4.3.0"),
            HistoricalResult("historical_plans/windows__b/0.1.0_1", "b", "", Status.PASSED),  # a fresh replay
        ],
        "4.3.0",
    )
    lines = text.splitlines()
    assert (
        lines[0].startswith("Stored checkpoints restored on pyspark 4.3.0")
        and "4 checkpoint(s) of 2 case(s)" in lines[0]
    )
    assert lines[2] == "| case | written by 4.1 | written by 4.3 |"
    assert (
        lines[4] == "| tables__a | failed: today's runtime cannot resume: [STATE_STORE_X] boom (2 folders) | passed |"
    )
    assert lines[5] == "| windows__b | - | passed |"


def test_no_stored_checkpoint_is_a_usage_error(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert cli.main(["matrix", str(tmp_path)]) == 2
    assert "no stored checkpoint under" in capsys.readouterr().err


def test_the_matrix_command_restores_each_stored_checkpoint_and_writes_the_table(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    from qtt.harness import session

    root = Path(__file__).parents[2] / "historical_plans"
    slug = "tables__a_table_row_updated_within_its_group_emits_the_group_once__6044a58d"
    asked: list[tuple[str, list[Path]]] = []

    def restored(kind, folders, progress=None):  # type: ignore[no-untyped-def]
        asked.append((kind, list(folders)))
        return [_restored(slug, "4.3.0"), _restored("other", "4.2.1", Status.FAILED, "refused")]

    monkeypatch.setattr(session, "run_items", restored)
    out = tmp_path / "matrix.md"
    assert cli.main(["matrix", str(root / slug), "--out", str(out)]) == 1  # one restore failed
    [(kind, folders)] = asked
    assert kind == session.Kind.RESTORED and root / slug / "0.7.0_1795620141001" in folders
    assert all((folder / "checkpoint.json").is_file() for folder in folders)  # only folders with one
    assert len(folders) < len(list((root / slug).iterdir()))
    text = out.read_text(encoding="utf-8")
    assert f"| {slug} | - | passed |" in text and "| other | failed: refused | - |" in text
