"""tableFilterV3 on Spark: the previous row is judged with its own columns, pseudo columns too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qtt.harness.selection import load_variants
from qtt.harness.session import Kind, run_items

pytestmark = pytest.mark.spark


def test_a_filter_on_rowtime_judges_the_previous_row_by_its_own_rowtime(spark: Any, tmp_path: Path) -> None:
    # key 1 passes at 2000, then fails at 1000: its previous row (ROWTIME 2000) passed, so it is
    # deleted; judged by the new row's ROWTIME instead, nothing would be emitted
    case = {
        "name": "late rows",
        "statements": [
            "CREATE TABLE t (id INT PRIMARY KEY, v INT) WITH (kafka_topic='t', value_format='JSON');",
            "CREATE TABLE recent AS SELECT * FROM t WHERE ROWTIME > 1500;",
        ],
        "inputs": [
            {"topic": "t", "key": 1, "value": {"v": 1}, "timestamp": 2000},
            {"topic": "t", "key": 1, "value": {"v": 2}, "timestamp": 1000},
            {"topic": "t", "key": 2, "value": {"v": 3}, "timestamp": 1000},
            {"topic": "t", "key": 2, "value": {"v": 4}, "timestamp": 1200},
        ],
        "outputs": [
            {"topic": "RECENT", "key": 1, "value": {"V": 1}, "timestamp": 2000},
            {"topic": "RECENT", "key": 1, "value": None, "timestamp": 1000},
        ],
    }
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"tests": [case]}))
    variants, _ = load_variants([str(path)])
    (result,) = run_items(Kind.CASES, variants, lambda: spark)
    assert result.status == "passed", result.reason
