"""Slug rules: historical plan folder names and pytest node ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.harness.cases.loader import discover, load_file
from qtt.harness.cases.model import CaseVariant
from qtt.harness.cases.slugs import (
    case_slug,
    former_slugs,
    is_outside,
    node_names,
    node_slug,
    relative_file,
    slug_of,
)
from qtt.harness.upkeep.orphans import load_retired


def test_slug_is_readable_stable_and_ascii() -> None:
    slug = case_slug("cases/filters.json", "null rows are dropped: é", "JSON")
    assert slug.startswith("filters__null_rows_are_dropped__JSON__")
    assert slug.isascii() and " " not in slug
    assert slug == case_slug("cases/filters.json", "null rows are dropped: é", "JSON")


def test_names_that_slug_alike_do_not_collide() -> None:
    a = case_slug("cases/f.json", "a b", "")
    b = case_slug("cases/f.json", "a_b", "")
    c = case_slug("other/f.json", "a b", "")
    assert len({a, b, c}) == 3


def test_folder_slugs_drop_accents_but_node_ids_keep_their_letters() -> None:
    assert case_slug("cases/f.json", "Café", "").startswith("f__Caf__")
    assert node_slug("Café filter — on délai & co") == "Cafe_filter_on_delai_co"
    assert node_slug("¿?") == "case"


def _variant(case: str, variant: str = "", *, file: str = "cases/f.json") -> CaseVariant:
    return CaseVariant(
        file=file,
        case=case,
        index=0,
        variant=variant,
        statements=(),
        inputs=(),
        outputs=(),
        topics=(),
        properties={},
        expected_exception=None,
        post=None,
        enabled=True,
    )


def test_node_names_are_unique_within_a_file() -> None:
    names = [name for name, _ in node_names([_variant("a b"), _variant("a b"), _variant("x", "JSON"), _variant("a b")])]
    assert names == ["a_b", "a_b-2", "x[JSON]", "a_b-3"]


REPO = Path(__file__).parents[2]
HISTORICAL = REPO / "historical_plans"


def test_every_persisted_folder_still_maps_to_its_case() -> None:
    slugs = sorted(p.name for p in HISTORICAL.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert len(slugs) == 1091
    for slug in slugs:
        recorded = json.loads(next((HISTORICAL / slug).glob("*/spec.json")).read_text())["case"]
        assert case_slug(recorded["file"], recorded["name"], recorded["variant"]) == slug
    variants = [v for path in discover([REPO / "cases"]) for v in load_file(path).variants]
    # a renamed case keeps the folders of its former names (``qttFormerNames``); a removed one
    # is retired (retired.toml)
    by_slug = {slug for v in variants for slug in (slug_of(v, HISTORICAL), *former_slugs(v, HISTORICAL))}
    assert set(slugs) <= by_slug | set(load_retired(REPO))


def test_the_slug_does_not_depend_on_how_the_path_is_spelled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(REPO)
    root = Path("historical_plans")
    expected = case_slug("cases/aggregation.json", "c", "")
    spellings = ["cases/aggregation.json", "./cases/aggregation.json", str(REPO / "cases" / "aggregation.json")]
    assert {slug_of(_variant("c", file=f), root) for f in spellings} == {expected}
    assert slug_of(_variant("c", file="cases/aggregation.json"), REPO / "historical_plans") == expected
    monkeypatch.chdir(tmp_path)
    assert slug_of(_variant("c", file=spellings[2]), HISTORICAL) == expected
    assert slug_of(_variant("c", file="elsewhere.json"), HISTORICAL, file=spellings[2]) == expected
    assert relative_file(spellings[2], REPO) == "cases/aggregation.json"
    assert is_outside(relative_file(tmp_path / "x.json", REPO))


def test_a_lone_surrogate_or_a_long_name_still_makes_a_short_distinct_slug() -> None:
    lone = case_slug("cases/f.json", "name \udcff", "")
    assert lone.startswith("f__name__") and lone != case_slug("cases/f.json", "name ", "")
    long_ones = {
        case_slug(f"cases/{'s' * 300}.json", "n" * 400 + tail, "v" * 300) for tail in ("a", "b", "\ud800", "é" * 200)
    }
    assert len(long_ones) == 4
    assert all(len(slug.encode()) <= 255 and slug.isascii() for slug in long_ones)
    assert node_slug("\ud800 x") == "x"
