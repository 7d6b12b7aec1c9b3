"""Telling ksqlDB's historical plan folders from qtt's, and reading their cases (no Spark)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qtt.errors import PlanFileError
from qtt.harness.ksqldb.folders import holds_ksqldb_plans, is_ksqldb_folder, ksqldb_folders, read_folder
from qtt.harness.ksqldb.replay import spec_case
from qtt.harness.selection import split_ksqldb

PLANS = Path(__file__).parent.parent / "fixtures" / "ksqldb_plans"
OURS = Path(__file__).parent.parent.parent / "historical_plans"


def test_a_tree_a_case_folder_and_a_version_folder_all_name_their_plans() -> None:
    every = ksqldb_folders(PLANS)
    assert len(every) == 13
    case = PLANS / "parcels_-_heavy_parcels"
    assert ksqldb_folders(case) == sorted(case.iterdir())
    assert ksqldb_folders(every[0]) == [every[0]]
    assert all(holds_ksqldb_plans(p) for p in (PLANS, case, every[0]))


def test_qtt_s_own_historical_folders_are_not_ksqldb_s() -> None:
    assert not holds_ksqldb_plans(OURS)
    ours = next(p for p in sorted(OURS.iterdir()) if p.is_dir())
    assert not holds_ksqldb_plans(ours)
    assert not any(is_ksqldb_folder(p) for p in ours.iterdir())


def test_the_command_line_splits_ksqldb_trees_from_other_paths() -> None:
    rest, found = split_ksqldb(["cases", str(PLANS / "parcels_-_heavy_parcels"), "historical_plans"])
    assert rest == ["cases", "historical_plans"]
    assert [p.name for p in found] == ["7.1.0_1700000000001", "8.0.0_1700000000011"]


def test_a_folder_that_does_not_read_names_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "case" / "7.1.0_1700000000001"
    shutil.copytree(PLANS / "parcels_-_heavy_parcels" / "7.1.0_1700000000001", folder)
    (folder / "plan.json").write_text("{ not json")
    with pytest.raises(PlanFileError, match=r"plan\.json: cannot be read as JSON"):
        read_folder(folder)
    (folder / "plan.json").write_text(json.dumps({"statements": []}))
    with pytest.raises(PlanFileError, match=r"not a ksqlDB plan"):
        read_folder(folder)


def test_spec_json_s_own_topic_fields_are_left_out_of_the_case(tmp_path: Path) -> None:
    folder = tmp_path / "case" / "7.1.0_1700000000001"
    shutil.copytree(PLANS / "parcels_-_heavy_parcels" / "7.1.0_1700000000001", folder)
    spec = json.loads((folder / "spec.json").read_text())
    spec["testCase"]["topics"] = [{"name": "parcels", "numPartitions": 4, "valueSerdeFeatures": []}]
    internal = "_confluent-ksql-some.ksql.service.idquery_CSAS_HEAVY_0-Reduce-changelog"
    topics = [{"name": "HEAVY", "partitions": 4, "valueFormat": {"format": "JSON"}}, {"name": internal}]
    spec["testCase"]["post"] = {"topics": {"blackList": ".*-repartition", "topics": topics}}
    (folder / "spec.json").write_text(json.dumps(spec))
    case = spec_case(read_folder(folder))
    assert case["topics"] == [{"name": "parcels"}]
    assert case["post"]["topics"] == {
        "blacklist": ".*-repartition",
        "topics": [{"name": "HEAVY", "valueFormat": {"format": "JSON"}}],
    }


def test_k_selects_ksqldb_folders_by_case_folder_and_version() -> None:
    from qtt.harness.session import select

    chosen = select([str(PLANS)], keyword="heavy_parcels/8.0")
    assert [p.name for p in chosen.ksqldb_folders] == ["8.0.0_1700000000011"]
    assert chosen.items == 1 and not chosen.folders


def test_import_ksqldb_refuses_a_path_without_ksqldb_plans(capsys: pytest.CaptureFixture[str]) -> None:
    from qtt.cli import main

    assert main(["import-ksqldb", str(OURS)]) == 2
    assert "holds no ksqlDB historical plan folder" in capsys.readouterr().err


def test_the_spec_s_numbers_read_exact_as_a_case_file_s_do(tmp_path: Path) -> None:
    from decimal import Decimal

    folder = tmp_path / "case" / "7.1.0_1700000000001"
    shutil.copytree(PLANS / "parcels_-_heavy_parcels" / "7.1.0_1700000000001", folder)
    text = (folder / "spec.json").read_text().replace('"WEIGHT": 12', '"WEIGHT": 12345678987654321.2345678987654321')
    (folder / "spec.json").write_text(text)
    (first, second, *_) = read_folder(folder).spec["testCase"]["inputs"]
    assert second["value"]["WEIGHT"] == Decimal("12345678987654321.2345678987654321")  # not a double's 17 digits
    assert first["value"]["WEIGHT"] == 4 and isinstance(first["value"]["WEIGHT"], int)
