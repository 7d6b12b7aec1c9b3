"""The foreign-key join's operators, record by record, without Spark: Kafka Streams' rules."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Row
from pyspark.sql import types as st

from qtt.runtime.build.names import (
    CURRENT,
    INSTRUCTION,
    JOIN_SIDE,
    KEY_BYTES,
    ORDER,
    ROWOFFSET,
    ROWPARTITION,
    ROWTIME,
    SEQ,
    TOMBSTONE,
)
from qtt.runtime.operators.fk_joins import (
    CHECK,
    DELETE,
    LEFT,
    RIGHT,
    SUBSCRIBE,
    SUBSCRIBE_IF_FOUND,
    UNSUBSCRIBE,
    ForeignKeyJoinProcessor,
    ForeignKeyJoinSpec,
    LeftTableProcessor,
    LeftTableSpec,
)
from tests.runtime.fake_state import Handle


def _struct(*fields: tuple[str, st.DataType]) -> st.StructType:
    return st.StructType([st.StructField(name, type_) for name, type_ in fields])


_SYSTEM = {ROWPARTITION: 0, ROWOFFSET: 0, ORDER: 0}


def _left_table(left_join: bool) -> LeftTableProcessor:
    spec = LeftTableSpec(
        state="KafkaTopic_Left-Reduce",
        key_names=("O_ID",),
        columns=("O_FK",),
        foreign_key="C_ID",
        stored=_struct(
            ("O_FK", st.IntegerType()),
            ("C_ID", st.IntegerType()),
            (KEY_BYTES, st.BinaryType()),
            (ROWTIME, st.LongType()),
        ),
        left_join=left_join,
    )
    processor = LeftTableProcessor(spec)
    processor.init(Handle())  # type: ignore[arg-type]
    return processor


def _left_row(seq: int, key: int, fk: int | None, *, deleted: bool = False) -> Row:
    return Row(
        O_ID=key,
        O_FK=fk,
        C_ID=fk,
        **{KEY_BYTES: key.to_bytes(4, "big", signed=True), ROWTIME: seq * 10, SEQ: seq, TOMBSTONE: deleted},
        **_SYSTEM,
    )


def _asks(processor: LeftTableProcessor, row: Row) -> list[tuple[Any, int]]:
    return [(r["C_ID"], r[INSTRUCTION]) for r in processor.handleInputRows(row["O_ID"], iter([row]), None)]


def test_a_left_row_subscribes_moves_and_unsubscribes_as_kafka_streams_asks() -> None:
    inner = _left_table(left_join=False)
    assert _asks(inner, _left_row(0, 1, 7)) == [(7, SUBSCRIBE_IF_FOUND)]
    assert _asks(inner, _left_row(1, 1, 7)) == [(7, SUBSCRIBE)]  # a changed row must unset a stale result
    assert _asks(inner, _left_row(2, 1, 9)) == [(7, UNSUBSCRIBE), (9, SUBSCRIBE)]
    assert _asks(inner, _left_row(3, 1, None, deleted=True)) == [(9, DELETE)]
    assert _asks(inner, _left_row(4, 1, None, deleted=True)) == []  # nothing was there
    assert _asks(_left_table(left_join=True), _left_row(0, 1, 7)) == [(7, SUBSCRIBE)]


def test_a_null_foreign_key_asks_only_for_a_check_of_the_subscription_it_leaves_or_finds() -> None:
    left = _left_table(left_join=True)
    _asks(left, _left_row(0, 1, 7))
    assert _asks(left, _left_row(1, 1, None)) == [(7, CHECK)]
    assert _asks(left, _left_row(2, 1, None)) == []
    assert _asks(left, _left_row(3, 1, 8)) == [(8, CHECK)]


def _join(join_type: str) -> ForeignKeyJoinProcessor:
    spec = ForeignKeyJoinSpec(
        join_type=join_type,
        keys=(("O_ID", st.IntegerType()),),
        foreign_key="C_ID",
        foreign_key_type=st.IntegerType(),
        left_columns=("O_FK",),
        right_columns=("C_NAME",),
        states=("KafkaTopic_Right-Reduce", "Join-subscriptions"),
        right_stored=_struct(("C_NAME", st.StringType()), (ROWTIME, st.LongType())),
        subscriber=_struct(
            (KEY_BYTES, st.BinaryType()),
            ("O_ID", st.IntegerType()),
            ("O_FK", st.IntegerType()),
            (ROWTIME, st.LongType()),
            (CURRENT, st.BooleanType()),
        ),
    )
    processor = ForeignKeyJoinProcessor(spec)
    processor.init(Handle())  # type: ignore[arg-type]
    return processor


def _ask(seq: int, key: int, fk: int, instruction: int) -> Row:
    return Row(
        O_ID=key,
        O_FK=fk,
        C_ID=fk,
        C_NAME=None,
        **{KEY_BYTES: key.to_bytes(4, "big", signed=True), INSTRUCTION: instruction, JOIN_SIDE: LEFT},
        **{ROWTIME: seq * 10, SEQ: seq, TOMBSTONE: False},
        **_SYSTEM,
    )


def _right(seq: int, key: int, name: str | None) -> Row:
    return Row(
        O_ID=None,
        O_FK=None,
        C_ID=key,
        C_NAME=name,
        **{KEY_BYTES: None, INSTRUCTION: None, JOIN_SIDE: RIGHT},
        **{ROWTIME: seq * 10, SEQ: seq, TOMBSTONE: name is None},
        **_SYSTEM,
    )


def _outputs(processor: ForeignKeyJoinProcessor, row: Row) -> list[tuple[Any, ...]]:
    return [
        (r["O_ID"], None if r[TOMBSTONE] else r["C_NAME"], r[ROWTIME])
        for r in processor.handleInputRows(row["C_ID"], iter([row]), None)
    ]


def test_the_join_emits_per_instruction_and_a_right_change_for_each_subscriber_in_key_byte_order() -> None:
    inner = _join("INNER")
    assert _outputs(inner, _ask(0, 5, 7, SUBSCRIBE_IF_FOUND)) == []  # no customer 7 yet
    assert _outputs(inner, _ask(1, -1, 7, SUBSCRIBE)) == [(-1, None, 10)]  # a changed row unsets its result
    assert _outputs(inner, _right(2, 7, "ada")) == [(5, "ada", 20), (-1, "ada", 20)]  # FF.. after 00..
    assert _outputs(inner, _ask(9, 5, 7, DELETE)) == [(5, None, 90)]
    assert _outputs(inner, _right(10, 7, None)) == [(-1, None, 100)]
    # a delete of a row that is not there still answers each subscriber (Kafka Streams' table
    # source forwards it, and its foreign-key join does not look back)
    assert _outputs(inner, _right(11, 7, None)) == [(-1, None, 110)]
    left = _join("LEFT")
    assert _outputs(left, _ask(0, 5, 7, SUBSCRIBE)) == [(5, None, 0)]
    assert _outputs(left, _right(1, 7, "bo")) == [(5, "bo", 10)]
    assert _outputs(left, _right(2, 7, None)) == [(5, None, 20)]


def test_a_subscription_whose_left_row_changed_without_it_emits_nothing_until_the_row_is_back() -> None:
    join = _join("INNER")
    _outputs(join, _right(0, 7, "ada"))
    assert _outputs(join, _ask(1, 5, 7, SUBSCRIBE)) == [(5, "ada", 10)]
    _outputs(join, _ask(2, 5, 8, CHECK))  # its row now has another value (its foreign key became null)
    assert _outputs(join, _right(3, 7, "bo")) == []
    _outputs(join, _ask(4, 5, 7, CHECK))  # the row it subscribed with, again
    assert _outputs(join, _right(5, 7, "cy")) == [(5, "cy", 50)]
