"""Windowed aggregations on the shared stateful path: the same facts on every run and in any grouping.

Hopping, session and EMIT FINAL cases of ``cases/windows.json`` are replayed alone, together,
and together in the other order: outputs (with their windowed keys), processing logs, internal
topics and step schemas must be the same each time, and their state shows up as internal
topics keyed by window.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qtt.errors import QttError
from qtt.harness import driver
from qtt.harness.driver import ReplayItem, ReplayResult, replay_many
from qtt.harness.loader import load_file
from qtt.harness.runner import plan_variant

CASES = Path(__file__).parents[2] / "cases" / "windows.json"
NAMES = ("hopping windows:", "session windows merge", "EMIT FINAL: each")


def _items() -> list[ReplayItem]:
    variants = [v for v in load_file(CASES).variants if v.case.startswith(NAMES)]
    assert len(variants) == len(NAMES)
    return [ReplayItem.from_case(plan_variant(v).plan, v.inputs) for v in variants]


def _facts(result: ReplayResult | QttError) -> dict[str, Any]:
    assert isinstance(result, ReplayResult), result
    return {
        "outputs": {
            topic: [(r.key_bytes, r.value_bytes, r.timestamp, r.seq, r.window) for r in records]
            for topic, records in result.outputs.items()
        },
        "log": result.processing_log,
        "internal": [(t.name, t.key_schema, t.value_schema, t.records) for t in result.internal_topics],
        "steps": result.step_schemas,
    }


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_windowed_replays_record_the_same_facts_on_every_run_and_in_any_group(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(driver, "GROUP_SIZE", 1)
    alone = replay_many(_items(), session=spark, capture_state=True)
    monkeypatch.undo()
    together = replay_many(_items(), session=spark, capture_state=True)
    reversed_ = replay_many(_items()[::-1], session=spark, capture_state=True)[::-1]

    assert [r.runs[-1].group_size for r in together] == [3, 3, 3]  # type: ignore[union-attr]
    for one, grouped, other in zip(alone, together, reversed_, strict=True):
        assert _facts(grouped) == _facts(one)
        assert _facts(other) == _facts(one)

    hopping, session, final = (_facts(r) for r in alone)
    names = {name for name, *_ in hopping["internal"]}
    assert names == {
        "CTAS_SUMS_0-Aggregate-Aggregate-changelog",
        "CTAS_SUMS_0-Aggregate-Aggregate-StreamTime-changelog",
    }
    by_name = {name: (key, value, records) for name, key, value, records in hopping["internal"]}
    key_schema, _, records = by_name["CTAS_SUMS_0-Aggregate-Aggregate-changelog"]
    assert "WINDOWSTART" in key_schema and "WINDOWEND" in key_schema  # state is kept per key and window
    assert {json.dumps(r.key, sort_keys=True) for r in records} >= {
        json.dumps({"SENSOR": "a", "WINDOWSTART": 10000, "WINDOWEND": 40000}, sort_keys=True)
    }
    _, _, times = by_name["CTAS_SUMS_0-Aggregate-Aggregate-StreamTime-changelog"]
    assert [r.value for r in times][-1] == {"streamTime": 41000}  # the late readings did not move it back
    assert any(name.endswith("-Final-changelog") for name, *_ in final["internal"])
    windows = [w for *_, w in session["outputs"]["SESSIONS"]]
    assert windows[1] is not None and (windows[1].start, windows[1].end, windows[1].type) == (1000, 1000, "session")
