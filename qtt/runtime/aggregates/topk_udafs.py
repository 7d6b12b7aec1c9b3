"""TOPK and TOPKDISTINCT: ksqlDB's TopkKudaf and TopkDistinctKudaf, pure Python (no pyspark).

A k of 0 stops the query at the first value, and a negative k keeps every value but stops the
query when two session windows merge, as ksqlDB's implementations fail there.
"""

from __future__ import annotations

from typing import Any

from qtt.errors import QueryStops
from qtt.plan.functions.aggregate_signatures import Aggregate
from qtt.runtime.aggregates.java_semantics import coercer, quantizer, sort_key
from qtt.runtime.aggregates.udaf import Udaf


class TopK(Udaf):
    """ksqlDB's TopkKudaf / TopkDistinctKudaf: descending, stable for equal values.

    With additional columns (``TOPK(sort_col, col0, ..., k)``) each entry is a tuple of the
    sort value and the other columns, ordered by the sort value alone.
    """

    def __init__(self, aggregate: Aggregate) -> None:
        super().__init__(aggregate)
        self.k: int = aggregate.params[0]
        self.with_columns = len(aggregate.arg_types) > 1
        by_value = sort_key(aggregate.arg_types[0])
        self.key = (lambda entry: by_value(entry[0])) if self.with_columns else by_value
        self.coerce = coercer(aggregate.arg_types[0])
        self.quantizers = [quantizer(a) for a in aggregate.arg_types]
        self.distinct = aggregate.name == "TOPKDISTINCT"

    def initial(self) -> Any:
        return []

    def _entry(self, values: tuple[Any, ...]) -> Any:
        sort_value = self.coerce(values[0])
        if sort_value is None:
            return None
        return (sort_value, *values[1:]) if self.with_columns else sort_value

    def aggregate(self, acc: Any, *values: Any) -> Any:
        value = self._entry(values)
        items = [tuple(i) for i in acc] if self.with_columns else list(acc)
        if value is None:
            return items
        if self.k == 0:
            # ksqlDB's TopkKudaf and TopkDistinctKudaf read or replace entry k - 1 of the empty
            # list; a negative k never fills the list, which keeps every value
            raise QueryStops("java.lang.IndexOutOfBoundsException", "Index -1 out of bounds for length 0")
        if len(items) == self.k and self.key(value) <= self.key(items[-1]):
            return items
        if self.distinct and any(self.key(i) == self.key(value) for i in items):
            return items
        if len(items) == self.k:
            items[-1] = value
        else:
            items.append(value)
        return sorted(items, key=self.key, reverse=True)

    def merge(self, first: Any, second: Any) -> Any:
        if self.k < 0:
            # ksqlDB's mergers size the merged list min(k, both sizes): Java refuses a negative one
            raise QueryStops("java.lang.IllegalArgumentException", f"Illegal Capacity: {self.k}")
        # Stable descending merge of two sorted lists, as ksqlDB's merger (distinct drops ties).
        a, b = list(first), list(second)
        merged: list[Any] = []
        i = j = 0
        while len(merged) < self.k and (i < len(a) or j < len(b)):
            if j >= len(b) or (i < len(a) and self.key(a[i]) > self.key(b[j])):
                merged.append(a[i])
                i += 1
            elif i >= len(a) or self.key(b[j]) > self.key(a[i]):
                merged.append(b[j])
                j += 1
            elif self.distinct:
                merged.append(a[i])
                i += 1
                j += 1
            else:
                merged.append(a[i])
                i += 1
        return merged

    def result(self, acc: Any) -> Any:
        if self.with_columns:
            return [tuple(q(v) for q, v in zip(self.quantizers, entry, strict=True)) for entry in acc]
        return [self.quantizers[0](v) for v in acc]
