"""A wide operator's change feed, projected to one slot's own key and value fields (no JVM)."""

from __future__ import annotations

import pytest
from pyspark.sql import Row
from pyspark.sql import types as st

from qtt.runtime.execute.internal_topics import ChangeFeed, topic_of

_KEY = st.StructType([st.StructField("slot", st.IntegerType()), st.StructField("k0", st.StringType())])
_VALUE = st.StructType([st.StructField("v0", st.LongType()), st.StructField("v1", st.StringType())])


def _change(slot: int, key: str, value: Row | None, batch: int) -> Row:
    kind = "update" if value is not None else "delete"
    return Row(batch_id=batch, change_type=kind, key=Row(slot=slot, k0=key), value=value, partition_id=0)


def test_a_slot_sees_its_own_changes_under_its_own_names_and_types() -> None:
    feed = ChangeFeed(
        [
            _change(3, "a", Row(v0=None, v1="gold"), 0),
            _change(5, "b", Row(v0=7, v1=None), 0),
            _change(3, "a", None, 1),
        ],
        _KEY,
        _VALUE,
    )

    topic = topic_of(
        feed,
        "Q-Join-left-changelog",
        key_fields=[("k0", "ID")],
        keep=lambda key: key["slot"] == 3,
        value_fields=[("v1", "NAME")],
    )

    assert [(r.key, r.value, r.change, r.batch) for r in topic.records] == [
        ({"ID": "a"}, {"NAME": "gold"}, "update", 0),
        ({"ID": "a"}, None, "delete", 1),
    ]
    assert topic.key_schema == "STRUCT<`ID` STRING>"
    assert topic.value_schema == "STRUCT<`NAME` STRING>"


def test_without_fields_the_whole_key_and_value_are_kept() -> None:
    feed = ChangeFeed([_change(5, "b", Row(v0=7, v1=None), 0)], _KEY, _VALUE)
    (record,) = topic_of(feed, "Q-Aggregate-Aggregate-changelog").records
    assert (record.key, record.value) == ({"slot": 5, "k0": "b"}, {"v0": 7, "v1": None})


def test_each_change_takes_its_own_micro_batch_from_batches_in_feed_order() -> None:
    # one micro-batch ran three units: the same key changed in each
    feed = ChangeFeed(
        [_change(3, "a", Row(v0=1, v1=None), 0), _change(3, "a", None, 0), _change(3, "a", Row(v0=2, v1=None), 0)],
        _KEY,
        _VALUE,
    )

    topic = topic_of(feed, "Q-Aggregate-Aggregate-changelog", batches=[4, 6, 9])

    assert [(r.change, r.batch) for r in topic.records] == [("update", 4), ("delete", 6), ("update", 9)]


def test_batches_must_match_the_feed_change_for_change() -> None:
    feed = ChangeFeed([_change(3, "a", Row(v0=1, v1=None), 0)], _KEY, _VALUE)
    with pytest.raises(ValueError, match="2 micro-batches for the 1 changes"):
        topic_of(feed, "Q-Aggregate-Aggregate-changelog", batches=[0, 1])
