"""Path selection: case paths and historical plan folders, and the variants under them."""

from __future__ import annotations

from pathlib import Path

from qtt.harness.selection import load_variants, split_paths

CASES = Path(__file__).parents[1] / "fixtures" / "cases"


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
    assert [e.case for e in errors] == ["misspelt outputs"]
