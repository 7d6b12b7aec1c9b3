"""``--shard K/N``: the membership rule, and that the shards of a selection partition it."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import pytest

from qtt.errors import QttError
from qtt.harness.historical import plan_store
from qtt.harness.selection import load_variants, shard_folders, shard_variants, split_paths
from qtt.harness.shard import Shard, case_identity, folder_identity, parse

REPO = Path(__file__).parents[2]


@pytest.mark.parametrize(("text", "expected"), [("1/1", Shard(1, 1)), ("2/3", Shard(2, 3)), (" 3/3 ", Shard(3, 3))])
def test_parse_reads_k_of_n(text, expected):
    assert parse(text, option="--shard") == expected
    assert str(expected) == text.strip()


@pytest.mark.parametrize(
    ("text", "why"),
    [("0/3", "K=0 is outside 1..N=3"), ("4/3", "K=4 is outside 1..N=3"), ("x", "not a shard"), ("1/0", "K=1")],
)
def test_a_bad_shard_names_the_option_the_value_and_the_form(text, why):
    with pytest.raises(QttError) as info:
        parse(text, option="--qtt-shard")
    assert info.value.message.startswith(f"--qtt-shard {text!r}: ")
    assert why in info.value.message
    assert "expected K/N with 1 <= K <= N" in info.value.message


def test_membership_is_sha256_of_the_identity_modulo_n():
    identity = "cases/smoke.json::a case [JSON]"
    number = int(hashlib.sha256(identity.encode()).hexdigest(), 16)
    assert [Shard(k, 3).holds(identity) for k in (1, 2, 3)] == [number % 3 == k - 1 for k in (1, 2, 3)]


def test_a_case_is_named_by_its_path_relative_to_the_current_directory(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert case_identity("cases/a.json", "x [JSON]") == "cases/a.json::x [JSON]"
    assert case_identity(tmp_path / "cases" / "a.json", "x [JSON]") == "cases/a.json::x [JSON]"
    assert case_identity("./cases/../cases/a.json", "x") == "cases/a.json::x"


def test_the_three_shards_of_the_project_run_every_item_exactly_once(monkeypatch):
    monkeypatch.chdir(REPO)
    paths, folders = split_paths(["cases", "historical_plans"])
    variants, _ = load_variants(paths)
    assert variants and folders
    runs: Counter[str] = Counter()
    for k in (1, 2, 3):
        shard = Shard(k, 3)
        mine = [case_identity(v.file, v.label) for v in shard_variants(variants, shard)]
        mine += [folder_identity(f) for f in shard_folders(folders, shard)]
        assert len(mine) < len(variants) + len(folders)  # each shard is a real part
        runs.update(mine)
    everything = Counter([case_identity(v.file, v.label) for v in variants] + [folder_identity(f) for f in folders])
    assert runs == everything


def _historical(root: Path, *names: str) -> None:
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / plan_store.PLAN_FILE).write_text("{}")


def test_adding_a_folder_moves_no_other_item(tmp_path):
    root = tmp_path / "historical_plans"
    _historical(root, *(f"case_{i}__0123abcd/0.1.0_17000000000{i:02d}" for i in range(30)))

    def shards() -> dict[str, int]:
        folders = split_paths([str(root)])[1]
        return {folder_identity(f): k for k in (1, 2, 3) for f in shard_folders(folders, Shard(k, 3))}

    before = shards()
    _historical(root, "case_0__0123abcd/0.2.0_1800000000000", "another__89abcdef/0.6.0_1800000000000")
    after = shards()
    assert len(after) == len(before) + 2
    assert {name: after[name] for name in before} == before
    assert len(set(before.values())) == 3


def test_a_folder_is_named_by_slug_and_version_wherever_its_root_is(tmp_path):
    assert folder_identity(tmp_path / "a" / "slug__0123abcd" / "0.1.0_1") == "slug__0123abcd/0.1.0_1"
