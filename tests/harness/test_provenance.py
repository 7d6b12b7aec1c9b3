"""Who wrote a stored checkpoint and in which state format: manifest versions 1 and 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.errors import PlanFileError
from qtt.harness.historical import checkpoints, provenance
from qtt.runtime.spark.checkpoint_files import relocate

HISTORICAL = Path(__file__).parents[2] / "historical_plans"
STATION = HISTORICAL / "aggregation__counts_sums_and_averages_per_station__880598fa" / "0.7.0_1795620141001"


def test_a_version_1_manifest_still_reads_and_names_its_writer() -> None:
    manifest = checkpoints.stored(STATION)
    assert manifest is not None
    assert manifest.spark_version == "4.3.0" and manifest.pyspark_version == "" and manifest.state_format == {}
    assert manifest.writer == "spark 4.3.0"


def _v2(**changes: object) -> str:
    raw = json.loads((STATION / checkpoints.MANIFEST_FILE).read_text(encoding="utf-8"))
    raw |= {"manifestVersion": 2, "pysparkVersion": "4.1.4", "stateFormat": {"settings": {}, "queries": {}}}
    raw |= changes
    return json.dumps({k: v for k, v in raw.items() if v is not None})


def test_a_version_2_manifest_reads_its_pyspark_version_and_state_format() -> None:
    manifest = checkpoints.loads(_v2(), file="checkpoint.json")
    assert manifest.pyspark_version == "4.1.4" and manifest.state_format == {"settings": {}, "queries": {}}
    assert checkpoints.loads(checkpoints.dumps(manifest), file="again.json") == manifest


@pytest.mark.parametrize(
    ("changes", "message", "path"),
    [
        ({"pysparkVersion": None}, "expected str for pysparkVersion, got None", "$.pysparkVersion"),
        ({"stateFormat": []}, "expected dict for stateFormat", "$.stateFormat"),
        ({"manifestVersion": 3}, "manifestVersion is 3; this qtt reads versions 1 and 2", "$.manifestVersion"),
    ],
)
def test_a_version_2_manifest_without_its_fields_is_refused_at_the_field(
    changes: dict[str, object], message: str, path: str
) -> None:
    with pytest.raises(PlanFileError, match=message) as raised:
        checkpoints.loads(_v2(**changes), file="checkpoint.json")
    assert raised.value.path == path


def test_the_state_format_reads_the_pinned_settings_and_each_operators_versions(tmp_path: Path) -> None:
    checkpoints.unpack((STATION / checkpoints.ARCHIVE_FILE).read_bytes(), tmp_path, file="checkpoint.tar.gz")
    described = provenance.state_format(tmp_path, {provenance.SETTINGS["changelogCheckpointing"]: "true"}.get)
    assert described["settings"] == {"checkpointFormatVersion": None, "changelogCheckpointing": "true"}
    assert set(described["queries"]) == {"CTAS_PER_STATION_0"}
    station = described["queries"]["CTAS_PER_STATION_0"]
    assert station["pinned"]["spark.sql.streaming.stateStore.rocksdb.formatVersion"] == "5"
    assert station["operators"] == [
        {"id": 0, "metadataVersion": "v2", "name": "transformWithStateInPySparkExec", "stateSchemaVersions": ["v3"]}
    ]


def test_a_checkpoint_relocated_names_only_its_new_place(tmp_path: Path) -> None:
    checkpoints.unpack((STATION / checkpoints.ARCHIVE_FILE).read_bytes(), tmp_path, file="checkpoint.tar.gz")
    manifest = checkpoints.stored(STATION)
    assert manifest is not None
    query = tmp_path / "CTAS_PER_STATION_0"
    relocate(query, manifest.written_at["CTAS_PER_STATION_0"], provenance.stored_at("CTAS_PER_STATION_0"))
    text = "".join(p.read_text() for p in query.glob("state/*/_metadata/v2/*") if not p.name.startswith("."))
    assert "qtt-capture-" not in text and "file:/qtt-stored-checkpoint/CTAS_PER_STATION_0/state/0/" in text


def test_a_stateful_plan_wants_a_folder_until_one_of_its_folders_holds_todays_checkpoint(tmp_path: Path) -> None:
    import shutil

    import pyspark

    from qtt.harness.historical import plan_store
    from qtt.harness.historical.snapshot import _checkpoint_wanted
    from qtt.harness.historical.uptodate import load_persisted

    plan = load_persisted((STATION / plan_store.PLAN_FILE).read_text(encoding="utf-8"), file="plan.json")
    older = tmp_path / STATION.parent.name / "0.7.0_1795620141001"
    shutil.copytree(STATION, older)
    manifest = json.loads((older / checkpoints.MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest["sparkVersion"] = "3.5.0"  # a line older than any qtt runs on: never today's
    (older / checkpoints.MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    wanted = _checkpoint_wanted(plan, older)
    assert f"written by Spark 3.5.0, none by today's {pyspark.__version__}" in wanted
    today = older.parent / "0.7.0_1795620141002"  # a later folder of the same plan, by today's Spark
    shutil.copytree(STATION, today)
    manifest["sparkVersion"] = pyspark.__version__
    (today / checkpoints.MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    assert _checkpoint_wanted(plan, today) == "" and _checkpoint_wanted(plan, older) == ""
    (today / plan_store.PLAN_FILE).write_text("{}", encoding="utf-8")  # another plan's checkpoint does not count
    assert "none by today's" in _checkpoint_wanted(plan, older)
