"""Aggregate function (UDAF) signatures: argument split, return types and state layouts.

The planner resolves every aggregate call here once; ``qtt.runtime.aggregates.aggregators`` implements each
:class:`Aggregate` it returns. Semantics follow ksqlDB's UDAFs
(``io.confluent.ksql.function.udaf``):

* the trailing arguments of some overloads are *init parameters* (``TOPK``'s ``k``,
  ``LATEST_BY_OFFSET``'s ``n`` and ``ignoreNulls``); they must be literals, as in ksqlDB's
  ``UdafUtil``. The leading arguments are the aggregated columns (a literal there is fine:
  ``COUNT(1)``, ``SUM(2)``).
* column arguments never widen: ksqlDB looks aggregates up without implicit casts, so an
  overload takes exactly its base types (``CORRELATION(INTEGER, BIGINT)`` fits no overload);
  overloads that tie on a bare ``NULL`` init argument are ksqlDB's ambiguity message.
* :attr:`Aggregate.state_type` is ksqlDB's aggregate ("intermediate") type, so that a planner can
  reject formats that cannot hold it (DELIMITED and STRUCT/ARRAY states) with ksqlDB's message.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qtt import sqltypes as t
from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.functions.names import shown_name
from qtt.plan.functions.signature_matching import (
    NULL_TYPE_MESSAGE,
    NullType,
    note_resolution,
    shown_arguments,
)


class _NotLiteral:
    def __repr__(self) -> str:
        return "NOT_LITERAL"


#: Marks an argument that is not a literal in ``resolve_aggregate``'s ``literals``.
NOT_LITERAL: Any = _NotLiteral()


@dataclass(frozen=True)
class Aggregate:
    """One resolved aggregate call.

    Attributes:
        name: canonical upper-case name, e.g. ``COUNT``.
        arg_types: the types the implementation takes for the column arguments
            (``COUNT(*)`` -> ``()``).
        params: the init parameters as Python values with ksqlDB's defaults filled in, plus the
            configuration the function reads at creation (see :func:`resolve_aggregate`).
        return_type: the type of the result.
        state_type: the accumulator's type: ksqlDB's aggregate type and the persisted layout.
    """

    name: str
    arg_types: tuple[t.SqlType, ...]
    params: tuple[Any, ...]
    return_type: t.SqlType
    state_type: t.SqlType

    @property
    def supports_tables(self) -> bool:
        """Whether ksqlDB can undo this aggregate, so it may aggregate a table."""
        return self.name in TABLE_AGGREGATES


#: ksqlDB's ``ksql.functions.<name>.limit`` settings; unset or negative means no limit.
COLLECT_LIST_LIMIT = "ksql.functions.collect_list.limit"
COLLECT_SET_LIMIT = "ksql.functions.collect_set.limit"
#: The sort value's field in the entries of TOPK with additional columns; they are ``col0``, ...
TOPK_SORT_FIELD = "sort_col"
#: An overload's last column pattern that takes any number of further columns of any type.
MORE = "ANY..."
#: HISTOGRAM counts at most this many distinct values; ksqlDB hard-codes it.
HISTOGRAM_LIMIT = 1000
_JAVA_INT = re.compile(r"[+-]?\d+")

_NUMERIC = ("INTEGER", "BIGINT", "DOUBLE")
_COMPARABLE = (
    "INTEGER",
    "BIGINT",
    "DOUBLE",
    "DECIMAL",
    "DATE",
    "TIME",
    "TIMESTAMP",
    "STRING",
    "BYTES",
)


@dataclass(frozen=True)
class _Overload:
    """Column patterns (a base-type name, ``"ANY"``) and init parameter types of one overload.

    A last pattern :data:`MORE` takes any number of further columns of any type.
    """

    columns: tuple[str, ...]
    inits: tuple[t.SqlType, ...] = ()

    def patterns(self, count: int) -> tuple[str, ...] | None:
        """The pattern of each of ``count`` column arguments, or None if the count does not fit."""
        if self.columns[-1:] == (MORE,):
            fixed = self.columns[:-1]
            return (*fixed, *("ANY",) * (count - len(fixed))) if count >= len(fixed) else None
        return self.columns if count == len(self.columns) else None

    def describe(self, name: str) -> str:
        return f"{name}({', '.join([*self.columns, *(str(i) for i in self.inits)])})"


# (column types, params, config) -> (return type, state type, params)
_Build = Callable[
    [tuple[t.SqlType, ...], tuple[Any, ...], Mapping[str, Any]],
    tuple[t.SqlType, t.SqlType, tuple[Any, ...]],
]


@dataclass(frozen=True)
class _Spec:
    """One row of the aggregate table.

    Attributes:
        overloads: the signatures qtt runs; empty when qtt does not run the aggregate yet.
        build: the return and state types of a matched overload.
        table: ksqlDB implements it as a ``TableUdaf`` (it can undo a value), so it may
            aggregate a table.
        unsupported: for a ksqlDB aggregate qtt does not run yet, the feature to name.
        persisted_only: for an aggregate ksqlDB does not have that qtt once planned, why: a
            call is ksqlDB's unknown-function error, and the runtime runs it for the plans
            persisted with it.
    """

    overloads: tuple[_Overload, ...]
    build: _Build
    table: bool = False
    unsupported: str | None = None
    persisted_only: str | None = None


def _one(*bases: str) -> tuple[_Overload, ...]:
    return tuple(_Overload((b,)) for b in bases)


def _same(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], _: Mapping[str, Any]) -> Any:
    return cols[0], cols[0], params


def _count(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], _: Mapping[str, Any]) -> Any:
    return t.BIGINT, t.BIGINT, params


def _sum_list(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], _: Mapping[str, Any]) -> Any:
    element = cols[0].element  # type: ignore[attr-defined]
    return element, element, params


def _avg(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], _: Mapping[str, Any]) -> Any:
    state = t.Struct((t.Field("SUM", cols[0]), t.Field("COUNT", t.BIGINT)))
    return t.DOUBLE, state, params


def _stddev(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], _: Mapping[str, Any]) -> Any:
    state = t.Struct((t.Field("SUM", cols[0]), t.Field("COUNT", t.BIGINT), t.Field("M2", t.DOUBLE)))
    return t.DOUBLE, state, params


def _correlation(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], _: Mapping[str, Any]) -> Any:
    # ksqlDB's CorrelationUdaf: running sums as DOUBLE fields (whole numbers as their double
    # values) and a BIGINT count.
    sums = ("X_SUM", "Y_SUM", "X_SQUARED_SUM", "Y_SQUARED_SUM", "XY_SUM")
    state = t.Struct((*(t.Field(n, t.DOUBLE) for n in sums), t.Field("COUNT", t.BIGINT)))
    return t.DOUBLE, state, params


def _limit(config: Mapping[str, Any], key: str) -> int | None:
    """The limit as ksqlDB's ``Collect.configure`` reads it: a number by Java's ``intValue()``,
    a text by ``Integer.parseInt``, any other value ignored; negative means no limit."""
    raw = config.get(key)
    if raw is None or isinstance(raw, bool | list | dict):
        return None
    if isinstance(raw, int):
        limit = (raw + 2**31) % 2**32 - 2**31  # Long.intValue() keeps the low 32 bits
    elif isinstance(raw, float | decimal.Decimal):
        limit = 0 if raw != raw else int(max(min(raw, 2**31 - 1), -(2**31)))  # Double.intValue()
    else:
        text = str(raw)
        # Integer.parseInt: a sign and decimal digits, no blanks or separators, within 32 bits
        if not _JAVA_INT.fullmatch(text) or not -(2**31) <= int(text) < 2**31:
            # ksqlDB's UdafFactoryInvoker reports what configure() throws as its own message
            msg = "Failed to invoke UDAF factory method"
            raise StatementError(msg, hint=f'For input string: "{text}"')
        limit = int(text)
    return None if limit < 0 else limit


def _collect(key: str) -> _Build:
    def build(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], config: Mapping[str, Any]) -> Any:
        array = t.Array(cols[0])
        return array, array, (_limit(config, key),)

    return build


def _by_offset(name: str, variable: str) -> _Build:
    def build(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], _: Mapping[str, Any]) -> Any:
        entry = t.Struct((t.Field("SEQ", t.BIGINT), t.Field("VAL", cols[0])))
        if params and not isinstance(params[0], bool):
            n = params[0]
            if n <= 0:
                # ksqlDB's factory method throws "latestN must be 1 or greater", which its
                # UdafFactoryInvoker wraps: the statement's error is the wrapper's message
                msg = "Failed to invoke UDAF factory method"
                raise StatementError(msg, hint=f"{variable} must be 1 or greater")
            ignore_nulls = params[1] if len(params) > 1 else True
            return t.Array(cols[0]), t.Array(entry), (n, ignore_nulls)
        ignore_nulls = params[0] if params else True
        return cols[0], entry, (ignore_nulls,)

    return build


def _top() -> _Build:
    # ksqlDB takes any k here; a k below 1 fails while the query runs (qtt.runtime.aggregates.topk_udafs)
    def build(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], _: Mapping[str, Any]) -> Any:
        if len(cols) == 1:
            return t.Array(cols[0]), t.Array(cols[0]), params
        # ksqlDB 0.29's TOPK(sort_col, other_cols..., k): each entry is a struct of the sort
        # value and the other columns, named as ksqlDB names them.
        fields = (t.Field(TOPK_SORT_FIELD, cols[0]), *(t.Field(f"col{i}", c) for i, c in enumerate(cols[1:])))
        entries = t.Array(t.Struct(fields))
        return entries, entries, params

    return build


def _attr(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], _: Mapping[str, Any]) -> Any:
    # ksqlDB's Attr: a list of (value, count) entries, not a map, as nulls count as a value.
    entry = t.Struct((t.Field("VALUE", cols[0]), t.Field("COUNT", t.INTEGER)))
    return cols[0], t.Array(entry), params


def _count_distinct(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], _: Mapping[str, Any]) -> Any:
    # ksqlDB keeps HyperLogLog registers (ARRAY<INTEGER>); qtt keeps the distinct values
    # themselves, which gives the exact count that HLL gives for small groups. Both are arrays,
    # so formats that cannot hold an ARRAY state reject both.
    return t.BIGINT, t.Array(cols[0]), params


def _histogram(cols: tuple[t.SqlType, ...], params: tuple[Any, ...], _: Mapping[str, Any]) -> Any:
    histogram = t.Map(t.STRING, t.BIGINT)
    return histogram, histogram, params


_BY_OFFSET_OVERLOADS = (
    _Overload(("ANY",)),
    _Overload(("ANY",), (t.BOOLEAN,)),
    _Overload(("ANY",), (t.INTEGER,)),
    _Overload(("ANY",), (t.INTEGER, t.BOOLEAN)),
)

#: Every ksqlDB aggregate: the ones qtt runs with their overloads, the others marked unsupported.
_SPECS: dict[str, _Spec] = {
    "COUNT": _Spec((_Overload(()), _Overload(("ANY",))), _count, table=True),
    "SUM": _Spec(_one("INTEGER", "BIGINT", "DOUBLE", "DECIMAL"), _same, table=True),
    "SUM_LIST": _Spec(_one("ARRAY<INTEGER>", "ARRAY<BIGINT>", "ARRAY<DOUBLE>"), _sum_list, table=True),
    "AVG": _Spec(_one(*_NUMERIC), _avg, table=True),
    "MIN": _Spec(_one(*_COMPARABLE), _same),
    "MAX": _Spec(_one(*_COMPARABLE), _same),
    "COLLECT_LIST": _Spec(_one("ANY"), _collect(COLLECT_LIST_LIMIT), table=True),
    "COLLECT_SET": _Spec(_one("ANY"), _collect(COLLECT_SET_LIMIT)),
    "LATEST_BY_OFFSET": _Spec(_BY_OFFSET_OVERLOADS, _by_offset("LATEST_BY_OFFSET", "latestN")),
    "EARLIEST_BY_OFFSET": _Spec(_BY_OFFSET_OVERLOADS, _by_offset("EARLIEST_BY_OFFSET", "earliestN")),
    "COUNT_DISTINCT": _Spec(_one("ANY"), _count_distinct),
    "TOPK": _Spec(
        tuple(_Overload((b, MORE), (t.INTEGER,)) for b in ("INTEGER", "BIGINT", "DOUBLE", "STRING")),
        _top(),
    ),
    "TOPKDISTINCT": _Spec(
        # BYTES and the time types too, as ksqlDB has since confluentinc/ksql#9202
        tuple(
            _Overload((b,), (t.INTEGER,))
            for b in ("INTEGER", "BIGINT", "DOUBLE", "STRING", "DECIMAL", "BYTES", "DATE", "TIME", "TIMESTAMP")
        ),
        _top(),
    ),
    "STDDEV_SAMP": _Spec(_one(*_NUMERIC), _stddev, table=True),
    "STDDEV_SAMPLE": _Spec(_one(*_NUMERIC), _stddev, table=True),
    "HISTOGRAM": _Spec(_one("STRING"), _histogram, table=True),
    # CorrelationUdaf's DOUBLE, INTEGER and BIGINT factories: both columns of one type
    "CORRELATION": _Spec(tuple(_Overload((b, b)) for b in ("DOUBLE", "INTEGER", "BIGINT")), _correlation, table=True),
    "ATTR": _Spec(_one("ANY"), _attr, table=True),
    "COLLECT_MAP": _Spec(
        _one("MAP"),
        _same,
        persisted_only="a ksqlDB proposal that was never merged (confluentinc/ksql#8903)",
    ),
}

#: Every aggregate name ksqlDB has, run or not: what makes a function call an aggregate.
AGGREGATE_NAMES = frozenset(name for name, spec in _SPECS.items() if spec.persisted_only is None)
#: Aggregates ksqlDB does not have whose calls persisted plans hold, and why qtt planned them.
PERSISTED_ONLY_AGGREGATES = {name: spec.persisted_only for name, spec in _SPECS.items() if spec.persisted_only}
#: Aggregates ksqlDB implements as ``TableUdaf`` (they can undo a value).
TABLE_AGGREGATES = frozenset(name for name, spec in _SPECS.items() if spec.table)
#: Aggregates qtt runs; the runtime has an implementation for exactly these.
RUN_AGGREGATES = frozenset(name for name, spec in _SPECS.items() if spec.unsupported is None)


def is_aggregate(name: str) -> bool:
    """Whether ``name`` (any case) is an aggregate function."""
    return name.upper() in AGGREGATE_NAMES


def takes_no_arguments(name: str) -> bool:
    """Whether an overload of the aggregate ``name`` takes no argument at all (``COUNT(*)``);
    ksqlDB gives a call of any other aggregate without arguments ROWTIME as its argument."""
    spec = _SPECS.get(name.upper())
    return spec is not None and any(not o.columns and not o.inits for o in spec.overloads)


def _fits(pattern: str, actual: t.SqlType) -> bool:
    """Whether a column argument of type ``actual`` fits ``pattern``. ksqlDB looks aggregates up
    without implicit casts (UdafAggregateFunctionFactory's UdfIndex): CORRELATION(INTEGER,
    BIGINT) fits none of CORRELATION's overloads, nor an element type another."""
    if pattern == "ANY":
        return True
    if pattern.startswith("ARRAY<"):
        return str(actual) == pattern
    return actual.base == pattern


def _match(overload: _Overload, arg_types: Sequence[t.SqlType]) -> tuple[t.SqlType, ...] | None:
    """The column arguments' types if ``arg_types`` fit ``overload``, else None."""
    patterns = overload.patterns(len(arg_types) - len(overload.inits))
    if patterns is None:
        return None
    columns = arg_types[: len(patterns)]
    if any(isinstance(a, NullType) or not _fits(p, a) for p, a in zip(patterns, columns, strict=True)):
        return None
    # Init parameters bind to Java ``int``/``boolean`` factory arguments: no widening.
    inits = arg_types[len(patterns) :]
    if any(a != p and not isinstance(a, NullType) for a, p in zip(inits, overload.inits, strict=True)):
        return None
    return tuple(columns)


def _tied(overloads: Iterable[_Overload]) -> bool:
    """Whether the best of the fitting ``overloads`` ties, ranked as ksqlDB's UdfIndex ranks
    them: fixed parameters before variable ones, then more parameters, then fewer generic."""

    def rank(overload: _Overload) -> tuple[int, int, int]:
        generic = sum(1 for c in overload.columns if c in ("ANY", MORE))
        return (0 if overload.columns[-1:] == (MORE,) else 1, len(overload.columns) + len(overload.inits), -generic)

    ranks = [rank(o) for o in overloads]
    return ranks.count(max(ranks)) > 1


def resolve_aggregate(
    name: str,
    arg_types: Sequence[t.SqlType],
    literals: Sequence[object],
    *,
    config: Mapping[str, Any] | None = None,
    arg_sql: Sequence[str] | None = None,
    written: str | None = None,
) -> Aggregate:
    """Resolve an aggregate call.

    Args:
        name: the function name, any case.
        arg_types: the SQL type of each argument (``COUNT(*)`` has none).
        literals: each argument's Python value if it is a literal, else :data:`NOT_LITERAL`.
        config: the statement's properties; COLLECT_LIST and COLLECT_SET read their limits,
            which end up in :attr:`Aggregate.params`.
        arg_sql: each argument as SQL text, for ksqlDB's message about non-literal parameters.
        written: the name as the statement spelled it, for ksqlDB's message about arguments.

    Raises:
        StatementError: for arguments no overload takes, or an init parameter that is not a
            literal, with ksqlDB's messages.
        UnsupportedFeatureError: for aggregates and overloads qtt does not run.
    """
    upper = name.upper()
    spec = _SPECS.get(upper)
    if spec is None or spec.persisted_only is not None:
        msg = f"Can't find any functions with the name '{upper}'."
        raise StatementError(msg)
    if spec.unsupported is not None:
        raise UnsupportedFeatureError(spec.unsupported)
    if len(literals) != len(arg_types):
        msg = f"{len(literals)} literal markers for {len(arg_types)} arguments of {upper}"
        raise ValueError(msg)
    if arg_types and isinstance(arg_types[0], NullType):
        raise StatementError(NULL_TYPE_MESSAGE)
    matches = [(m, o) for o in spec.overloads if (m := _match(o, arg_types)) is not None]
    shown = shown_arguments(arg_types)
    label = shown_name(upper, written)
    options = "\n".join(f"  {o.describe(label)}" for o in spec.overloads)
    if not matches:
        msg = f"Function '{label}' does not accept parameters ({shown}).\nValid alternatives are:\n{options}"
        raise StatementError(msg)
    if _tied(overload for _, overload in matches):
        # A NULL init argument fits overloads that differ only in that parameter's type
        # (LATEST_BY_OFFSET's int n and boolean ignoreNulls); ksqlDB's UdfIndex ranks them
        # equal and finds the call ambiguous before it reads the init arguments.
        msg = (
            f"Function '{label}' cannot be resolved due to ambiguous method parameters ({shown}).\n"
            "Use CAST() to explicitly cast your parameters to one of the supported function calls.\n"
            f"Valid function calls are:\n{options}"
        )
        raise StatementError(msg)
    columns, overload = matches[0]
    note_resolution(lambda: overload.describe(upper))
    params = []
    for index in range(len(columns), len(arg_types)):
        value = literals[index]
        if value is NOT_LITERAL:
            msg = f"Parameter {index + 1} passed to function {upper} must be a literal constant"
            msg += f", but was expression: '{arg_sql[index]}'" if arg_sql is not None else "."
            raise StatementError(msg)
        if value is None:
            msg = f"Parameter {index + 1} passed to function {upper} must not be null"
            raise StatementError(msg)
        params.append(value)
    return_type, state_type, final = spec.build(columns, tuple(params), config or {})
    return Aggregate(upper, columns, final, return_type, state_type)


def overload_texts(name: str) -> tuple[tuple[str, ...], str | None]:
    """An aggregate's overloads as text (``SUM(INTEGER)``), and the feature it needs when qtt
    does not run it yet (None when it does); for the generated function reference."""
    spec = _SPECS[name]
    return tuple(overload.describe(name) for overload in spec.overloads), spec.unsupported
