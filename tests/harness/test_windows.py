"""Windowed aggregations on the shared stateful path: the same facts on every run and in any grouping.

Hopping, session and EMIT FINAL cases of ``cases/windows.json`` are replayed alone, together,
and together in the other order: outputs (with their windowed keys), processing logs, internal
topics and step schemas must be the same each time, and their state shows up as internal
topics keyed by window.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.harness.replay.driver import ReplayItem
from tests.harness.groupings import assert_same_facts, case_items, facts, replay_in_three_groupings

CASES = Path(__file__).parents[2] / "cases" / "windows.json"
NAMES = ("hopping windows:", "session windows merge", "EMIT FINAL: each")


def _items() -> list[ReplayItem]:
    return case_items(CASES, NAMES)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_windowed_replays_record_the_same_facts_on_every_run_and_in_any_group(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    alone, together, reversed_ = replay_in_three_groupings(_items, spark, monkeypatch)

    assert [r.runs[-1].group_size for r in together] == [3, 3, 3]  # type: ignore[union-attr]
    # stream time, then the aggregate (EMIT FINAL's operator as a third stage)
    assert [r.runs[-1].stages for r in together] == [2, 2, 3]  # type: ignore[union-attr]
    assert_same_facts(alone, together, reversed_)

    hopping, session, final = (facts(r) for r in alone)
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
