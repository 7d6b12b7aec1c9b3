"""Values a state store refuses (TIME) are kept as ones it holds, and come back unchanged."""

from __future__ import annotations

import datetime

from pyspark.sql import types as st

from qtt.runtime.operators.state_codec import StateCodec, storable
from tests.runtime.fake_state import ValueState

LATEST = st.StructType([st.StructField("SEQ", st.LongType()), st.StructField("VAL", st.TimeType(6))])
SCHEMA = st.StructType(
    [
        st.StructField("KSQL_AGG_VARIABLE_0", LATEST),
        st.StructField("KSQL_AGG_VARIABLE_1", st.ArrayType(st.TimeType(6))),
        st.StructField("KSQL_AGG_VARIABLE_2", st.MapType(st.StringType(), st.TimeType(6))),
        st.StructField("ROWTIME", st.LongType()),
    ]
)


def test_time_is_stored_as_a_bigint_at_any_depth() -> None:
    stored = StateCodec(SCHEMA).stored
    assert isinstance(stored, st.StructType)
    assert "time" not in stored.simpleString()
    assert stored["KSQL_AGG_VARIABLE_1"].dataType == st.ArrayType(st.LongType())


def test_values_round_trip() -> None:
    codec = StateCodec(SCHEMA)
    noon = datetime.time(12, 0, 0, 250)
    row = ((3, noon), [noon, None], {"a": datetime.time(0, 0, 1)}, 17)
    encoded = codec.encode(row)
    # a map that is a field of the state row keeps its form (0.3.0 plans recorded it so)
    assert encoded == ((3, 43_200_000_250), [43_200_000_250, None], {"a": 1_000_000}, 17)
    assert codec.decode(encoded) == row


def test_nested_maps_are_kept_as_entry_lists_in_insertion_order() -> None:
    maps = st.ArrayType(st.MapType(st.StringType(), st.IntegerType()))
    codec = StateCodec(st.StructType([st.StructField("L", maps)]))
    stored = codec.stored["L"].dataType
    assert isinstance(stored, st.ArrayType) and isinstance(stored.elementType, st.ArrayType)
    assert [f.name for f in stored.elementType.elementType.fields] == ["KEY", "VALUE"]
    assert codec.encode(([{"b": 1, "a": 2}],)) == ([[("b", 1), ("a", 2)]],)
    assert codec.decode(([[("b", 1), ("a", 2)]],)) == ([{"b": 1, "a": 2}],)
    assert storable(st.MapType(st.StringType(), st.IntegerType()), nested=False) == st.MapType(
        st.StringType(), st.IntegerType()
    )


def test_a_map_given_as_arrow_pairs_is_stored_as_entries() -> None:
    codec = StateCodec(st.StructType([st.StructField("M", st.MapType(st.StringType(), st.IntegerType()))]))
    assert codec.encode(([("a", 1), ("b", 2)],)) == ({"a": 1, "b": 2},)
    assert codec.decode(({"a": 1, "b": 2},)) == ({"a": 1, "b": 2},)


def test_dates_and_timestamps_come_back_from_their_internal_form() -> None:
    schema = st.StructType([st.StructField("D", st.DateType()), st.StructField("T", st.TimestampType())])
    codec = StateCodec(schema)
    # what the state store returns: days since the epoch, microseconds since the epoch
    assert codec.decode((19_000, 1_500)) == (
        datetime.date(2022, 1, 8),
        datetime.datetime(1970, 1, 1, 0, 0, 0, 1_500, tzinfo=datetime.UTC),
    )


def test_a_schema_without_time_passes_through() -> None:
    plain = st.StructType([st.StructField("COUNT", st.LongType())])
    codec = StateCodec(plain)
    assert codec.identity and codec.stored == plain
    assert codec.encode((4,)) == (4,)


def test_naive_timestamps_from_the_store_become_utc_like_incoming_rows() -> None:
    codec = StateCodec(st.StructType([st.StructField("T", st.ArrayType(st.TimestampType()))]))
    naive = datetime.datetime(1970, 1, 1, 0, 0, 0, 10_000)
    assert codec.decode(([naive],)) == ([naive.replace(tzinfo=datetime.UTC)],)


def test_a_read_is_one_trip_to_the_state_server_and_none_for_a_key_without_a_value() -> None:
    codec, state = StateCodec(SCHEMA), ValueState("Aggregate")
    assert codec.read(state) is None
    value = ((1, datetime.time(10, 30)), [datetime.time(1, 2, 3)], {"a": datetime.time(4, 5)}, 7)
    state.update(codec.encode(value))
    assert codec.read(state) == value
    assert state.trips == [("get", "Aggregate"), ("update", "Aggregate"), ("get", "Aggregate")]
