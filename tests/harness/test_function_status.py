"""The generated function status page matches qtt's signature tables and lists every function."""

from __future__ import annotations

from pathlib import Path

from qtt.harness.upkeep.function_status import render
from qtt.plan.functions import aggregate_signatures
from qtt.plan.functions.reference import REFERENCE

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "function-status.md"


def test_the_page_is_what_the_tables_generate() -> None:
    assert PAGE.read_text(encoding="utf-8") == render() + "\n", (
        "docs/reference/function-status.md is out of date: "
        "python -m qtt.harness.upkeep.function_status docs/reference/function-status.md"
    )


def test_every_reference_function_and_known_aggregate_has_a_row_with_a_status() -> None:
    rows = {line.split("|")[1].strip(" `"): line for line in render().splitlines() if line.startswith("| `")}
    assert {f.name for f in REFERENCE} | aggregate_signatures.AGGREGATE_NAMES <= set(rows)
    statuses = {row.split("|")[3].strip().split(":")[0] for row in rows.values()}
    assert statuses <= {"supported", "partly", "skipped", "syntax", "refused"}
    assert "| refused: a ksqlDB proposal that was never merged" in rows["COLLECT_MAP"]
    assert "`CONVERT_TZ(TIMESTAMP, STRING, STRING)` |" in rows["CONVERT_TZ"] and "| supported |" in rows["CONVERT_TZ"]
    assert "TIME," not in rows["CONVERT_TZ"]  # ksqlDB converts timestamps only
