"""Subjects, ids and schema texts are part of what a historical plan proves."""

from __future__ import annotations

from pathlib import Path

import pytest

from qtt.harness.historical import plan_store
from qtt.harness.historical.replay import compare_schemas, replay_folders
from qtt.harness.replay import schemas, topic_serdes
from qtt.runtime.build import serde_udfs
from qtt.serde.registry import avro_schema
from qtt.serde.registry.schema_registry import RegisteredSchema

ROOT = Path(__file__).resolve().parents[2] / "historical_plans"


def _schema(subject: str, schema_id: int = 1, text: str = '{"type":"int"}') -> RegisteredSchema:
    return RegisteredSchema(subject=subject, version=1, schema_id=schema_id, schema_type="AVRO", schema=text)


def test_a_different_subject_id_or_schema_is_named() -> None:
    recorded = [_schema("OUT-value"), _schema("OUT-key", 2)]
    assert compare_schemas(recorded, recorded) == []
    assert compare_schemas(recorded, [_schema("OUT-value"), _schema("OUT-key", 3)]) == [
        "schema registry subject OUT-key: recorded schema id 2, now 3"
    ]
    [moved] = compare_schemas([_schema("OUT-value")], [_schema("OUT-val")])
    assert moved == "schema registry subject OUT-value: recorded subject OUT-value, now OUT-val"
    [gone] = compare_schemas(recorded, recorded[:1])
    assert gone.startswith("schema registry subject OUT-key: not registered now")


def _named_record_folder() -> Path:
    return next(f for f in plan_store.folders(ROOT) if "value_avro_schema_full_name_names" in f.parent.name.lower())


def _avro_value_folder() -> Path:
    return next(f for f in plan_store.folders(ROOT) if "avro_structs_arrays_and_maps" in f.parent.name)


@pytest.mark.spark
@pytest.mark.usefixtures("no_active_streams")
def test_registering_under_another_subject_or_record_name_fails_an_old_plan(spark, monkeypatch) -> None:
    folder = _avro_value_folder()
    assert [r.status for r in replay_folders([folder], lambda: spark)] == ["passed"]

    monkeypatch.setattr(avro_schema, "DEFAULT_FULL_NAME", "io.confluent.ksql.avro_schemas.Renamed")
    [renamed] = replay_folders([folder], lambda: spark)
    assert renamed.status == "failed"
    assert any(p.startswith("schema registry subject ORDER_CITIES-value: recorded schema") for p in renamed.problems)
    monkeypatch.undo()

    def other_subject(topic: str, *, is_key: bool) -> str:
        return f"{topic}-{'k' if is_key else 'v'}"

    # the runtime registers, and writes, under other subjects (both decided on the driver)
    monkeypatch.setattr(schemas, "subject_for", other_subject)
    monkeypatch.setattr(serde_udfs, "subject_for", other_subject)
    monkeypatch.setattr(topic_serdes, "subject_for", other_subject)
    [moved] = replay_folders([_named_record_folder()], lambda: spark)
    assert moved.status == "failed", moved.reason
    assert any("schema registry subject" in p and "LONG_TRIPS" in p for p in moved.problems), moved.reason
