"""Aggregate function implementations: pure Python, called once per input record.

Spark's stateful operator keeps each accumulator in a state variable of type
``to_spark(aggregate.state_type)`` and calls :meth:`Udaf.aggregate` (stream input) or
:meth:`Udaf.undo` then :meth:`Udaf.aggregate` (table input) per record. Accumulators come back
from state as Rows, tuples, lists and dicts, so every method accepts any sequence or mapping and
returns a new plain value (STRUCT -> tuple in field order, ARRAY -> list, MAP -> dict); nothing
relies on identity or mutates what it gets. The arithmetic, ordering and equality are Java's, as
in ksqlDB (:mod:`qtt.runtime.aggregates.java_semantics`). No pyspark here: it is unit-tested without a JVM.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from qtt import sqltypes as t
from qtt.errors import QueryStops, RuntimeBuildError
from qtt.plan.functions.aggregate_signatures import HISTOGRAM_LIMIT, Aggregate
from qtt.runtime.aggregates import java_semantics
from qtt.runtime.aggregates.java_semantics import DECIMAL_CONTEXT, canon, coercer, quantizer, sort_key, wrapper
from qtt.runtime.aggregates.statistics_udafs import Correlation, StdDev
from qtt.runtime.aggregates.topk_udafs import TopK
from qtt.runtime.aggregates.udaf import Udaf

# ---------------------------------------------------------------------------- sequence numbers


class _Sequence:
    """Increasing sequence numbers for the BY_OFFSET aggregates' SEQ field.

    ksqlDB numbers records with a per-process counter; Python workers come and go, so qtt starts
    from the wall clock in nanoseconds, which keeps numbers increasing across worker restarts.
    """

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            self._last = max(self._last + 1, time.time_ns())
            return self._last


_next_sequence = _Sequence()


# ---------------------------------------------------------------------------- implementations


class _Count(Udaf):
    def initial(self) -> Any:
        return 0

    def aggregate(self, acc: Any, *values: Any) -> Any:
        if values and values[0] is None:
            return int(acc)
        return int(acc) + 1

    def undo(self, acc: Any, *values: Any) -> Any:
        if values and values[0] is None:
            return int(acc)
        return int(acc) - 1

    def merge(self, first: Any, second: Any) -> Any:
        return int(first) + int(second)

    def result(self, acc: Any) -> Any:
        return int(acc)


class _Sum(Udaf):
    def __init__(self, aggregate: Aggregate) -> None:
        super().__init__(aggregate)
        self.type = aggregate.return_type
        self.coerce = coercer(self.type)
        self.wrap = wrapper(self.type)
        self.quantize = quantizer(self.type)

    def initial(self) -> Any:
        if isinstance(self.type, t.Decimal):
            return self.quantize(0)
        return 0.0 if self.type.base == "DOUBLE" else 0

    def _add(self, acc: Any, value: Any) -> Any:
        if isinstance(self.type, t.Decimal):
            total = DECIMAL_CONTEXT.add(acc, value)
            digits = self.type.precision - self.type.scale
            if abs(total) >= 10**digits:
                msg = (
                    f"Numeric field overflow: A field with precision {self.type.precision} "
                    f"and scale {self.type.scale} must round to an absolute value less than "
                    f"10^{digits}. Got {total:f}"
                )
                # ksqlDB's aggregate throws, and Kafka Streams stops the query
                raise QueryStops("io.confluent.ksql.function.KsqlFunctionException", msg)
            return self.quantize(total)
        return self.wrap(acc + value)

    def aggregate(self, acc: Any, *values: Any) -> Any:
        value = self.coerce(values[0])
        return acc if value is None else self._add(acc, value)

    def undo(self, acc: Any, *values: Any) -> Any:
        value = self.coerce(values[0])
        if value is None:
            return acc
        if isinstance(self.type, t.Decimal):
            return self.quantize(DECIMAL_CONTEXT.subtract(acc, value))
        return self.wrap(acc - value)

    def merge(self, first: Any, second: Any) -> Any:
        if isinstance(self.type, t.Decimal):
            return self.quantize(DECIMAL_CONTEXT.add(first, second))
        return self.wrap(first + second)

    def result(self, acc: Any) -> Any:
        return self.quantize(acc)


class _SumList(_Sum):
    def _total(self, values: Iterable[Any]) -> Any:
        total = self.initial()
        for v in values:
            if v is not None:
                total = self.wrap(total + self.coerce(v))
        return total

    def aggregate(self, acc: Any, *values: Any) -> Any:
        return acc if values[0] is None else self.wrap(acc + self._total(values[0]))

    def undo(self, acc: Any, *values: Any) -> Any:
        return acc if values[0] is None else self.wrap(acc - self._total(values[0]))


class _Average(Udaf):
    """ksqlDB's AverageUdaf: STRUCT<SUM, COUNT>, 0.0 for an empty group."""

    def __init__(self, aggregate: Aggregate) -> None:
        super().__init__(aggregate)
        self.type = aggregate.arg_types[0]
        self.coerce = coercer(self.type)
        self.wrap = wrapper(self.type)

    def initial(self) -> Any:
        return (0.0 if self.type.base == "DOUBLE" else 0, 0)

    def aggregate(self, acc: Any, *values: Any) -> Any:
        value = self.coerce(values[0])
        if value is None:
            return tuple(acc)
        return (self.wrap(acc[0] + value), acc[1] + 1)

    def undo(self, acc: Any, *values: Any) -> Any:
        value = self.coerce(values[0])
        if value is None:
            return tuple(acc)
        return (self.wrap(acc[0] - value), acc[1] - 1)

    def merge(self, first: Any, second: Any) -> Any:
        return (self.wrap(first[0] + second[0]), first[1] + second[1])

    def result(self, acc: Any) -> Any:
        if acc[1] == 0:
            return 0.0
        return float(acc[0]) / float(acc[1])


class _MinMax(Udaf):
    """ksqlDB's BaseComparableKudaf: nulls ignored, null for a group of nulls."""

    def __init__(self, aggregate: Aggregate) -> None:
        super().__init__(aggregate)
        self.key = sort_key(aggregate.arg_types[0])
        self.coerce = coercer(aggregate.arg_types[0])
        self.quantize = quantizer(aggregate.return_type)
        self.is_min = aggregate.name == "MIN"

    def initial(self) -> Any:
        return None

    def _pick(self, acc: Any, value: Any) -> Any:
        if self.is_min:
            return acc if self.key(acc) < self.key(value) else value
        return acc if self.key(acc) > self.key(value) else value

    def aggregate(self, acc: Any, *values: Any) -> Any:
        value = self.coerce(values[0])
        if value is None:
            return acc
        if acc is None:
            return value
        return self._pick(acc, value)

    def merge(self, first: Any, second: Any) -> Any:
        return self.aggregate(first, second)

    def result(self, acc: Any) -> Any:
        return self.quantize(acc)


class _CollectList(Udaf):
    """ksqlDB's CollectListUdaf: keeps nulls; undo drops the last equal entry."""

    def __init__(self, aggregate: Aggregate) -> None:
        super().__init__(aggregate)
        self.limit: int | None = aggregate.params[0]

    def _room(self, acc: list[Any]) -> bool:
        return self.limit is None or len(acc) < self.limit

    def initial(self) -> Any:
        return []

    def aggregate(self, acc: Any, *values: Any) -> Any:
        items = list(acc)
        return [*items, values[0]] if self._room(items) else items

    def undo(self, acc: Any, *values: Any) -> Any:
        items = list(acc)
        target = canon(values[0])
        for index in range(len(items) - 1, -1, -1):
            if canon(items[index]) == target:
                return items[:index] + items[index + 1 :]
        # Not found: the limit kept it out in the first place.
        return items

    def merge(self, first: Any, second: Any) -> Any:
        items = list(first)
        room = len(second) if self.limit is None else max(self.limit - len(items), 0)
        return items + list(second)[:room]

    def result(self, acc: Any) -> Any:
        return list(acc)


class _CollectSet(_CollectList):
    """ksqlDB's CollectSetUdaf: distinct values (nulls included) in first-seen order."""

    def aggregate(self, acc: Any, *values: Any) -> Any:
        items = list(acc)
        value = values[0]
        if self._room(items) and canon(value) not in {canon(i) for i in items}:
            return [*items, value]
        return items

    def undo(self, acc: Any, *values: Any) -> Any:
        # ksqlDB's CollectSetUdaf is not a TableUdaf.
        return Udaf.undo(self, acc, *values)

    def merge(self, first: Any, second: Any) -> Any:
        items = list(first)
        for value in second:
            if self.limit is not None and len(items) >= self.limit:
                break
            if canon(value) not in {canon(i) for i in items}:
                items.append(value)
        return items


class _ByOffset(Udaf):
    def __init__(self, aggregate: Aggregate, sequence: Callable[[], int]) -> None:
        super().__init__(aggregate)
        self.sequence = sequence
        self.n: int | None = aggregate.params[0] if len(aggregate.params) == 2 else None
        self.ignore_nulls: bool = aggregate.params[-1]

    def _entry(self, value: Any, after: int | None) -> tuple[int, Any]:
        seq = self.sequence()
        if after is not None and seq <= after:
            seq = after + 1
        return (seq, value)


class _Latest(_ByOffset):
    """ksqlDB's LatestByOffset: STRUCT<SEQ, VAL>, or an ARRAY of them for the N variant."""

    def initial(self) -> Any:
        # ksqlDB numbers the empty accumulator too, which matters when session windows merge.
        return [] if self.n is not None else self._entry(None, None)

    def aggregate(self, acc: Any, *values: Any) -> Any:
        value = values[0]
        if self.n is None:
            if value is None and self.ignore_nulls:
                return tuple(acc)
            return self._entry(value, acc[0])
        items = [tuple(e) for e in acc]
        if value is None and self.ignore_nulls:
            return items
        items.append(self._entry(value, items[-1][0] if items else None))
        return items[-self.n :]

    def merge(self, first: Any, second: Any) -> Any:
        if self.n is None:
            later = _compare_latest(first, second, self.ignore_nulls) >= 0
            return tuple(first) if later else tuple(second)
        # As ksqlDB: sort both by sequence and keep the *first* N.
        merged = sorted([tuple(e) for e in (*first, *second)], key=lambda e: e[0])
        return merged[: self.n]

    def result(self, acc: Any) -> Any:
        if self.n is None:
            return acc[1]
        return [e[1] for e in acc]


def _compare_latest(first: Any, second: Any, ignore_nulls: bool) -> int:
    if ignore_nulls:
        if first[1] is None and second[1] is None:
            return 0
        if first[1] is None:
            return -1
        if second[1] is None:
            return 1
    return (first[0] > second[0]) - (first[0] < second[0])


class _Earliest(_ByOffset):
    """ksqlDB's EarliestByOffset: a null STRUCT until the first (non-null) value."""

    def initial(self) -> Any:
        return [] if self.n is not None else None

    def aggregate(self, acc: Any, *values: Any) -> Any:
        value = values[0]
        if self.n is None:
            if acc is not None:
                return tuple(acc)
            if value is None and self.ignore_nulls:
                return None
            return self._entry(value, None)
        items = [tuple(e) for e in acc]
        if value is None and self.ignore_nulls:
            return items
        if len(items) < self.n:
            items.append(self._entry(value, items[-1][0] if items else None))
        return items

    def merge(self, first: Any, second: Any) -> Any:
        if self.n is None:
            if first is None:
                return None if second is None else tuple(second)
            if second is None:
                return tuple(first)
            return tuple(first) if first[0] < second[0] else tuple(second)
        merged = sorted([tuple(e) for e in (*first, *second)], key=lambda e: e[0])
        return merged[: self.n]

    def result(self, acc: Any) -> Any:
        if self.n is None:
            return None if acc is None else acc[1]
        return [e[1] for e in acc]


class _CountDistinct(Udaf):
    """Exact distinct count of what ksqlDB's HyperLogLog hashes apart (``hashed_form``); its
    estimate agrees with it for small groups."""

    def __init__(self, aggregate: Aggregate) -> None:
        super().__init__(aggregate)
        self.form = java_semantics.hashed_form(aggregate.arg_types[0])

    def initial(self) -> Any:
        return []

    def aggregate(self, acc: Any, *values: Any) -> Any:
        items = list(acc)
        value = values[0]
        if value is None or self.form(value) in {self.form(i) for i in items}:
            return items
        return [*items, value]

    def merge(self, first: Any, second: Any) -> Any:
        items = list(first)
        for value in second:
            items = self.aggregate(items, value)
        return items

    def result(self, acc: Any) -> Any:
        return len(acc)


class _CollectMap(Udaf):
    """COLLECT_MAP, as ksqlDB's unmerged CollectMapUdaf proposal: every entry of the group's
    maps, a later value for a key winning; a null map adds nothing. qtt's planner no longer
    resolves it (it is no ksqlDB function); the plans persisted with it still run it.
    """

    def initial(self) -> Any:
        return {}

    def aggregate(self, acc: Any, *values: Any) -> Any:
        entries = dict(acc)
        if values[0] is not None:
            entries.update(dict(values[0]))
        return entries

    def merge(self, first: Any, second: Any) -> Any:
        # COLLECT_MAP is only in plans persisted when qtt planned it, never over session windows
        # (the only place merges happen), which its planner refused.
        raise NotImplementedError("COLLECT_MAP never merges: ksqlDB's merge of sessions is unfinished")

    def result(self, acc: Any) -> Any:
        return dict(acc)


class _Attr(Udaf):
    """ksqlDB's Attr: the group's one value, or null once it has held two different values.

    The accumulator counts each value (null is a value too); undo lowers a count, and a value
    whose count reached zero no longer counts as held.
    """

    def initial(self) -> Any:
        return []

    def _update(self, acc: Any, value: Any, count: int) -> Any:
        entries = [(v, int(c)) for v, c in acc]
        target = canon(value)
        for index, (held, held_count) in enumerate(entries):
            if canon(held) == target:
                entries[index] = (held, max(0, held_count + count))
                return entries
        if count > 0:
            entries.append((value, count))
        return entries

    def aggregate(self, acc: Any, *values: Any) -> Any:
        return self._update(acc, values[0], 1)

    def undo(self, acc: Any, *values: Any) -> Any:
        return self._update(acc, values[0], -1)

    def merge(self, first: Any, second: Any) -> Any:
        entries = list(first)
        for value, count in second:
            entries = self._update(entries, value, int(count))
        return entries

    def result(self, acc: Any) -> Any:
        held = [value for value, count in acc if int(count) > 0]
        return held[0] if len(held) == 1 else None


class _Histogram(Udaf):
    """ksqlDB's HistogramUdaf: value -> count, at most HISTOGRAM_LIMIT distinct values."""

    def initial(self) -> Any:
        return {}

    def aggregate(self, acc: Any, *values: Any) -> Any:
        counts = dict(acc)
        value = values[0]
        # ksqlDB counts nulls under a null key, which a Spark map cannot hold: qtt skips them.
        if value is None:
            return counts
        if len(counts) < HISTOGRAM_LIMIT or value in counts:
            counts[value] = counts.get(value, 0) + 1
        return counts

    def undo(self, acc: Any, *values: Any) -> Any:
        counts = dict(acc)
        value = values[0]
        if value is not None and value not in counts:
            # a value the limit kept out: ksqlDB's ``compute`` decrements a null count and throws
            raise QueryStops("java.lang.NullPointerException", "")
        if value in counts:
            if counts[value] <= 1:
                del counts[value]
            else:
                counts[value] -= 1
        return counts

    def merge(self, first: Any, second: Any) -> Any:
        counts = dict(first)
        for value, count in dict(second).items():
            if len(counts) < HISTOGRAM_LIMIT or value in counts:
                counts[value] = counts.get(value, 0) + count
        return counts

    def result(self, acc: Any) -> Any:
        return dict(acc)


_FACTORIES: dict[str, Callable[[Aggregate], Udaf]] = {
    "COUNT": _Count,
    "SUM": _Sum,
    "SUM_LIST": _SumList,
    "AVG": _Average,
    "STDDEV_SAMP": StdDev,
    "STDDEV_SAMPLE": StdDev,
    "CORRELATION": Correlation,
    "MIN": _MinMax,
    "MAX": _MinMax,
    "COLLECT_LIST": _CollectList,
    "COLLECT_SET": _CollectSet,
    "COUNT_DISTINCT": _CountDistinct,
    "TOPK": TopK,
    "TOPKDISTINCT": TopK,
    "HISTOGRAM": _Histogram,
    "ATTR": _Attr,
    "COLLECT_MAP": _CollectMap,
}


def implemented() -> frozenset[str]:
    """The names of the aggregates this module implements (by-offset ones in udaf_for)."""
    return frozenset(_FACTORIES) | {"LATEST_BY_OFFSET", "EARLIEST_BY_OFFSET"}


def udaf_for(aggregate: Aggregate, *, sequence: Callable[[], int] | None = None) -> Udaf:
    """The implementation of a resolved aggregate.

    Args:
        aggregate: from :func:`qtt.plan.functions.aggregate_signatures.resolve_aggregate`.
        sequence: numbers records for LATEST_BY_OFFSET and EARLIEST_BY_OFFSET; each call must
            return a larger number than the last. Defaults to a wall-clock based counter.
    """
    if aggregate.name == "LATEST_BY_OFFSET":
        return _Latest(aggregate, sequence or _next_sequence)
    if aggregate.name == "EARLIEST_BY_OFFSET":
        return _Earliest(aggregate, sequence or _next_sequence)
    factory = _FACTORIES.get(aggregate.name)
    if factory is None:
        msg = f"no implementation for aggregate {aggregate.name}; add one to qtt.runtime.aggregates.aggregators"
        raise RuntimeBuildError(msg)
    return factory(aggregate)
