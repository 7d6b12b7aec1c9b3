"""ksqlDB's historical plans on Spark: replayed from qtt run's session, and imported as qtt
folders that then replay like qtt's own (on plans of our own in ksqlDB's format)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qtt.harness.historical import ledger, spec
from qtt.harness.historical.replay import replay_folders
from qtt.harness.ksqldb.folders import ksqldb_folders
from qtt.harness.ksqldb.importer import Action, import_folders
from qtt.harness.session import run_selection, select
from qtt.harness.status import Status

PLANS = Path(__file__).parent.parent / "fixtures" / "ksqldb_plans"


@pytest.mark.spark
def test_every_folder_replays_or_names_the_step_it_skips_and_equal_plans_replay_once(spark, tmp_path: Path) -> None:
    tree = tmp_path / "ksqldb"
    shutil.copytree(PLANS, tree)
    # a folder whose case expects another output: the translated plan still computes its own
    wrong = tree / "parcels_-_heavy_parcels" / "8.0.0_1700000000011" / "spec.json"
    recorded = json.loads(wrong.read_text())
    recorded["testCase"]["outputs"][0]["value"]["GRAMS"] = 1
    wrong.write_text(json.dumps(recorded))
    # a folder whose recorded sink schema is not the one qtt's plan gives
    hourly = tree / "parcels_-_heaviest_per_hour" / "6.2.0_1700000000003" / "spec.json"
    recorded = json.loads(hourly.read_text())
    recorded["schemas"]["CTAS_HOURLY_0.HOURLY"] = {"schema": "`DEPOT` STRING KEY, `HEAVIEST` BIGINT"}
    hourly.write_text(json.dumps(recorded))

    results = run_selection(select([str(tree)]), session=lambda: spark).results

    by_folder = {Path(r.file).relative_to(tree).as_posix(): r for r in results}
    assert {name: r.status for name, r in by_folder.items()} == {
        "parcels_-_depots_by_city/8.0.1_1700000000006": Status.SKIPPED,
        "parcels_-_final_heaviest_per_hour/7.0.0_1700000000005": Status.PASSED,
        "parcels_-_final_heaviest_per_session/7.1.0_1700000000012": Status.PASSED,
        "parcels_-_heaviest_per_hour/6.2.0_1700000000003": Status.FAILED,
        "parcels_-_heavy_parcels/7.1.0_1700000000001": Status.PASSED,
        "parcels_-_heavy_parcels/8.0.0_1700000000011": Status.FAILED,
        "parcels_-_items_of_each_shipment/7.3.0_1700000000007": Status.PASSED,
        "parcels_-_load_per_depot_and_bay/6.0.0_1700000000009": Status.PASSED,
        "parcels_-_orders_named_by_customer/7.3.0_1700000000008": Status.PASSED,
        "parcels_-_parcels_routed_to_their_depot_city/8.0.0_1700000000004": Status.PASSED,
        "parcels_-_scans_matched_by_key_field/6.0.0_1700000000013": Status.PASSED,
        "parcels_-_scans_matched_with_labels/5.5.0_1700000000006": Status.PASSED,
        "parcels_-_weight_per_depot/6.1.0_1700000000002": Status.PASSED,
    }
    assert "ksqlDB step tableSelectKeyV1" in by_folder["parcels_-_depots_by_city/8.0.1_1700000000006"].reason
    assert "outputs differ on HEAVY" in by_folder["parcels_-_heavy_parcels/8.0.0_1700000000011"].reason
    assert {r.kind for r in results} == {"ksqldb"}
    heavy = by_folder["parcels_-_heavy_parcels/7.1.0_1700000000001"]
    assert heavy.reason == "compared 2 output record(s) on HEAVY; 2 step schema(s)"
    hourly = by_folder["parcels_-_heaviest_per_hour/6.2.0_1700000000003"]
    assert hourly.reason == "1 step schema(s) differ from what ksqlDB recorded"
    assert hourly.problems == [
        "step schema CTAS_HOURLY_0.HOURLY: ksqlDB recorded `DEPOT` STRING KEY, `HEAVIEST` BIGINT, "
        "qtt's plan gives `DEPOT` STRING KEY, `HEAVIEST` INTEGER"
    ]


@pytest.mark.spark
def test_imported_folders_replay_as_qtt_s_own_and_a_second_import_adds_nothing(spark, tmp_path: Path) -> None:
    root = tmp_path / "historical_plans"
    folders = ksqldb_folders(PLANS)

    first = import_folders(folders, root, lambda: spark, version="9.9.9")

    actions = {entry.source.relative_to(PLANS).as_posix(): entry.action for entry in first}
    assert actions == {
        "parcels_-_depots_by_city/8.0.1_1700000000006": Action.SKIPPED,
        "parcels_-_final_heaviest_per_hour/7.0.0_1700000000005": Action.IMPORTED,
        "parcels_-_final_heaviest_per_session/7.1.0_1700000000012": Action.IMPORTED,
        "parcels_-_heaviest_per_hour/6.2.0_1700000000003": Action.IMPORTED,
        "parcels_-_heavy_parcels/7.1.0_1700000000001": Action.IMPORTED,
        "parcels_-_heavy_parcels/8.0.0_1700000000011": Action.UNCHANGED,  # the same plan as 7.1.0's
        "parcels_-_items_of_each_shipment/7.3.0_1700000000007": Action.IMPORTED,
        "parcels_-_load_per_depot_and_bay/6.0.0_1700000000009": Action.IMPORTED,
        "parcels_-_orders_named_by_customer/7.3.0_1700000000008": Action.IMPORTED,
        "parcels_-_parcels_routed_to_their_depot_city/8.0.0_1700000000004": Action.IMPORTED,
        "parcels_-_scans_matched_by_key_field/6.0.0_1700000000013": Action.IMPORTED,
        "parcels_-_scans_matched_with_labels/5.5.0_1700000000006": Action.IMPORTED,
        "parcels_-_weight_per_depot/6.1.0_1700000000002": Action.IMPORTED,
    }
    written = sorted(entry.folder for entry in first if entry.folder is not None)
    assert [f.name for f in written if "heavy_parcels" in f.parent.name] == ["9.9.9_1700000000001"]
    recorded = spec.loads((written[0] / "spec.json").read_text())
    assert recorded.provenance["ksqldb"]["caseFile"] == "query-validation-tests/parcels.json"
    assert recorded.case.file == "ksqldb/query-validation-tests/parcels.json"
    assert all(ledger.load(root).recorded(folder) for folder in written)

    replayed = replay_folders(written, lambda: spark)
    assert [(r.status, r.reason) for r in replayed] == [(Status.PASSED, "")] * len(written)

    again = import_folders(folders, root, lambda: spark, version="9.9.9")
    assert {entry.action for entry in again} == {Action.UNCHANGED, Action.SKIPPED}
