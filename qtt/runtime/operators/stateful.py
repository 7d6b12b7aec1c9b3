"""The stateful steps' processors: Spark ``transformWithState`` operators, one per step.

Each operator keeps its state in one value state variable named after the step's context
(``Aggregate-Aggregate``), in the query's real checkpoint; :mod:`qtt.runtime.execute.internal_topics`
reads it back as the step's internal topic. Rows carry an ``ORDER`` column so that the several
outputs one input causes (a table update retracting from one group and adding to another)
keep ksqlDB's order, whatever order Spark visits the groups in.

Every operator derives from :class:`StatefulOperator` and is started through the build
context's one ``stateful`` method (:class:`qtt.runtime.build.context.BuildContext`);
docs/architecture.md, "Stateful operators: the contract", is the contract that lets a query
carry many replays at once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import Row
from pyspark.sql import types as st
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from qtt.errors import QueryStops
from qtt.plan.functions.aggregate_signatures import Aggregate
from qtt.runtime.build.names import (
    HAD_PREVIOUS,
    NULL_KEY,
    OP,
    ORDER,
    PSEUDO_COLUMNS,
    ROWTIME,
    SEQ,
    TOMBSTONE,
    previous_name,
)
from qtt.runtime.operators.state_codec import StateCodec, decode, is_nested
from qtt.runtime.spark.workers.worker_memory import freeze_once

if TYPE_CHECKING:
    from qtt.runtime.aggregates.udaf import Udaf

UNDO, ADD = -1, 1  # the values of the OP column


def state_name(context: str) -> str:
    """The state variable of a step: its context, with ``/`` as ``-``."""
    return context.replace("/", "-")


class StatefulOperator(StatefulProcessor):
    """A processor qtt can run on the shared stateful path: it names its state variables.

    The executor matches the state variables it finds in a checkpoint with these names to
    tell apart the operators of the replays that shared a query.
    """

    #: the label of the query it belongs to (set by the build context), which a stop it raises names
    owner: str = ""

    def state_names(self) -> tuple[str, ...]:
        raise NotImplementedError

    @staticmethod
    def through_store(state: Any, codec: StateCodec, value: tuple[Any, ...]) -> tuple[Any, ...]:
        """Store ``value`` in ``state`` and read it back: what the key's next record sees.

        ksqlDB (record caching off) stores a key's state after each record and reads it back
        for the next; the store can change a value's form (a map's key order, say), which later
        outputs show. Between two records of one key in one micro-batch, state makes the same
        trip, so outputs do not depend on how records are batched.
        """
        state.update(codec.encode(value))
        return tuple(codec.decode(state.get()))


@dataclass(frozen=True)
class AggregateSpec:
    """What an aggregate operator needs, picklable for the Python workers."""

    state_name: str
    state_schema: st.StructType
    key_names: tuple[str, ...]
    #: per call: its resolved aggregate, result column, and the input columns of its arguments
    calls: tuple[tuple[Aggregate, str, tuple[str, ...]], ...]
    #: the argument columns and their Spark types
    arguments: st.StructType
    #: a retraction directly followed by an addition from the same input emits nothing of its
    #: own (a table row updated within its group: ksqlDB emits the group once)
    emit_once_per_input: bool = False
    #: also emit each group's previous results (what a HAVING filter needs to know whether the
    #: group passed before), as previous_name(alias) columns and HAD_PREVIOUS
    emit_previous: bool = False


class AggregateProcessor(StatefulOperator):
    """Per group: one accumulator per call and the newest ROWTIME; one output row per input."""

    def __init__(self, spec: AggregateSpec) -> None:
        self.spec = spec

    def state_names(self) -> tuple[str, ...]:
        return (self.spec.state_name,)

    def init(self, handle: StatefulProcessorHandle) -> None:
        freeze_once("operator")
        from qtt.runtime.aggregates.aggregators import udaf_for

        self.codec = self.state_codec()
        self.state = handle.getValueState(self.spec.state_name, self.stored_schema())
        self.current = 0
        # LATEST/EARLIEST_BY_OFFSET number the records they see: the replay position is
        # increasing and, unlike a clock, the same on every run.
        self.udafs = [udaf_for(agg, sequence=self._sequence) for agg, _, _ in self.spec.calls]
        self.nested = {f.name: f.dataType for f in self.spec.arguments.fields if is_nested(f.dataType)}

    def _argument(self, row: Row, column: str) -> Any:
        type_ = self.nested.get(column)
        return row[column] if type_ is None else decode(row[column], type_)

    def applied(self, udaf: Udaf, accumulator: Any, values: Sequence[Any], *, undo: bool = False) -> Any:
        """The accumulator after ``values`` were aggregated (or undone); an aggregate that
        throws stops the query, as in ksqlDB (:class:`~qtt.errors.QueryStops`, naming it)."""
        try:
            return udaf.undo(accumulator, *values) if undo else udaf.aggregate(accumulator, *values)
        except QueryStops as stop:
            raise stop.of(self.owner) from None

    def _results(self, accumulators: Sequence[Any]) -> list[Any]:
        return [udaf.result(acc) for udaf, acc in zip(self.udafs, accumulators, strict=True)]

    def state_codec(self) -> StateCodec:
        """The codec of the state variable's rows (a session aggregate keeps other rows)."""
        return StateCodec(self.spec.state_schema)

    def stored_schema(self) -> st.StructType:
        """The state variable's schema in the store (a test overrides it to change the layout)."""
        return self.codec.stored

    def _sequence(self) -> int:
        return self.current

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        ordered = sorted(rows, key=lambda r: (r[SEQ], r[ORDER]))
        if not ordered:
            return
        self.current = ordered[0][SEQ]
        stored = self.codec.read(self.state)
        if stored is None:
            accumulators = [udaf.initial() for udaf in self.udafs]
            rowtime = None
            previous = None
        else:
            accumulators = list(stored[:-1])
            rowtime = stored[-1]
            previous = self._results(accumulators) if self.spec.emit_previous else None
        # the grouping key as the rows carry it (the operator may be keyed by a stand-in)
        key_values = {k: ordered[0][k] for k in self.spec.key_names}
        for position, row in enumerate(ordered):
            if position and row[SEQ] != ordered[position - 1][SEQ]:
                *accumulators, rowtime = self.through_store(self.state, self.codec, (*accumulators, rowtime))
            self.current = row[SEQ]
            for i, (udaf, (_, _, columns)) in enumerate(zip(self.udafs, self.spec.calls, strict=True)):
                values = [self._argument(row, c) for c in columns]
                accumulators[i] = self.applied(udaf, accumulators[i], values, undo=row[OP] == UNDO)
            rowtime = row[ROWTIME] if rowtime is None else max(rowtime, row[ROWTIME])
            if self.spec.emit_once_per_input and _replaced_by_next(ordered, position):
                continue
            results = self._results(accumulators)
            out = dict(key_values)
            for (_, alias, _), result in zip(self.spec.calls, results, strict=True):
                out[alias] = result
            out.update(unless_keyed({**pseudo_values(row), ROWTIME: rowtime}, out))
            out.update({SEQ: row[SEQ], TOMBSTONE: False, NULL_KEY: False, ORDER: row[ORDER]})
            if self.spec.emit_previous:
                for (_, alias, _), earlier in zip(self.spec.calls, previous or [None] * len(results), strict=True):
                    out[previous_name(alias)] = earlier
                out[HAD_PREVIOUS] = previous is not None
            previous = results
            yield Row(**out)
        self.state.update(self.codec.encode(tuple([*accumulators, rowtime])))

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class GroupBySpec:
    """What a table group-by operator needs."""

    state_name: str
    state_schema: st.StructType
    #: the columns it keeps per source key: grouping columns, then argument columns
    columns: tuple[str, ...]
    group_columns: tuple[str, ...]


class OneRowPerKey(StatefulOperator):
    """An operator whose state is one row per key, in one value state variable: its spec names
    the variable (``state_name``) and the row's schema (``state_schema``)."""

    def __init__(self, spec: GroupBySpec | PreviousRowSpec) -> None:
        self.spec = spec

    def state_names(self) -> tuple[str, ...]:
        return (self.spec.state_name,)

    def init(self, handle: StatefulProcessorHandle) -> None:
        freeze_once("operator")
        self.codec = StateCodec(self.spec.state_schema)
        self.state = handle.getValueState(self.spec.state_name, self.codec.stored)


class TableGroupByProcessor(OneRowPerKey):
    """Per source key: what the row last contributed, retracted before the new row is added."""

    spec: GroupBySpec

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        old = self.codec.read(self.state)
        for position, row in enumerate(sorted(rows, key=lambda r: (r[SEQ], r[ORDER]))):
            if position and old is not None:
                old = self.through_store(self.state, self.codec, old)
            pseudo = pseudo_values(row)
            # a row's retraction, then its addition, after those of the rows its input changed before
            if old is not None:
                yield self._output(old, pseudo, row[SEQ], UNDO, 2 * row[ORDER])
            new = tuple(row[c] for c in self.spec.columns)
            grouped = not row[TOMBSTONE] and all(row[c] is not None for c in self.spec.group_columns)
            if grouped:
                yield self._output(new, pseudo, row[SEQ], ADD, 2 * row[ORDER] + 1)
            old = new if grouped else None
        if old is None:
            self.state.clear()
        else:
            self.state.update(self.codec.encode(old))

    def _output(self, values: tuple[Any, ...], pseudo: dict[str, Any], seq: int, op: int, order: int) -> Row:
        out = dict(zip(self.spec.columns, values, strict=True))
        out.update(unless_keyed(pseudo, out))
        out.update({SEQ: seq, OP: op, ORDER: order})
        return Row(**out)

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class PreviousRowSpec:
    """What :class:`PreviousRowProcessor` (``tableFilterV3``) needs, picklable for the Python workers."""

    state_name: str
    #: the columns it keeps per key (the source's value and pseudo columns), with their types
    state_schema: st.StructType
    #: every column of its output, in order: the input's, the previous row's, HAD_PREVIOUS, ORDER
    output: tuple[str, ...]


class PreviousRowProcessor(OneRowPerKey):
    """Per key: the last source row (kept through deletes as none); each row goes out with it."""

    spec: PreviousRowSpec

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        kept = [f.name for f in self.spec.state_schema.fields]
        previous = self.codec.read(self.state)
        for position, row in enumerate(sorted(rows, key=lambda r: r[SEQ])):
            if position and previous is not None:
                previous = self.through_store(self.state, self.codec, previous)
            out = row.asDict()
            for name, value in zip(kept, previous or (None,) * len(kept), strict=True):
                out[previous_name(name)] = value
            out[HAD_PREVIOUS] = previous is not None
            out.setdefault(ORDER, 0)
            yield Row(**{name: out[name] for name in self.spec.output})
            previous = None if row[TOMBSTONE] else tuple(row[name] for name in kept)
        if previous is None:
            self.state.clear()
        else:
            self.state.update(self.codec.encode(previous))

    def close(self) -> None:
        pass


def _replaced_by_next(ordered: Sequence[Row], position: int) -> bool:
    """Whether the row at ``position`` is a retraction the same row's addition follows."""
    row = ordered[position]
    if row[OP] != UNDO or position + 1 >= len(ordered):
        return False
    following = ordered[position + 1]
    return bool(following[SEQ] == row[SEQ] and following[OP] == ADD and following[ORDER] == row[ORDER] + 1)


def pseudo_values(row: Row) -> dict[str, Any]:
    """The row's pseudo column values, by name."""
    return {name: row[name] for name in PSEUDO_COLUMNS}


def unless_keyed(pseudo: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """Pseudo column values, minus those a grouping column already holds (GROUP BY ROWTIME)."""
    return {name: value for name, value in pseudo.items() if name not in row}


def struct(fields: Sequence[tuple[str, st.DataType]]) -> st.StructType:
    return st.StructType([st.StructField(name, type_, nullable=True) for name, type_ in fields])
