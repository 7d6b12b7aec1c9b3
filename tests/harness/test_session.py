"""The run session: what a command line selects, and one result per item in the items' order."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from qtt.harness import session
from qtt.harness.results import CaseResult
from qtt.harness.session import Kind, run_batch, select
from qtt.harness.shard import Shard
from qtt.harness.status import Status

FIXTURES = Path(__file__).parents[1] / "fixtures" / "cases"
HISTORICAL = Path(__file__).parents[2] / "historical_plans"


def test_select_loads_variants_places_unloadable_cases_and_keeps_file_order(tmp_path: Path) -> None:
    for name in ("replays.json", "unloadable.json"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    chosen = select([str(tmp_path)])
    assert [p.name for p in chosen.files] == ["replays.json", "unloadable.json"]
    assert chosen.variants and all(v.file.endswith("replays.json") for v in chosen.variants)
    assert chosen.unloadable, "a case that does not load is an error result, not a lost case"
    assert all(result.status == Status.ERROR for _, _, result in chosen.unloadable)
    assert chosen.selected == len(chosen.variants) + len(chosen.unloadable)
    assert not chosen.nothing_selected and chosen.found


def test_select_filters_by_keyword_and_tells_an_empty_selection_from_an_empty_folder(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "replays.json", tmp_path / "replays.json")
    none = select([str(tmp_path)], keyword="no case is named like this")
    assert none.nothing_selected and none.found
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = select([str(empty)])
    assert nothing.nothing_selected and not nothing.found


def test_the_shards_of_a_selection_hold_every_item_once() -> None:
    folders = sorted(HISTORICAL.iterdir())[:6]
    given = [str(FIXTURES / "replays.json"), *map(str, folders)]
    whole = select(given)
    parts = [select(given, shard=Shard(k, 3)) for k in (1, 2, 3)]
    assert sorted(v.label for p in parts for v in p.variants) == sorted(v.label for v in whole.variants)
    assert sorted(f for p in parts for f in p.folders) == sorted(whole.folders)
    assert all(p.selected == whole.selected for p in parts), "every shard counts the whole selection"


@dataclass
class _Item:
    kind: str
    scenario: str
    name: str

    def subject(self) -> Any:
        return self.name


def test_run_batch_runs_each_kind_and_scenario_once_historical_first_and_keeps_the_items_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[Kind, str, list[str]]] = []

    def run_items(
        kind: Kind, items: Sequence[str], _session: object, *, progress: object, scenario: str
    ) -> list[CaseResult]:
        calls.append((kind, scenario, list(items)))
        return [CaseResult(name, name, scenario, Status.PASSED, kind=kind) for name in items]

    monkeypatch.setattr(session, "run_items", run_items)
    items = [
        _Item("case variants", "fresh", "a"),
        _Item("historical plans", "fresh", "h"),
        _Item("case variants", "restart", "b"),
        _Item("case variants", "fresh", "c"),
    ]
    results = run_batch(items)
    assert [(r.file, r.variant) for r in results] == [("a", "fresh"), ("h", "fresh"), ("b", "restart"), ("c", "fresh")]
    assert calls == [
        (Kind.HISTORICAL, "fresh", ["h"]),
        (Kind.CASES, "fresh", ["a", "c"]),
        (Kind.CASES, "restart", ["b"]),
    ]


def test_a_folder_under_a_cases_only_scenario_is_skipped_with_the_reason() -> None:
    folder = sorted(HISTORICAL.iterdir())[0]
    skipped = session.not_for_folders(folder, "restart")
    assert skipped.status == Status.SKIPPED and "case variants" in skipped.reason
