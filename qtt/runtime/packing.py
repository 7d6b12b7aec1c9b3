"""Packing a stage's micro-batches: a replay's micro-batches that touch no common key share one.

A stateful operator sees only its own key's state (``transformWithState`` scopes every state
variable to the grouping key, and the operator contract forbids anything else), so what it does
with a micro-batch's rows of one key depends on that key's earlier micro-batches alone. A
replay's micro-batch *k* therefore need not run after its micro-batch *k - 1* unless the two
share a key: each of a slot's micro-batches (its *unit*) runs in the first packed micro-batch
after every earlier unit of that slot with a key in common. A slot's aggregate over three
stations then runs in as many micro-batches as its busiest station has records, not as the
slot has records; every key still sees its own rows micro-batch by micro-batch, in order, with
nothing else of its own beside them.

The state store's change feed numbers changes by the packed micro-batch; :class:`Packing` gives
each change back the replay's own micro-batch, by its key (a packed micro-batch holds at most
one unit per key), so internal topics are those of the replay alone.

Keys are matched by their text (:func:`key_text`), which must be the same for a value read
from the stage's Arrow rows and from the change feed's Spark rows. Types where the two can
differ (floating point, which Spark normalises in a grouping key; timestamps, which come back in
the driver's zone; maps) are not packed: such a stage runs one micro-batch per micro-batch of
its replays, as unpacked.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import Row
from pyspark.sql import types as st

from qtt.errors import ReplayError
from qtt.runtime.internal_topics import jsonable
from qtt.runtime.names import SLOT

_EXACT = (
    st.BooleanType,
    st.ByteType,
    st.ShortType,
    st.IntegerType,
    st.LongType,
    st.DecimalType,
    st.StringType,
    st.BinaryType,
    st.DateType,
)


@dataclass(frozen=True)
class Packing:
    """Which of its replays' micro-batches each packed micro-batch of a stage ran.

    ``own[p]`` maps a key's text (slot included) to the replay's micro-batch whose rows of that
    key ran in packed micro-batch *p*; ``None`` when the stage was not packed (micro-batch *k*
    is every replay's micro-batch *k*).
    """

    own: tuple[dict[str, int], ...] | None

    def batch_of(self, key: Row | None, batch: int) -> int:
        """The replay's own micro-batch of a change the feed numbers ``batch``, for ``key``."""
        if self.own is None or key is None:
            return batch
        try:
            return self.own[batch][key_text(tuple(key))]
        except (IndexError, KeyError):
            msg = f"a state change in packed micro-batch {batch} has a key no row of that micro-batch had: {key}"
            raise ReplayError(msg) from None


def packable(schema: st.StructType, keys: Sequence[str]) -> bool:
    """Whether every key column's values read back from a change feed as they were written."""
    return all(_exact(schema[name].dataType) for name in keys)


def _exact(data_type: st.DataType) -> bool:
    if isinstance(data_type, st.ArrayType):
        return _exact(data_type.elementType)
    if isinstance(data_type, st.StructType):
        return all(_exact(f.dataType) for f in data_type.fields)
    return isinstance(data_type, _EXACT)


def key_text(values: Sequence[Any]) -> str:
    """A grouping key's text: the same for Arrow's and Spark's Python values of one key."""
    return json.dumps([jsonable(v) for v in values], sort_keys=True)


def pack(batches: Sequence[pa.Table], key_columns: Sequence[str]) -> tuple[list[pa.Table], Packing]:
    """``batches`` (micro-batch *k* holding every slot's micro-batch *k*) packed, and where each
    slot's micro-batch went. The result has at least one micro-batch, so the stage's state
    exists whenever it ran."""
    placed: list[list[pa.Table]] = []
    own: list[dict[str, int]] = []
    last: dict[str, int] = {}  # each key's latest packed micro-batch
    for batch, table in enumerate(batches):
        if not table.num_rows:
            continue
        texts = [key_text(values) for values in zip(*(table[c].to_pylist() for c in key_columns), strict=True)]
        units: dict[int, list[int]] = {}
        for index, slot in enumerate(table[SLOT].to_pylist()):
            units.setdefault(slot, []).append(index)
        for rows in units.values():
            keys = {texts[index] for index in rows}
            packed = 1 + max((last.get(key, -1) for key in keys), default=-1)
            if packed == len(placed):
                placed.append([])
                own.append({})
            placed[packed].append(table.take(pa.array(rows, type=pa.int64())))
            for key in keys:
                last[key] = packed
                own[packed][key] = batch
    if not placed:
        return [batches[0].slice(0, 0)] if batches else [], Packing(own=())
    return [pa.concat_tables(tables) for tables in placed], Packing(own=tuple(own))
