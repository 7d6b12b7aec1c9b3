"""The foreign-key join's two operators: the left table, keyed by its own key, then the join,
keyed by the foreign key.

Kafka Streams' KTable foreign-key join (before KIP-962), record by record (ksqlDB with record
caching off). A change of a left row first updates the left table, then tells the join what to
do with it, as Kafka Streams' subscription instructions do:

* a row whose old or new foreign key is null asks nothing (Kafka Streams skips it);
* a new row (none before) subscribes to its foreign key: an ``INNER`` join emits the joined row
  only if the right table has that key, a ``LEFT`` join emits it with nulls otherwise;
* a changed row whose foreign key changed first unsubscribes from the old one (emitting
  nothing), and either way subscribes to the new one, emitting the joined row, or a tombstone
  (``INNER``) or nulls (``LEFT``) when the right table lacks the key;
* a deleted row unsubscribes and emits a tombstone.

A subscription keeps the left row it was made with (Kafka Streams keeps its hash): once the
left row changed without a new subscription (its foreign key became null), a change of the
right row no longer emits it, until the left row is that row again (Kafka Streams drops such
responses when their hash does not match the left row's).

An output caused by a left row is stamped with the later of the left row's and the right
row's timestamps. A change of a right row, even a delete of a row that never existed (Kafka
Streams' table source forwards every delete, and ``ForeignTableJoinProcessorSupplier`` answers
it), emits, for every left row subscribed to its key, in the order of the left rows' serialized
keys, the joined row, or for a deleted right row a tombstone (``INNER``) or nulls (``LEFT``),
stamped with the right row's timestamp.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Row
from pyspark.sql import types as st
from pyspark.sql.streaming import StatefulProcessorHandle

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
from qtt.runtime.operators.joins import system_values
from qtt.runtime.operators.state_codec import StateCodec, decode, is_nested
from qtt.runtime.operators.stateful import StatefulOperator
from qtt.runtime.spark.workers.worker_memory import freeze_once

LEFT, RIGHT = 0, 1
#: what a change of a left row asks of the join (Kafka Streams' subscription instructions)
UNSUBSCRIBE, DELETE, SUBSCRIBE, SUBSCRIBE_IF_FOUND = 0, 1, 2, 3
#: a change that asks nothing: the subscription to this foreign key is current only if its row is this one
CHECK = 4
#: outputs one change of a right row causes at most (the left rows subscribed to its key)
OUTPUTS_PER_ROW = 100_000


@dataclass(frozen=True)
class LeftTableSpec:
    """The left table's operator, picklable for the Python workers.

    ``stored`` is the state's row: the left columns, the foreign key, the key's bytes, ROWTIME.
    """

    state: str
    key_names: tuple[str, ...]
    columns: tuple[str, ...]
    foreign_key: str
    stored: st.StructType
    left_join: bool


class LeftTableProcessor(StatefulOperator):
    """Per left key: the current row and its foreign key; each change asks the join for what
    the module's rules say, as rows keyed by foreign key."""

    def __init__(self, spec: LeftTableSpec) -> None:
        self.spec = spec

    def state_names(self) -> tuple[str, ...]:
        return (self.spec.state,)

    def init(self, handle: StatefulProcessorHandle) -> None:
        freeze_once("operator")
        self.codec = StateCodec(self.spec.stored)
        self.state = handle.getValueState(self.spec.state, self.codec.stored)
        self.types = {f.name: f.dataType for f in self.spec.stored.fields}
        self.fk_index = self.spec.stored.names.index(self.spec.foreign_key)

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        ordered = sorted(rows, key=lambda r: (r[SEQ], r[ORDER]))
        if not ordered:
            return
        old = self.codec.read(self.state)
        for position, row in enumerate(ordered):
            if position and old is not None:
                old = self.through_store(self.state, self.codec, old)
            new = None if row[TOMBSTONE] else self._stored(row)
            yield from self._asks(row, old, new)
            old = new
        if old is not None:
            self.state.update(self.codec.encode(old))
        elif self.state.exists():
            self.state.clear()

    def _stored(self, row: Row) -> tuple[Any, ...]:
        return tuple(
            row[name] if not is_nested(type_) else decode(row[name], type_) for name, type_ in self.types.items()
        )

    def _asks(self, row: Row, old: tuple[Any, ...] | None, new: tuple[Any, ...] | None) -> Iterator[Row]:
        old_fk = None if old is None else old[self.fk_index]
        new_fk = None if new is None else new[self.fk_index]
        if old is not None and new is not None and (old_fk is None) != (new_fk is None):
            yield self._ask(row, new_fk if old_fk is None else old_fk, CHECK, new, 0)
            return
        if old is not None:
            if old_fk is None:  # so is the new row's, or there is none
                return
            if new is None:
                yield self._ask(row, old_fk, DELETE, old, 0)
                return
            if new_fk != old_fk:
                yield self._ask(row, old_fk, UNSUBSCRIBE, old, 0)
            yield self._ask(row, new_fk, SUBSCRIBE, new, 1)
        elif new is not None and new_fk is not None:
            yield self._ask(row, new_fk, SUBSCRIBE if self.spec.left_join else SUBSCRIBE_IF_FOUND, new, 0)

    def _ask(self, row: Row, foreign_key: Any, instruction: int, values: tuple[Any, ...], index: int) -> Row:
        out = dict(zip(self.types, values, strict=True))
        out[self.spec.foreign_key] = foreign_key
        out.update(
            {
                **{name: row[name] for name in self.spec.key_names},
                INSTRUCTION: instruction,
                JOIN_SIDE: LEFT,
                ROWTIME: row[ROWTIME],
                ROWPARTITION: row[ROWPARTITION],
                ROWOFFSET: row[ROWOFFSET],
                SEQ: row[SEQ],
                TOMBSTONE: False,
                ORDER: row[ORDER] * 2 + index,
            }
        )
        return Row(**out)

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class ForeignKeyJoinSpec:
    """The join's operator, picklable for the Python workers.

    Rows are grouped by ``foreign_key``: a right row's key, a subscription's foreign key. The
    output is keyed by ``keys`` (the left key columns and their types) and holds ``foreign_key`` as the right key
    column. ``subscriber`` is a subscribed left row as the state keeps it: the key's bytes, the
    key, the left columns, ROWTIME, whether it is the left row still (``CURRENT``).
    """

    join_type: str
    keys: tuple[tuple[str, st.DataType], ...]
    foreign_key: str
    foreign_key_type: st.DataType
    left_columns: tuple[str, ...]
    right_columns: tuple[str, ...]
    states: tuple[str, str]
    right_stored: st.StructType
    subscriber: st.StructType


class ForeignKeyJoinProcessor(StatefulOperator):
    """Per foreign key: the right row, and the left rows subscribed to it."""

    def __init__(self, spec: ForeignKeyJoinSpec) -> None:
        self.spec = spec

    def state_names(self) -> tuple[str, ...]:
        return self.spec.states

    def init(self, handle: StatefulProcessorHandle) -> None:
        freeze_once("operator")
        right_name, subscriptions_name = self.spec.states
        self.right_codec = StateCodec(self.spec.right_stored)
        self.right_state = handle.getValueState(right_name, self.right_codec.stored)
        listed = st.StructType([st.StructField("subscribers", st.ArrayType(self.spec.subscriber))])
        self.subscriptions_codec = StateCodec(listed)
        self.subscriptions_state = handle.getValueState(subscriptions_name, self.subscriptions_codec.stored)
        self.nested = {
            f.name: f.dataType
            for schema in (self.spec.right_stored, self.spec.subscriber)
            for f in schema.fields
            if is_nested(f.dataType)
        }

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        ordered = sorted(rows, key=lambda r: (r[SEQ], r[ORDER]))
        if not ordered:
            return
        right = self.right_codec.read(self.right_state)
        subscribers = self._subscribers()
        touched: set[int] = set()
        for position, row in enumerate(ordered):
            if position and row[SEQ] != ordered[position - 1][SEQ]:
                right, subscribers = self._round_trip(touched, right, subscribers)
                touched.clear()
            if row[JOIN_SIDE] == RIGHT:
                right = None if row[TOMBSTONE] else self._values(row, self.spec.right_stored)
                touched.add(RIGHT)
                # a delete of a key the right table never held is answered too: Kafka Streams'
                # table source forwards every delete, and its foreign-key join does not look back
                current = [subscribed for _, subscribed in sorted(subscribers.items()) if subscribed[-1]]
                for index, subscribed in enumerate(current):
                    order = row[ORDER] * OUTPUTS_PER_ROW + index
                    yield self._joined(row, subscribed, right, row[ROWTIME], order)
                continue
            instruction = row[INSTRUCTION]
            touched.add(LEFT)
            key_bytes = bytes(row[KEY_BYTES])
            if instruction == CHECK:
                if key_bytes in subscribers:
                    subscribers[key_bytes] = self._checked(subscribers[key_bytes], row)
                continue
            if instruction in (UNSUBSCRIBE, DELETE):
                subscribers.pop(key_bytes, None)
            else:
                subscribers[key_bytes] = (*self._values(row, self.spec.subscriber)[:-1], True)
            rowtime = row[ROWTIME] if right is None else max(row[ROWTIME], right[-1])
            if instruction == DELETE:
                yield self._output(row, tuple(row[name] for name, _ in self.spec.keys), None, rowtime, row[ORDER])
            elif instruction == SUBSCRIBE or (instruction == SUBSCRIBE_IF_FOUND and right is not None):
                yield self._joined(row, self._values(row, self.spec.subscriber), right, rowtime, row[ORDER])
        self._store(touched, right, subscribers)

    def _checked(self, subscribed: tuple[Any, ...], row: Row) -> tuple[Any, ...]:
        """The subscription, current if the left row is now the row it was made with."""
        names = self.spec.subscriber.names
        now = self._values(row, self.spec.subscriber)
        same = all(subscribed[names.index(c)] == now[names.index(c)] for c in self.spec.left_columns)
        return (*subscribed[:-1], same)

    def _values(self, row: Row, schema: st.StructType) -> tuple[Any, ...]:
        return tuple(
            row[f.name] if f.name not in self.nested else decode(row[f.name], self.nested[f.name])
            for f in schema.fields
            if f.name != CURRENT
        ) + ((None,) if CURRENT in schema.names else ())

    def _subscribers(self) -> dict[bytes, tuple[Any, ...]]:
        """The subscribed left rows by their key's bytes."""
        stored = self.subscriptions_codec.read(self.subscriptions_state)
        if stored is None:
            return {}
        (listed,) = stored
        return {bytes(entry[0]): tuple(entry) for entry in listed}

    def _store(self, touched: set[int], right: Any, subscribers: dict[bytes, tuple[Any, ...]]) -> None:
        if RIGHT in touched:
            if right is not None:
                self.right_state.update(self.right_codec.encode(right))
            elif self.right_state.exists():
                self.right_state.clear()
        if LEFT in touched:
            if subscribers:
                listed = [subscribers[key_bytes] for key_bytes in sorted(subscribers)]
                self.subscriptions_state.update(self.subscriptions_codec.encode((listed,)))
            elif self.subscriptions_state.exists():
                self.subscriptions_state.clear()

    def _round_trip(
        self, touched: set[int], right: Any, subscribers: dict[bytes, tuple[Any, ...]]
    ) -> tuple[Any, dict[bytes, tuple[Any, ...]]]:
        """Store what one input changed and read it back, as the next input sees it."""
        self._store(touched, right, subscribers)
        if RIGHT in touched:
            right = self.right_codec.read(self.right_state)
        if LEFT in touched:
            subscribers = self._subscribers()
        return right, subscribers

    def _joined(self, row: Row, left: tuple[Any, ...], right: Any, rowtime: int, order: int) -> Row:
        """The left row joined with the right one; a tombstone for an inner join without one."""
        pk = tuple(left[self.spec.subscriber.names.index(name)] for name, _ in self.spec.keys)
        if right is None and self.spec.join_type == "INNER":
            return self._output(row, pk, None, rowtime, order)
        return self._output(row, pk, (left, right), rowtime, order)

    def _output(self, row: Row, pk: tuple[Any, ...], joined: tuple[Any, Any] | None, rowtime: int, order: int) -> Row:
        out: dict[str, Any] = {
            name: decode(value, type_) if value is not None else None
            for (name, type_), value in zip(self.spec.keys, pk, strict=True)
        }
        left, right = joined if joined is not None else (None, None)
        names = self.spec.subscriber.names
        for column in self.spec.left_columns:
            out[column] = None if left is None else left[names.index(column)]
        foreign_key = row[self.spec.foreign_key]
        out[self.spec.foreign_key] = None if right is None else decode(foreign_key, self.spec.foreign_key_type)
        for index, column in enumerate(self.spec.right_columns):
            out[column] = None if right is None else right[index]
        out.update(system_values(row, rowtime, joined is None, order))
        return Row(**out)

    def close(self) -> None:
        pass
