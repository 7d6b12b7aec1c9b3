"""Joins on the shared stateful path: the same facts on every run and in any grouping.

The stream-table, table-table, multi-way and stream-stream cases (with and without a grace
period, and of windowed sources) of ``cases/joins.json`` are replayed alone, together, and together in the other order:
outputs, processing logs, internal topics and step schemas must be the same each time, and each
table side's rows show up as an internal topic named as ksqlDB names the table's store.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qtt.harness.replay.driver import ReplayItem
from tests.harness.groupings import assert_same_facts, case_items, facts, replay_in_three_groupings

CASES = Path(__file__).parents[2] / "cases" / "joins.json"
NAMES = (
    "stream-table joins:",
    "table-table joins,",
    "a stream joined with two tables",
    "stream-stream joins:",
    "stream-stream joins with a grace period",
    "two windowed streams join on key and window",
)


def _items() -> list[ReplayItem]:
    return case_items(CASES, NAMES)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_join_replays_record_the_same_facts_on_every_run_and_in_any_group(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    alone, together, reversed_ = replay_in_three_groupings(_items, spark, monkeypatch)

    # the cases' queries share streaming queries (how many depends on each query's depth)
    assert max(r.runs[-1].group_size for r in together) > 1  # type: ignore[union-attr]
    assert max(r.runs[-1].stages for r in together) >= 1  # type: ignore[union-attr]
    assert_same_facts(alone, together, reversed_)

    stream_table, table_table, multi, stream_stream, grace, windowed = (facts(r) for r in alone)
    names = {name for name, *_ in stream_table["internal"]}
    assert names == {
        "CSAS_ENRICHED_0-KafkaTopic_Right-Reduce-changelog",
        "CSAS_ALL_COLUMNS_1-KafkaTopic_Right-Reduce-changelog",
    }
    by_name = {name: records for name, _, _, records in stream_table["internal"]}
    customers = by_name["CSAS_ENRICHED_0-KafkaTopic_Right-Reduce-changelog"]
    assert [r.key for r in customers] == [{"O_CUSTOMER": 1}, {"O_CUSTOMER": 1}, {"O_CUSTOMER": 1}]
    assert customers[-1].value is None  # the customer's delete reached the table side's state
    table_names = {name for name, *_ in table_table["internal"]}
    assert "CTAS_EVERYTHING_3-KafkaTopic_Left-Reduce-changelog" in table_names
    assert "CTAS_EVERYTHING_3-KafkaTopic_Right-Reduce-changelog" in table_names
    assert {name for name, *_ in multi["internal"]} == {
        "CSAS_VISIT_DETAILS_0-L_KafkaTopic_Right-Reduce-changelog",
        "CSAS_VISIT_DETAILS_0-KafkaTopic_Right-Reduce-changelog",
    }
    buffers = {name: records for name, _, _, records in stream_stream["internal"]}
    clicks = buffers["CSAS_CONVERTED_0-Join-this-join-store-changelog"]
    assert len(clicks[-1].value["records"]) == 3  # every click stays in the left buffer
    assert "CSAS_CONVERTED_0-Join-other-join-store-changelog" in buffers
    # with a grace period: one operator per source partition holds every key's rows
    held = {name: records for name, _, _, records in grace["internal"]}
    assert set(held) == {
        "CSAS_CHECKED_0-Join-this-join-store-changelog",
        "CSAS_CHECKED_0-Join-other-join-store-changelog",
        "CSAS_CHECKED_0-Join-outer-shared-join-store-changelog",
        "CSAS_AUDIT_1-Join-this-join-store-changelog",
        "CSAS_AUDIT_1-Join-other-join-store-changelog",
        "CSAS_AUDIT_1-Join-outer-shared-join-store-changelog",
    }
    # windowed sources: each buffer is keyed by the key and its window's start
    windowed_buffers = {name: records for name, _, _, records in windowed["internal"]}
    peaks = windowed_buffers["CSAS_SPREADS_0-Join-this-join-store-changelog"]
    assert peaks[0].key == {"P_SITE": 1, "__qtt_window_start": 0}
    outer = held["CSAS_CHECKED_0-Join-outer-shared-join-store-changelog"]
    assert {tuple(r.key) for r in outer} == {("ROWPARTITION",)}
    # the last left row (fay) is released by the right row that closes its window
    assert outer[-1].value["records"] == [] and outer[-2].value["records"][0]["S_BADGE"] == "fay"


FOREIGN_KEY_CASES = Path(__file__).parents[2] / "cases" / "joins_foreign_key.json"


AGGREGATED_CASES = Path(__file__).parents[2] / "cases" / "joins_aggregated.json"
PARTITIONED_CASES = Path(__file__).parents[2] / "cases" / "joins_partitioned.json"
REKEYED = ("a stream joined on a value column is re-keyed", "a full outer stream-stream join on value columns")


def _later_items() -> list[ReplayItem]:
    """Foreign-key joins, re-keyed join inputs, and joins aggregated and partitioned (0.12.0, 0.13.0)."""
    return [
        *case_items(
            FOREIGN_KEY_CASES, ("an inner foreign-key join", "a left foreign-key join", "a foreign key can be")
        ),
        *case_items(CASES, REKEYED),
        *case_items(AGGREGATED_CASES, ("sales per city", "totals per region", "clicks per category")),
        *case_items(PARTITIONED_CASES, ("visits re-keyed by the owner", "a stream-stream join partitioned")),
    ]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.usefixtures("no_active_streams")
def test_later_join_features_record_the_same_facts_in_any_group(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    alone, together, reversed_ = replay_in_three_groupings(_later_items, spark, monkeypatch)
    assert max(r.runs[-1].stages for r in together) >= 1  # type: ignore[union-attr]
    assert_same_facts(alone, together, reversed_)
    inner, _, _, stream_table, stream_stream, per_city, per_region, _, _, by_tag = (
        {name: (key, value, records) for name, key, value, records in facts(r)["internal"]} for r in alone
    )

    # foreign-key joins: the left table, the right table and the subscriptions
    assert set(inner) == {
        "CTAS_PAID_0-KafkaTopic_Left-Reduce-changelog",
        "CTAS_PAID_0-KafkaTopic_Right-Reduce-changelog",
        "CTAS_PAID_0-Join-subscriptions-changelog",
    }
    # customer 9's subscribers, in the order of their keys' bytes: 3, 20, then -4 (FFFFFFFC)
    nine = [r for r in inner["CTAS_PAID_0-Join-subscriptions-changelog"][2] if r.key == {"C_ID": 9}]
    assert [s["O_ORDER_ID"] for s in nine[-2].value["subscribers"]] == [3, 20, -4]

    # a re-keyed stream side is its join's repartition topic
    key_schema, value_schema, payments = stream_table["CSAS_OWNED_0-Join-repartition"]
    assert key_schema == "STRUCT<`P_ACCOUNT` INTEGER>"
    assert value_schema.startswith("STRUCT<`P_AMOUNT` DOUBLE,")
    # the payment without an account (p3) writes nothing; each record keeps its input's time
    assert [(r.key, r.value["P_ID"], r.batch, r.timestamp) for r in payments] == [
        ({"P_ACCOUNT": 7}, "p1", 1, 2),
        ({"P_ACCOUNT": 8}, "p2", 2, 3),
        ({"P_ACCOUNT": 8}, "p4", 5, 6),
    ]
    assert {r.change for r in payments} == {"append"}
    # both sides of a stream-stream join re-keyed: one topic per side, named after the join
    assert {name for name in stream_stream if name.endswith("-repartition")} == {
        "CSAS_MATCHED_0-Join-left-repartition",
        "CSAS_MATCHED_0-Join-right-repartition",
    }
    right = stream_stream["CSAS_MATCHED_0-Join-right-repartition"][2]
    assert [(r.key, r.value["B_ID"]) for r in right] == [({"ROWKEY": "h1"}, "q1"), ({"ROWKEY": "h2"}, "q2")]

    # an aggregated join: the join's state, then the aggregate's, each named after its context
    assert set(per_city) == {
        "CTAS_CITY_SALES_0-Join-repartition",
        "CTAS_CITY_SALES_0-KafkaTopic_Right-Reduce-changelog",
        "CTAS_CITY_SALES_0-Aggregate-Aggregate-changelog",
    }
    contributed = per_region["CTAS_REGION_TOTALS_0-Aggregate-GroupBy-changelog"][2]
    assert contributed[-1].value is None  # the deleted account no longer contributes to a group
    # a partitioned stream-stream join keeps only its buffers: the re-key after it is stateless
    assert {name.removeprefix("CSAS_BY_TAG_0-") for name in by_tag} == {
        "Join-this-join-store-changelog",
        "Join-other-join-store-changelog",
    }
