"""The join steps: two inputs keyed by the join key, through one stateful operator.

Kept apart from :mod:`qtt.plan.ir.steps` (which holds every other step); the codec imports this
module so that the join tags are registered wherever plans are read. See docs/reference/joins.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from qtt.plan.ir.expressions import Expression
from qtt.plan.ir.steps import ExecutionStep, Formats


class JoinStep(ExecutionStep):
    """Role: joins two inputs whose key is the join key; owns the state of the sides it keeps.

    Both inputs arrive keyed by the join key (a side keyed otherwise is re-keyed first), and
    the output's key column is ``key_col_name``. See docs/reference/joins.md.
    """

    stateful: ClassVar[bool] = True
    left_source: ExecutionStep
    right_source: ExecutionStep
    join_type: str
    key_col_name: str


@dataclass(frozen=True, kw_only=True)
class StreamTableJoinV1(JoinStep):
    """A stream joined with a table (``INNER`` or ``LEFT``), as Kafka Streams' KStream-KTable join.

    A table row updates (a tombstone deletes) the table's row of its key and emits nothing; a
    stream row joins the table row of its key as of that moment (``LEFT``: or nulls). Stream
    rows with a null key or value are dropped. State: the table's rows by key (ksqlDB's
    ``KafkaTopic_Right-Reduce`` store).
    """

    type_tag: ClassVar[str] = "streamTableJoinV1"
    left_source: ExecutionStep
    right_source: ExecutionStep
    join_type: str
    key_col_name: str
    internal_formats: Formats


@dataclass(frozen=True, kw_only=True)
class StreamStreamJoinV1(JoinStep):
    """Two streams joined within a time window (``WITHIN``: ``before_ms`` before a left row,
    ``after_ms`` after it; of a right row for a RIGHT join, which Kafka Streams runs as the
    right side's left join), as Kafka Streams' KStream-KStream join without the spurious-result
    fix: unmatched rows of a kept side emit with nulls at once (docs/reference/joins.md). State: both
    sides' buffers (``<context>-this-join-store``, ``<context>-other-join-store``).
    """

    type_tag: ClassVar[str] = "streamStreamJoinV1"
    left_source: ExecutionStep
    right_source: ExecutionStep
    join_type: str
    key_col_name: str
    before_ms: int
    after_ms: int
    internal_formats: Formats


@dataclass(frozen=True, kw_only=True)
class StreamStreamJoinV2(JoinStep):
    """Two streams joined within a time window and a ``GRACE PERIOD`` (``grace_ms``), as Kafka
    Streams' KStream-KStream join with the spurious-result fix (``JoinWindows.ofTimeDifferenceAndGrace``):
    each side's buffer keeps rows for ``before_ms + after_ms + grace_ms`` of its own stream time;
    an unmatched row of a kept side is held until its window closes and then emitted with nulls
    (or at once if its window had closed on arrival); a match releases it. State, per source
    partition: both sides' buffers and, for ``LEFT``, ``RIGHT`` and ``OUTER``, the held rows
    (``<context>-outer-shared-join-store``). See docs/reference/joins.md.
    """

    type_tag: ClassVar[str] = "streamStreamJoinV2"
    left_source: ExecutionStep
    right_source: ExecutionStep
    join_type: str
    key_col_name: str
    before_ms: int
    after_ms: int
    grace_ms: int
    internal_formats: Formats


@dataclass(frozen=True, kw_only=True)
class TableTableJoinV1(JoinStep):
    """Two tables joined on their primary keys (``INNER``, ``LEFT``, ``RIGHT``, ``OUTER``), as
    Kafka Streams' KTable-KTable joins: a change on either side emits the joined row of its key
    with the other side's current row, a tombstone when the join no longer has a row, nothing
    when it had none and has none. State: both tables' rows by key.
    """

    type_tag: ClassVar[str] = "tableTableJoinV1"
    left_source: ExecutionStep
    right_source: ExecutionStep
    join_type: str
    key_col_name: str


@dataclass(frozen=True, kw_only=True)
class ForeignKeyTableTableJoinV1(JoinStep):
    """A table joined with another on a foreign key (``INNER`` or ``LEFT``): ``left_join_expression``,
    over the left table's columns, names a row of the right table by its primary key. As Kafka
    Streams' KTable foreign-key join: the result is keyed by the left table's key columns
    (``key_col_name`` names the first); a change of a left row emits that row joined with the right row its foreign
    key names as of then, a change of a right row emits every left row that names it, in the
    order of their serialized keys (``internal_formats``: the left table's). State: the left
    rows with their foreign keys, the right rows, and per foreign key the left rows that name it
    (docs/reference/joins.md).
    """

    type_tag: ClassVar[str] = "fkTableTableJoinV1"
    left_source: ExecutionStep
    right_source: ExecutionStep
    join_type: str
    key_col_name: str
    left_join_expression: Expression
    internal_formats: Formats
