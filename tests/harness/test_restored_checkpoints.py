"""Stored checkpoints: ``qtt snapshot`` keeps a stateful plan's checkpoint, and today's runtime resumes it.

One table aggregation (two stateful operators: a table group-by and an aggregate) is snapshotted
into a temporary historical root; the restored replay must give the recorded outputs and state
changes from the restore point on. A runtime whose aggregate keeps its state in another layout
cannot resume the checkpoint, and the restored replay says which state variable it could not read.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from pyspark.sql import types as st

from qtt.harness.cases.loader import load_file
from qtt.harness.historical import checkpoints
from qtt.harness.historical.replay import replay_folders
from qtt.harness.historical.restored import has_checkpoint, offsets_at_point, restore_folders, settled
from qtt.harness.historical.snapshot import Action, snapshot
from qtt.harness.historical.spec import Spec, SpecCase, SpecInternalRecord, SpecInternalTopic, SpecRecord
from qtt.harness.status import Status
from qtt.runtime.operators import stateful
from qtt.runtime.spark import merged_checkpoints
from tests.harness.replaced_aggregate import replaced_aggregate

STATEMENTS = [
    "CREATE TABLE shelves (sku VARCHAR PRIMARY KEY, aisle VARCHAR, units INT) "
    "WITH (kafka_topic='shelves', value_format='JSON');",
    "CREATE TABLE per_aisle AS SELECT aisle, COUNT(*) AS skus, SUM(units) AS units FROM shelves GROUP BY aisle;",
]
INPUTS = [
    {"topic": "shelves", "key": "tea", "value": {"aisle": "a1", "units": 4}},
    {"topic": "shelves", "key": "rice", "value": {"aisle": "a1", "units": 9}},
    {"topic": "shelves", "key": "oats", "value": {"aisle": "a2", "units": 2}},
    {"topic": "shelves", "key": "tea", "value": {"aisle": "a2", "units": 5}},
    {"topic": "shelves", "key": "rice", "value": {"aisle": "a1", "units": 6}},
    {"topic": "shelves", "key": "figs", "value": {"aisle": "a1", "units": 1}},
]
OUTPUTS = [
    {"topic": "PER_AISLE", "key": aisle, "value": {"SKUS": skus, "UNITS": units}}
    for aisle, skus, units in [
        ("a1", 1, 4),
        ("a1", 2, 13),
        ("a2", 1, 2),
        ("a1", 1, 9),  # tea moves to a2: retracted from a1, then added to a2
        ("a2", 2, 7),
        ("a1", 1, 6),
        ("a1", 2, 7),
    ]
]


def _case(tmp_path: Path) -> Path:
    marked = [dict(record) for record in INPUTS]
    marked[1]["qttRestorePoint"] = True
    tests = [
        {"name": "shelves per aisle", "statements": STATEMENTS, "inputs": INPUTS, "outputs": OUTPUTS},
        {"name": "shelves per aisle, early point", "statements": STATEMENTS, "inputs": marked, "outputs": OUTPUTS},
    ]
    path = tmp_path / "cases" / "shelves.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"tests": tests}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def snapshotted(spark, tmp_path_factory) -> list[Path]:  # type: ignore[no-untyped-def]
    tmp_path = tmp_path_factory.mktemp("restore")
    root = tmp_path / "historical_plans"
    entries = snapshot(list(load_file(_case(tmp_path)).variants), lambda: spark, root=root, version="9.9.9")
    assert [e.action for e in entries] == [Action.ADDED, Action.ADDED], [e.reason for e in entries]
    return [entry.folder for entry in entries]  # type: ignore[misc]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_a_stateful_folder_stores_a_small_checkpoint_at_its_restore_point(snapshotted: list[Path]) -> None:
    middle, early = (checkpoints.stored(folder) for folder in snapshotted)
    assert middle is not None and early is not None
    assert middle.restore_point == 3  # the middle of six inputs
    assert early.restore_point == 1  # the record marked qttRestorePoint
    assert list(middle.consumed.values()) == [3] and list(early.consumed.values()) == [1]
    assert middle.outputs_before == {"PER_AISLE": 3}
    archive = snapshotted[0] / checkpoints.ARCHIVE_FILE
    assert archive.stat().st_size < 64 * 1024
    with tarfile.open(archive) as stored:
        names = stored.getnames()
    query = next(iter(middle.consumed))
    assert f"{query}/commits/2" in names and f"{query}/offsets/2" in names
    assert any(name.startswith(f"{query}/state/") and name.endswith(".changelog") for name in names)


@pytest.mark.spark
@pytest.mark.slow
def test_a_stored_checkpoint_says_who_wrote_it_and_in_which_format_and_nothing_of_the_machine(
    snapshotted: list[Path],
) -> None:
    import pyspark

    manifest_text = (snapshotted[0] / checkpoints.MANIFEST_FILE).read_text(encoding="utf-8")
    raw = json.loads(manifest_text)
    assert raw["manifestVersion"] == 2 and raw["pysparkVersion"] == pyspark.__version__
    assert raw["qttVersion"] == "9.9.9"
    query = next(iter(raw["consumed"]))
    assert raw["writtenAt"] == {query: f"/qtt-stored-checkpoint/{query}"}
    state_format = raw["stateFormat"]
    assert state_format["settings"]["changelogCheckpointing"] == "true"
    written = state_format["queries"][query]
    assert written["pinned"]["spark.sql.streaming.stateStore.providerClass"].endswith("RocksDBStateStoreProvider")
    assert written["pinned"]["spark.sql.shuffle.partitions"]
    assert {op["metadataVersion"] for op in written["operators"]} == {"v2"}
    assert written["operators"][0]["stateSchemaVersions"]
    with tarfile.open(snapshotted[0] / checkpoints.ARCHIVE_FILE) as stored:
        text = b"".join(
            stored.extractfile(member).read()  # type: ignore[union-attr]
            for member in stored.getmembers()
            if "/_metadata/" in member.name
        )
    assert b"qtt-capture-" not in text and b"/tmp/" not in text and b"/qtt-stored-checkpoint/" in text
    assert "qtt-capture-" not in manifest_text


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_the_restored_replay_gives_the_recorded_outputs_and_state_changes_after_the_point(
    spark, snapshotted: list[Path]
) -> None:  # type: ignore[no-untyped-def]
    assert all(has_checkpoint(folder) for folder in snapshotted)
    restored = restore_folders(snapshotted, lambda: spark)
    assert [r.status for r in restored] == [Status.PASSED, Status.PASSED], [r.reason for r in restored]
    middle = restored[0].replay
    assert middle is not None
    # only what the inputs from the point on caused: not a vacuous comparison
    assert [r.seq for r in middle.outputs["PER_AISLE"]] == [3, 3, 4, 5]
    # the inputs after the point ran in one micro-batch, and the state was read as it ended
    assert [run.batches for run in middle.runs] == [4]  # 3 consumed before the point, 1 after
    last = [record for topic in middle.internal_topics for record in topic.records]
    assert last and {record.batch for record in last} == {-1}
    # the fresh replay of the same folders still passes next to it
    assert [r.status for r in replay_folders(snapshotted, lambda: spark)] == [Status.PASSED, Status.PASSED]


class RelaidAggregate(stateful.AggregateProcessor):
    """An aggregate that keeps one more field in its state: a changed state layout."""

    def stored_schema(self) -> st.StructType:
        return st.StructType([*super().stored_schema().fields, st.StructField("EXTRA", st.LongType())])


@pytest.fixture
def relaid(monkeypatch):  # type: ignore[no-untyped-def]
    with replaced_aggregate(monkeypatch, RelaidAggregate):
        yield


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams", "relaid")
def test_a_changed_state_layout_fails_the_restored_replay_and_names_the_state_variable(
    spark, snapshotted: list[Path]
) -> None:  # type: ignore[no-untyped-def]
    restored = restore_folders(snapshotted[:1], lambda: spark)[0]
    assert restored.status == Status.FAILED
    assert "cannot resume the stored checkpoint" in restored.reason
    assert "operator 0, state variable Aggregate-Aggregate" in restored.reason, restored.reason
    assert "EXTRA" in restored.reason  # what today's operator expects


REPO = Path(__file__).parents[2]
#: stored checkpoints of joins (no aggregate), written by the same Spark as the snapshots here
JOINS = [
    REPO / "historical_plans" / slug / folder
    for slug, folder in (
        (
            "joins__a_full_outer_stream-stream_join_on_value_columns_re-keys_both_sides_and_has_a_sy__5302bf5e",
            "0.9.0_1795661597511",
        ),
        (
            "joins__a_stream_joined_on_a_value_column_is_re-keyed_by_it_and_rows_without_a_join_key___083085cf",
            "0.9.0_1795661597511",
        ),
        ("joins__a_stream_joined_with_two_tables_in_one_statement__ee90018b", "0.9.0_1795661597511"),
    )
]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_restores_share_a_streaming_query_over_a_merged_checkpoint_and_each_holds(
    spark, snapshotted: list[Path]
) -> None:  # type: ignore[no-untyped-def]
    restored = restore_folders([*snapshotted, *JOINS], lambda: spark)
    assert [r.status for r in restored] == [Status.PASSED] * 5, [r.reason for r in restored]
    shared = [r for r in restored if r.replay is not None and any(run.group_size > 1 for run in r.replay.runs)]
    assert len(shared) >= 3, "the first restore runs alone, the others of one Spark share a query"


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams", "relaid")
def test_a_merged_restore_that_fails_resumes_each_alone_and_only_the_broken_one_fails(
    spark, snapshotted: list[Path]
) -> None:  # type: ignore[no-untyped-def]
    restored = restore_folders([*JOINS, snapshotted[0]], lambda: spark)
    assert [r.status for r in restored] == [Status.PASSED] * 3 + [Status.FAILED], [r.reason for r in restored]
    assert "operator 0, state variable Aggregate-Aggregate" in restored[-1].reason, restored[-1].reason


#: restores that once failed: a join's repartition topic and store after the point (ROWOFFSET
#: goes on from the recorded run's offsets), a resumed query with no input after the point,
#: and a second join's repartition branch that computes the first join again (an operator copy)
RESUMED_AFTER_JOINS = [
    REPO / "historical_plans" / slug / folder
    for slug, folder in (
        ("tutorial_specs__tutorial_etl_pipeline__bf783795", "0.13.0_1796546940147"),
        (
            "tutorial_specs__tutorial_drivers_enriched_from_a_table_then_met_with_riders_within_a_minute__05fe228f",
            "0.13.0_1796546940147",
        ),
        ("kafka_tutorials_l_z__tutorial_l-z_stream_left_joined_to_two_tables__8fb1ec48", "0.13.0_1796549787245"),
    )
]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_restores_after_joins_go_on_from_the_recorded_offsets_and_skip_operator_copies(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    copied = RESUMED_AFTER_JOINS[2] / checkpoints.ARCHIVE_FILE
    checkpoints.unpack(copied.read_bytes(), tmp_path, file=str(copied))
    # its repartition branch's copy of the first join would take the wrong id in a merged query
    assert merged_checkpoints.merge_key(tmp_path / "CSAS_CARTS_FULL_0") is None
    restored = restore_folders(RESUMED_AFTER_JOINS, lambda: spark)
    assert [r.status for r in restored] == [Status.PASSED] * 3, [r.reason for r in restored]


def test_a_restore_goes_on_from_the_offsets_the_recorded_run_had_reached_at_the_point() -> None:
    def record(topic: str, partition: int = 0) -> SpecRecord:
        return SpecRecord(topic=topic, timestamp=0, key_bytes=None, value_bytes=None, partition=partition)

    manifest = checkpoints.Manifest("4.3.0", "rocksdb", "0.13.0", restore_point=3, outputs_before={"OUT": 2})
    recorded = Spec(
        spec_version=1,
        qtt_version="0.13.0",
        spark_version="4.3.0",
        case=SpecCase(file="c.json", name="c", variant=""),
        statements=(),
        inputs=(record("in"), record("in", 1), record("in"), record("in")),
        outputs=(record("OUT", 1), record("OUT"), record("OUT", 1)),
    )
    # inputs 0-2 and the first two outputs came before the point
    assert offsets_at_point(recorded, manifest) == {("in", 0): 2, ("in", 1): 1, ("OUT", 1): 1, ("OUT", 0): 1}


def _topic(name: str, *records: SpecInternalRecord) -> SpecInternalTopic:
    return SpecInternalTopic(name=name, key_schema="k", value_schema="v", records=records)


def test_a_restore_is_judged_on_each_key_s_last_change_and_the_appends_after_the_point() -> None:
    manifest = checkpoints.Manifest("4.3.0", "rocksdb", "0.13.0", restore_point=2, consumed={"CTAS_T_0": 2})
    recorded = _topic(
        "CTAS_T_0-Aggregate-Aggregate-changelog",
        SpecInternalRecord(key={"K": "a"}, value={"N": 1}, change="update", batch=0),
        SpecInternalRecord(key={"K": "b"}, value={"N": 1}, change="update", batch=1),
        SpecInternalRecord(key={"K": "a"}, value={"N": 2}, change="update", batch=2),
        SpecInternalRecord(key={"K": "b"}, value=None, change="delete", batch=3),
    )
    assert settled(recorded, manifest).records == (
        SpecInternalRecord(key={"K": "a"}, value={"N": 2}, change="update", batch=-1),
        SpecInternalRecord(key={"K": "b"}, value=None, change="delete", batch=-1),
    )
    # what the resumed query read back: each key's last change after the point
    now = _topic(
        recorded.name,
        SpecInternalRecord(key={"K": "b"}, value=None, change="delete", batch=-1),
        SpecInternalRecord(key={"K": "a"}, value={"N": 2}, change="update", batch=-1),
    )
    assert settled(now) == settled(recorded, manifest)
    wrong = _topic(recorded.name, SpecInternalRecord(key={"K": "a"}, value={"N": 2}, change="update", batch=-1))
    assert settled(wrong) != settled(recorded, manifest)  # b was not deleted
    repartition = _topic(
        "CTAS_T_0-Join-repartition",
        SpecInternalRecord(key={"K": "a"}, value={"N": 1}, change="append", batch=1, timestamp=1),
        SpecInternalRecord(key={"K": "a"}, value={"N": 2}, change="append", batch=2, timestamp=2),
    )
    assert settled(repartition, manifest).records == (
        SpecInternalRecord(key={"K": "a"}, value={"N": 2}, change="append", batch=0, timestamp=2),
    )
