"""Spark's documented refusals: the dated entries that turn a refused restore into a skip."""

from __future__ import annotations

from pathlib import Path

import pytest

from qtt.errors import QttError
from qtt.harness.historical import refusals
from qtt.harness.historical.spark_operations import OPERATIONS
from qtt.harness.replay.scenarios import RESTORES
from qtt.runtime.spark.infrastructure import error_classes

FAILURE = (
    "CTAS_T_0: the state could not be read back: [CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE] "
    "An error occurred during loading state. SQLSTATE: 58030"
)


def test_every_shipped_entry_is_complete_and_names_a_restore_scenario() -> None:
    entries = refusals.entries()
    assert entries
    for entry in entries:
        assert entry.scenario in RESTORES
        assert entry.since[:4].isdigit() and entry.reference.startswith("https://")


def test_a_failure_names_its_error_classes_in_order() -> None:
    assert error_classes(FAILURE) == ["CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"]
    assert error_classes("[A_B] then [C] and [A_B] again, not [lower]") == ["A_B", "C"]


def test_an_entry_covers_its_error_class_and_subclasses_under_its_scenario_and_lines() -> None:
    entry = refusals.Refusal("restored-no-changelog", "CANNOT_LOAD_STATE_STORE", "4.3", "*", "2026-12-02", "r", "u")
    classes = error_classes(FAILURE)
    assert entry.matches("restored-no-changelog", classes, "4.3.0", "4.1.4")
    assert not entry.matches("restored", classes, "4.3.0", "4.1.4")  # another scenario
    assert not entry.matches("restored-no-changelog", classes, "4.2.1", "4.1.4")  # another Spark line
    assert not entry.matches("restored-no-changelog", ["CANNOT_LOAD_STATE_STORE_X"], "4.3.0", "4.3.0")


def test_find_matches_the_shipped_entry_for_changelog_checkpointing_off() -> None:
    found = refusals.find("restored-no-changelog", FAILURE, spark="4.3.0", writer="4.3.0")
    assert found is not None and found.error_class == "CANNOT_LOAD_STATE_STORE"
    assert refusals.find("restored", FAILURE, spark="4.3.0", writer="4.3.0") is None


def test_a_malformed_entry_is_an_error_naming_the_entry_and_what_it_lacks(tmp_path: Path) -> None:
    file = tmp_path / "refusals.toml"
    file.write_text('[[refusal]]\nscenario = "restored"\nerror_class = "X"\n', encoding="utf-8")
    with pytest.raises(QttError, match=r"refusals.toml: refusal entry 1: missing spark, writer, since, reason"):
        refusals.entries(file)
    file.write_text("[[refusal]\n", encoding="utf-8")
    with pytest.raises(QttError, match="not valid TOML"):
        refusals.entries(file)


def test_every_operation_is_a_restore_scenario_with_settings() -> None:
    assert set(OPERATIONS) == set(RESTORES) - {"restored"}
    assert all(op.settings and op.title.startswith("with ") for op in OPERATIONS.values())
