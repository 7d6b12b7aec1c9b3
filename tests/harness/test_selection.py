"""Path selection: case paths and historical plan folders, and the variants under them."""

from __future__ import annotations

import json
from pathlib import Path

from qtt.harness.historical import plan_store
from qtt.harness.selection import load_variants, select_folders, split_paths

CASES = Path(__file__).parents[1] / "fixtures" / "cases"
HISTORICAL = Path(__file__).parents[2] / "historical_plans"


def test_historical_paths_are_told_from_case_paths(tmp_path):
    root = tmp_path / "historical_plans"
    for version in ("0.1.0_1700000000000", "0.2.0_1700000000001"):
        (root / "a_case__0123abcd" / version).mkdir(parents=True)
        (root / "a_case__0123abcd" / version / "plan.json").write_text("{}")
    (tmp_path / "cases").mkdir()
    given = [
        str(tmp_path / "cases"),
        str(root / "a_case__0123abcd"),
        str(root / "a_case__0123abcd" / "0.1.0_1700000000000"),
    ]
    cases, folders = split_paths(given)
    assert cases == [str(tmp_path / "cases")]
    assert [f.name for f in folders] == ["0.1.0_1700000000000", "0.2.0_1700000000001", "0.1.0_1700000000000"]
    assert [f.name for f in split_paths([str(root)])[1]] == ["0.1.0_1700000000000", "0.2.0_1700000000001"]


def test_load_variants_filters_by_keyword_and_returns_the_cases_that_do_not_load() -> None:
    variants, errors = load_variants([str(CASES / "broken.json")], "STILL")
    assert [v.case for v in variants] == ["still runs"]
    assert errors == []
    variants, errors = load_variants([str(CASES / "broken.json")], "misspelt")
    assert variants == [] and [e.case for e in errors] == ["misspelt outputs"]


def test_a_file_that_is_not_a_case_file_is_one_error_and_the_others_still_load() -> None:
    variants, errors = load_variants([str(CASES / "unloadable.json"), str(CASES / "named.json")])
    assert len(variants) == 4
    assert [e.file for e in errors] == [str(CASES / "unloadable.json")]


def test_k_selects_historical_plans_by_their_recorded_case(tmp_path: Path) -> None:
    every = plan_store.folders(HISTORICAL)
    chosen = select_folders(every, "PER STATION")
    assert chosen and len(chosen) < len(every)
    for folder in chosen:
        assert "per station" in json.loads((folder / "spec.json").read_text())["case"]["name"]
    assert select_folders(every, "[kafka-json]") == [f for f in every if "KAFKA-JSON" in f.parent.name]
    assert select_folders(every, "no case is called this") == []
    assert select_folders(every, None) == every
    unreadable = tmp_path / "s" / "0.1.0_1700000000000"
    unreadable.mkdir(parents=True)
    (unreadable / "spec.json").write_text("{not json")
    assert select_folders([unreadable], "anything") == [unreadable], "kept, so that its error is reported"
