"""Signature patterns and the matching of argument types against them.

Parameter patterns are SQL types, type variables (``T``), container patterns (``ArrayOf(T)``)
or ``ANY_DECIMAL``. ksqlDB's implicit numeric widening applies (INTEGER -> BIGINT -> DECIMAL ->
DOUBLE, also inside a collection parameter without type variables), and a NULL argument fits
any parameter. Signatures that fit without widening are tried first, then those that fit once
widened; among them the shape decides, as in ksqlDB's ``UdfIndex``, and two of the same shape
make the call ambiguous unless they take the arguments as the same parameters. A variadic
signature also takes, as ksqlDB's does, one ARRAY for all its variable arguments (qtt does not
run that form: it is an unsupported feature). The table of functions is
:mod:`qtt.plan.functions.scalar_signatures`.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from qtt import sqltypes as t
from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.functions.names import shown_name


class NullType(t.SqlType):
    """The type of a bare NULL literal before the planner infers a real type. Never persisted."""

    def __str__(self) -> str:
        return "NULL"

    @property
    def base(self) -> str:
        return "NULL"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NullType)

    def __hash__(self) -> int:
        return hash("NULL")


NULL = NullType()


@dataclass(frozen=True)
class Var:
    """A type variable, bound by the first argument that matches it."""

    name: str


@dataclass(frozen=True)
class ArrayOf:
    element: Pattern


@dataclass(frozen=True)
class MapOf:
    key: Pattern
    value: Pattern


@dataclass(frozen=True)
class AnyDecimal:
    """Any ``DECIMAL(p, s)``."""


@dataclass(frozen=True)
class IntervalUnitParam:
    """A ``java.util.concurrent.TimeUnit`` parameter (ksqlDB's ``IntervalUnitType``, printed
    ``INTERVAL UNIT``): only an argument without a type fits it, a unit keyword or a bare NULL."""


Pattern = t.SqlType | Var | ArrayOf | MapOf | AnyDecimal | IntervalUnitParam
ReturnType = Pattern | Callable[[Sequence[t.SqlType]], t.SqlType]

T, K, V = Var("T"), Var("K"), Var("V")
ANY_DECIMAL = AnyDecimal()
INTERVAL_UNIT = IntervalUnitParam()


@dataclass(frozen=True)
class Signature:
    params: tuple[Pattern, ...]
    returns: ReturnType
    #: the last parameter may repeat (zero or more times beyond the fixed ones).
    variadic: bool = False
    #: set when ksqlDB has this overload but qtt does not run it yet: the feature to name.
    unsupported: str | None = None

    def describe(self) -> str:
        parts = [describe_pattern(p) for p in self.params]
        if self.variadic and parts:
            parts[-1] += "..."
        return f"({', '.join(parts)})"


#: A planner-side check of a resolved call: gets the argument types, raises on misuse.
Check = Callable[[Sequence[t.SqlType]], None]


@dataclass(frozen=True)
class Function:
    name: str
    signatures: tuple[Signature, ...]
    description: str = ""
    checks: tuple[Check, ...] = field(default=())
    #: positions of arguments that must be literals, because Spark needs them at build time.
    constant_args: frozenset[int] = frozenset()
    #: whether ksqlDB's implementation throws on some arguments that are not null (text that does
    #: not parse, an unknown zone, pattern or encoding, a value out of range) while it returns
    #: null only for null arguments: where qtt's call is null of arguments that are not, ksqlDB's
    #: threw (the expression-failure rule of :mod:`qtt.plan.analysis.expression_errors`)
    throws_on_input: bool = False


def describe_pattern(p: Pattern) -> str:
    """A parameter pattern as ksqlDB's messages show it: ``ARRAY<T>``, ``MAP<K, V>``, ``DECIMAL``."""
    if isinstance(p, Var):
        return p.name
    if isinstance(p, ArrayOf):
        return f"ARRAY<{describe_pattern(p.element)}>"
    if isinstance(p, MapOf):
        return f"MAP<{describe_pattern(p.key)}, {describe_pattern(p.value)}>"
    if isinstance(p, AnyDecimal):
        return "DECIMAL"
    if isinstance(p, IntervalUnitParam):
        return "INTERVAL UNIT"
    return str(p)


_WIDENING = {"INTEGER": 0, "BIGINT": 1, "DECIMAL": 2, "DOUBLE": 3}


def widens_to(source: t.SqlType, target: t.SqlType) -> bool:
    """Whether ksqlDB converts ``source`` to ``target`` implicitly (numeric widening only)."""
    if source == target:
        return True
    if source.base in _WIDENING and target.base in _WIDENING:
        return _WIDENING[source.base] < _WIDENING[target.base]
    return False


#: the types a STRING argument is read as when no signature takes the STRING itself
#: (ksqlDB's ``SqlBaseType.canImplicitlyCast``: the text is parsed as ``CAST`` parses it)
_TEXT_AS_OTHER = frozenset(["DATE", "TIME", "TIMESTAMP", "BYTES"])


def casts_to(source: t.SqlType, target: t.SqlType) -> bool:
    """Whether ksqlDB converts a function argument of ``source`` to a parameter of ``target``:
    numeric widening, and a STRING read as a DATE, TIME, TIMESTAMP or (base64) BYTES, as
    ``CAST`` reads it."""
    return widens_to(source, target) or (source.base == "STRING" and target.base in _TEXT_AS_OTHER)


def widen_integer_to_decimal(type_: t.SqlType) -> t.Decimal:
    """The DECIMAL that holds every value of an integer type (ksqlDB's rule)."""
    if isinstance(type_, t.Decimal):
        return type_
    return t.Decimal(10, 0) if type_.base == "INTEGER" else t.Decimal(19, 0)


def widen_decimals(a: t.SqlType, b: t.SqlType) -> t.Decimal:
    """The DECIMAL that holds every value of both types (ksqlDB's ``DecimalUtil.widen``)."""
    x, y = widen_integer_to_decimal(a), widen_integer_to_decimal(b)
    scale = max(x.scale, y.scale)
    return t.Decimal(min(scale + max(x.precision - x.scale, y.precision - y.scale), 38), scale)


class _NoMatch(Exception):
    pass


def _match(pattern: Pattern, actual: t.SqlType, bindings: dict[str, t.SqlType], widen: bool) -> None:
    """Match one argument, binding type variables; raises :class:`_NoMatch` if it does not fit."""
    if isinstance(actual, NullType):
        return
    if isinstance(pattern, Var):
        bound = bindings.setdefault(pattern.name, actual)
        # ksqlDB's GenericsUtil binds a type variable to one type exactly: no widening, not
        # even between two DECIMALs of different precision.
        if bound != actual:
            raise _NoMatch
        return
    # ksqlDB's ParamTypes compares the elements of a collection without type variables as it
    # compares the collection (a MAP<STRING, DECIMAL> widens to MAP<STRING, DOUBLE>); one with
    # a type variable goes to GenericsUtil, which binds it exactly, so never widens inside.
    inner = widen and not _is_generic(pattern)
    if isinstance(pattern, ArrayOf):
        if not isinstance(actual, t.Array):
            raise _NoMatch
        _match(pattern.element, actual.element, bindings, widen=inner)
        return
    if isinstance(pattern, MapOf):
        if not isinstance(actual, t.Map):
            raise _NoMatch
        _match(pattern.key, actual.key, bindings, widen=inner)
        _match(pattern.value, actual.value, bindings, widen=inner)
        return
    if isinstance(pattern, AnyDecimal):
        if not (isinstance(actual, t.Decimal) or (widen and actual.base in ("INTEGER", "BIGINT"))):
            raise _NoMatch
        return
    if isinstance(pattern, IntervalUnitParam):
        raise _NoMatch
    if actual != pattern and not (widen and casts_to(actual, pattern)):
        raise _NoMatch


def substitute(pattern: ReturnType, bindings: dict[str, t.SqlType], args: Sequence[t.SqlType]) -> t.SqlType | None:
    """The concrete type of ``pattern`` under ``bindings``; None if a variable is unbound."""
    if callable(pattern) and not isinstance(pattern, t.SqlType):
        return pattern(args)
    if isinstance(pattern, Var):
        return bindings.get(pattern.name)
    if isinstance(pattern, ArrayOf):
        element = substitute(pattern.element, bindings, args)
        return t.Array(element) if element is not None else None
    if isinstance(pattern, MapOf):
        key = substitute(pattern.key, bindings, args)
        value = substitute(pattern.value, bindings, args)
        return t.Map(key, value) if key is not None and value is not None else None
    if isinstance(pattern, AnyDecimal):
        return None
    if isinstance(pattern, IntervalUnitParam):
        return t.STRING  # qtt's IntervalUnit expression is typed STRING
    if isinstance(pattern, t.SqlType):
        return pattern
    return None


def _param_type(
    pattern: Pattern, actual: t.SqlType, bindings: dict[str, t.SqlType], args: Sequence[t.SqlType]
) -> t.SqlType | None:
    if isinstance(pattern, AnyDecimal):
        return None if isinstance(actual, NullType) else widen_integer_to_decimal(actual)
    return substitute(pattern, bindings, args)


class _NullOnly(dict[str, t.SqlType]):
    """Bindings where a variable no argument but a bare NULL reaches reads as STRING: the call's
    result does not depend on it, and a null of any type is the same null."""

    def get(self, key: str, default: t.SqlType | None = None) -> t.SqlType | None:  # type: ignore[override]
        return super().get(key, t.STRING)


def _type_bare_nulls(
    params: Sequence[Pattern],
    concrete: list[t.SqlType | None],
    arg_types: Sequence[t.SqlType],
    bindings: dict[str, t.SqlType],
) -> list[t.SqlType | None]:
    # ksqlDB calls a UDF with a Java null for a NULL whose type variable nothing else binds
    # (TO_JSON_STRING(NULL) is 'null'); Spark needs a typed null there.
    unbound = _NullOnly(bindings)
    return [
        substitute(p, unbound, arg_types) if c is None and isinstance(a, NullType) else c
        for p, c, a in zip(params, concrete, arg_types, strict=True)
    ]


def _fill_decimal_nulls(params: Sequence[Pattern], concrete: list[t.SqlType | None]) -> list[t.SqlType | None]:
    # A NULL passed where any DECIMAL fits (GREATEST's) is typed as the decimal the other
    # decimal arguments of the call widen to.
    decimals = [c for p, c in zip(params, concrete, strict=True) if isinstance(p, AnyDecimal) and c is not None]
    if not decimals:
        return concrete
    widest = functools.reduce(widen_decimals, decimals)
    return [widest if isinstance(p, AnyDecimal) and c is None else c for p, c in zip(params, concrete, strict=True)]


@dataclass(frozen=True)
class Resolved:
    """A call matched to one signature."""

    function: Function
    signature: Signature
    param_types: tuple[t.SqlType | None, ...]
    return_type: t.SqlType


def expand_params(signature: Signature, count: int) -> tuple[Pattern, ...] | None:
    fixed = signature.params
    if signature.variadic:
        if count < len(fixed) - 1:
            return None
        return fixed[:-1] + (fixed[-1],) * (count - len(fixed) + 1)
    return fixed if count == len(fixed) else None


def _param_forms(signature: Signature, count: int) -> Iterator[tuple[Pattern, ...]]:
    """The parameters ``count`` arguments fill: the variable ones repeated as needed, and for a
    variadic signature given one argument per parameter, also the last as one ARRAY of them
    (ksqlDB's UdfIndex keeps both branches, so a NULL there fits both and is ambiguous)."""
    params = expand_params(signature, count)
    if params is not None:
        yield params
    if signature.variadic and count == len(signature.params):
        yield (*signature.params[:-1], ArrayOf(signature.params[-1]))


NULL_TYPE_MESSAGE = (
    "Can't infer a type of null. Please explicitly cast it to a required type, e.g. CAST(null AS VARCHAR)."
)


def match_signature(function: Function, arg_types: Sequence[t.SqlType], written: str | None = None) -> Resolved:
    """Pick the signature of ``function`` that fits ``arg_types``.

    Signatures the arguments fit without widening are the candidates; if none, those they fit
    once widened (a STRING read as a time type counts as widening). The candidate of the best
    shape wins (:func:`_precedence`). ``written`` is the name as the statement spelled it, for
    the message where ksqlDB's declared name is not known.

    Raises:
        StatementError: for arguments that fit no signature, or two candidates of one shape.
        UnsupportedFeatureError: for an overload ksqlDB has and qtt does not run yet.
    """
    name = function.name
    for widen in (False, True):
        candidates: list[tuple[Signature, dict[str, t.SqlType], tuple[Pattern, ...]]] = []
        for signature in function.signatures:
            for params in _param_forms(signature, len(arg_types)):
                bindings: dict[str, t.SqlType] = {}
                try:
                    for p, a in zip(params, arg_types, strict=True):
                        _match(p, a, bindings, widen)
                except _NoMatch:
                    continue
                candidates.append((signature, bindings, params))
        if not candidates:
            continue
        ranks = [_precedence(c[0]) for c in candidates]
        best = [c for c, rank in zip(candidates, ranks, strict=True) if rank == max(ranks)]
        # Overloads that take the call's arguments as the same parameters (two variadic ones
        # given no variable argument) share one node of ksqlDB's UdfIndex trie, which keeps
        # the first added: no ambiguity. Ties on different nodes are ambiguous.
        if len({c[2] for c in best}) > 1:
            raise StatementError(_ambiguous_message(function, arg_types, written))
        signature, bindings, params = best[0]
        if params != expand_params(signature, len(arg_types)):
            raise UnsupportedFeatureError(f"{name}{signature.describe()} given a list for its variable arguments")
        if signature.unsupported is not None:
            raise UnsupportedFeatureError(f"{name}{signature.describe()}: {signature.unsupported}")
        concrete = _fill_decimal_nulls(
            params, [_param_type(p, a, bindings, arg_types) for p, a in zip(params, arg_types, strict=True)]
        )
        effective = [c or a for c, a in zip(concrete, arg_types, strict=True)]
        returns = substitute(signature.returns, bindings, effective)
        if returns is None:
            raise StatementError(NULL_TYPE_MESSAGE)
        concrete = _type_bare_nulls(params, concrete, arg_types, bindings)
        for check in function.checks:
            check(effective)
        note_resolution(functools.partial(_signature_text, name, signature))
        return Resolved(function, signature, tuple(concrete), returns)
    raise no_match_error(function, arg_types, written)


def no_match_error(function: Function, arg_types: Sequence[t.SqlType], written: str | None = None) -> StatementError:
    """ksqlDB's ``UdfIndex`` error for arguments that fit none of ``function``'s overloads."""
    msg = (
        f"Function '{shown_name(function.name, written)}' does not accept parameters "
        f"({shown_arguments(arg_types)}).\nValid alternatives are:\n{_alternatives(function)}"
    )
    return StatementError(msg)


def _alternatives(function: Function) -> str:
    # ksqlDB lists a scalar function's overloads under its upper-case name.
    return "\n".join(f"  {function.name}{s.describe()}" for s in function.signatures)


def _precedence(signature: Signature) -> tuple[int, int, int]:
    """How ksqlDB's ``UdfIndex`` ranks two overloads that both fit a call: one without variable
    arguments first, then the one with more parameters, then the one with fewer generic
    parameters. Two fitting overloads that rank equal make the call ambiguous; how much
    widening each needs does not count."""
    generics = sum(1 for p in signature.params if _is_generic(p))
    return (0 if signature.variadic else 1, len(signature.params), -generics)


def _is_generic(pattern: Pattern) -> bool:
    if isinstance(pattern, Var):
        return True
    if isinstance(pattern, ArrayOf):
        return _is_generic(pattern.element)
    if isinstance(pattern, MapOf):
        return _is_generic(pattern.key) or _is_generic(pattern.value)
    return False


def shown_argument(type_: t.SqlType) -> str:
    """One argument type as ksqlDB's ``UdfIndex`` lists it in its resolution messages: with
    ``FormatOptions.noEscape()``, so a struct's field names are bare (``STRUCT<A STRING>``,
    where ``str`` gives ``STRUCT<`A` STRING>``), and an argument without a type (a bare NULL)
    is ``null``."""
    return t.type_text(type_, lambda name: name, lambda leaf: "null" if isinstance(leaf, NullType) else str(leaf))


def shown_arguments(arg_types: Sequence[t.SqlType]) -> str:
    """The argument types of a call as ksqlDB's resolution messages list them
    (:func:`shown_argument`), comma-separated."""
    return ", ".join(shown_argument(a) for a in arg_types)


def _ambiguous_message(function: Function, arg_types: Sequence[t.SqlType], written: str | None) -> str:
    return (
        f"Function '{shown_name(function.name, written)}' cannot be resolved due to ambiguous method "
        f"parameters ({shown_arguments(arg_types)}).\n"
        "Use CAST() to explicitly cast your parameters to one of the supported function calls.\n"
        f"Valid function calls are:\n{_alternatives(function)}"
    )


#: the signatures resolved while :func:`observing_resolutions` is open, as text
_resolutions: ContextVar[Counter[str] | None] = ContextVar("qtt_resolutions", default=None)


@contextmanager
def observing_resolutions() -> Iterator[Counter[str]]:
    """Count every signature a call resolves to while the block runs, as text
    (``ROUND(DECIMAL, INTEGER)``, ``MIN(DATE)``): scalar functions, lambda invocations and
    aggregates (:mod:`qtt.harness.upkeep.signature_coverage` asks which have no case)."""
    seen: Counter[str] = Counter()
    token = _resolutions.set(seen)
    try:
        yield seen
    finally:
        _resolutions.reset(token)


def note_resolution(signature: Callable[[], str]) -> None:
    """Tell the open :func:`observing_resolutions` block, if any, that a call resolved to the
    signature ``signature()`` names; the text is only built while a block is open, so planning
    pays nothing for it otherwise."""
    seen = _resolutions.get()
    if seen is not None:
        seen[signature()] += 1


def _signature_text(name: str, signature: Signature) -> str:
    return f"{name}{signature.describe()}"
