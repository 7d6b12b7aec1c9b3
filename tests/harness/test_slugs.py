"""Slug rules: historical plan folder names and pytest node ids."""

from __future__ import annotations

from qtt.harness.model import CaseVariant
from qtt.harness.slugs import case_slug, node_names, node_slug


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


def _variant(case: str, variant: str = "") -> CaseVariant:
    return CaseVariant(
        file="cases/f.json",
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
