"""Scalar function signatures: which argument types a function takes and what it returns.

The planner resolves every call here once; the runtime implements each name in
``qtt.runtime.functions``. A test asserts that the two tables list the same names.

Signatures are data: parameter patterns are SQL types, type variables (``T``), container
patterns (``ArrayOf(T)``) or ``ANY_DECIMAL``. ksqlDB's implicit numeric widening applies
(INTEGER -> BIGINT -> DECIMAL -> DOUBLE), and a NULL argument fits any parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Union

from qtt import sqltypes as t
from qtt.errors import StatementError


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
class AnyStruct:
    """Any ``STRUCT<...>``."""


@dataclass(frozen=True)
class LambdaOf:
    """A lambda argument: parameter patterns and the pattern of its body."""

    params: tuple[Pattern, ...]
    returns: Pattern


Pattern = Union[t.SqlType, Var, ArrayOf, MapOf, AnyDecimal, AnyStruct, LambdaOf]
ReturnType = Union[Pattern, Callable[[Sequence[t.SqlType]], t.SqlType]]

T, K, V, E, R = Var("T"), Var("K"), Var("V"), Var("E"), Var("R")
ANY_DECIMAL = AnyDecimal()
ANY_STRUCT = AnyStruct()


@dataclass(frozen=True)
class Signature:
    params: tuple[Pattern, ...]
    returns: ReturnType
    #: the last parameter may repeat (zero or more times beyond the fixed ones).
    variadic: bool = False

    def describe(self) -> str:
        parts = [_describe(p) for p in self.params]
        if self.variadic and parts:
            parts[-1] += "..."
        return f"({', '.join(parts)})"


@dataclass(frozen=True)
class Function:
    name: str
    signatures: tuple[Signature, ...]
    description: str = ""
    #: planner-side validation of argument values (constant arguments), if any.
    checks: tuple[Callable[[Sequence[t.SqlType]], None], ...] = field(default=())


def _describe(p: Pattern) -> str:
    if isinstance(p, Var):
        return p.name
    if isinstance(p, ArrayOf):
        return f"ARRAY<{_describe(p.element)}>"
    if isinstance(p, MapOf):
        return f"MAP<{_describe(p.key)}, {_describe(p.value)}>"
    if isinstance(p, AnyDecimal):
        return "DECIMAL"
    if isinstance(p, AnyStruct):
        return "STRUCT"
    if isinstance(p, LambdaOf):
        return f"LAMBDA({', '.join(_describe(x) for x in p.params)}) => {_describe(p.returns)}"
    return str(p)


_WIDENING = {"INTEGER": 0, "BIGINT": 1, "DECIMAL": 2, "DOUBLE": 3}


def widens_to(source: t.SqlType, target: t.SqlType) -> bool:
    """Whether ksqlDB converts ``source`` to ``target`` implicitly (numeric widening only)."""
    if source == target:
        return True
    if source.base in _WIDENING and target.base in _WIDENING:
        return _WIDENING[source.base] < _WIDENING[target.base]
    return False


def widen_integer_to_decimal(type_: t.SqlType) -> t.Decimal:
    """The DECIMAL that holds every value of an integer type (ksqlDB's rule)."""
    if isinstance(type_, t.Decimal):
        return type_
    return t.Decimal(10, 0) if type_.base == "INTEGER" else t.Decimal(19, 0)


class _NoMatch(Exception):
    pass


def _match(pattern: Pattern, actual: t.SqlType, bindings: dict[str, t.SqlType], widen: bool) -> None:
    if isinstance(actual, NullType):
        return
    if isinstance(pattern, Var):
        bound = bindings.get(pattern.name)
        if bound is None:
            bindings[pattern.name] = actual
        elif bound != actual:
            if widen and widens_to(actual, bound):
                return
            if widen and widens_to(bound, actual):
                bindings[pattern.name] = actual
                return
            raise _NoMatch
        return
    if isinstance(pattern, ArrayOf):
        if not isinstance(actual, t.Array):
            raise _NoMatch
        _match(pattern.element, actual.element, bindings, widen)
        return
    if isinstance(pattern, MapOf):
        if not isinstance(actual, t.Map):
            raise _NoMatch
        _match(pattern.key, actual.key, bindings, widen)
        _match(pattern.value, actual.value, bindings, widen)
        return
    if isinstance(pattern, AnyDecimal):
        if isinstance(actual, t.Decimal) or (widen and actual.base in ("INTEGER", "BIGINT")):
            return
        raise _NoMatch
    if isinstance(pattern, AnyStruct):
        if isinstance(actual, t.Struct):
            return
        raise _NoMatch
    if isinstance(pattern, LambdaOf):
        raise _NoMatch  # lambdas are matched by the analyzer, which types their bodies
    if actual == pattern or (widen and widens_to(actual, pattern)):
        return
    raise _NoMatch


def substitute(pattern: ReturnType, bindings: dict[str, t.SqlType], args: Sequence[t.SqlType]) -> t.SqlType | None:
    """The concrete type of ``pattern`` under ``bindings``; None if a variable is unbound."""
    if callable(pattern) and not isinstance(pattern, t.SqlType):
        return pattern(args)  # type: ignore[call-arg,arg-type]
    if isinstance(pattern, Var):
        return bindings.get(pattern.name)
    if isinstance(pattern, ArrayOf):
        element = substitute(pattern.element, bindings, args)
        return t.Array(element) if element is not None else None
    if isinstance(pattern, MapOf):
        key = substitute(pattern.key, bindings, args)
        value = substitute(pattern.value, bindings, args)
        return t.Map(key, value) if key is not None and value is not None else None
    if isinstance(pattern, t.SqlType):
        return pattern
    return None


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


def resolve(name: str, arg_types: Sequence[t.SqlType]) -> Resolved:
    """Pick the signature of ``name`` that fits ``arg_types``; exact matches win over widening.

    Raises:
        StatementError: for an unknown function or arguments that fit no signature.
    """
    function = FUNCTIONS.get(name)
    if function is None:
        from qtt.errors import did_you_mean

        msg = f"Can't find any functions with the name '{name}'.{did_you_mean(name, FUNCTIONS)}"
        raise StatementError(msg)
    for widen in (False, True):
        for signature in function.signatures:
            params = expand_params(signature, len(arg_types))
            if params is None:
                continue
            bindings: dict[str, t.SqlType] = {}
            try:
                for pattern, actual in zip(params, arg_types, strict=True):
                    _match(pattern, actual, bindings, widen)
            except _NoMatch:
                continue
            concrete = [substitute(p, bindings, arg_types) for p in params]
            returns = substitute(signature.returns, bindings, [c or a for c, a in zip(concrete, arg_types, strict=True)])
            if returns is None:
                msg = f"Can't infer a type of null. Please explicitly cast it to a required type, e.g. CAST(null AS VARCHAR)."
                raise StatementError(msg)
            for check in function.checks:
                check(arg_types)
            return Resolved(function, signature, tuple(concrete), returns)
    shown = ", ".join(str(a) for a in arg_types)
    options = "\n".join(f"  {name}{s.describe()}" for s in function.signatures)
    msg = f"Function '{name}' does not accept parameters ({shown}).\nValid alternatives are:\n{options}"
    raise StatementError(msg)


def _same_decimal(args: Sequence[t.SqlType]) -> t.SqlType:
    first = next((a for a in args if not isinstance(a, NullType)), t.DOUBLE)
    return widen_integer_to_decimal(first) if first.base in ("INTEGER", "BIGINT", "DECIMAL") else first


def _round_type(args: Sequence[t.SqlType]) -> t.SqlType:
    arg = args[0]
    if isinstance(arg, t.Decimal):
        if len(args) == 1:
            return t.Decimal(max(arg.precision - arg.scale + 1, 1), 0)
        return t.Decimal(arg.precision - arg.scale + min(arg.scale, arg.precision) + 1, arg.scale)
    if arg.base == "DOUBLE":
        return t.BIGINT if len(args) == 1 else t.DOUBLE
    return arg


def _decimal_floor_ceil(args: Sequence[t.SqlType]) -> t.SqlType:
    arg = args[0]
    assert isinstance(arg, t.Decimal)
    return t.Decimal(max(arg.precision - arg.scale + 1, 1), 0)


def fn(name: str, *signatures: Signature, description: str = "") -> Function:
    return Function(name=name, signatures=signatures, description=description)


def sig(params: Sequence[Pattern], returns: ReturnType, *, variadic: bool = False) -> Signature:
    return Signature(tuple(params), returns, variadic)


INT, BIGINT, DOUBLE, STRING, BOOLEAN, BYTES = t.INTEGER, t.BIGINT, t.DOUBLE, t.STRING, t.BOOLEAN, t.BYTES
_NUMERIC_SAME = (sig([INT], INT), sig([BIGINT], BIGINT), sig([ANY_DECIMAL], lambda a: a[0]), sig([DOUBLE], DOUBLE))


def _double_math(name: str, arity: int = 1) -> Function:
    return fn(name, sig([DOUBLE] * arity, DOUBLE))


_FUNCTION_LIST: list[Function] = [
    # --------------------------------------------------------------- null handling
    fn("COALESCE", sig([T, T], T, variadic=True)),
    fn("IFNULL", sig([T, T], T)),
    fn("NULLIF", sig([T, T], T)),
    # --------------------------------------------------------------- strings
    fn("CONCAT", sig([STRING], STRING, variadic=True), sig([BYTES], BYTES, variadic=True)),
    fn("CONCAT_WS", sig([STRING, STRING], STRING, variadic=True), sig([BYTES, BYTES], BYTES, variadic=True)),
    fn("UCASE", sig([STRING], STRING)),
    fn("LCASE", sig([STRING], STRING)),
    fn("TRIM", sig([STRING], STRING)),
    fn("LTRIM", sig([STRING], STRING)),
    fn("RTRIM", sig([STRING], STRING)),
    fn("LEN", sig([STRING], INT), sig([BYTES], INT)),
    fn("INITCAP", sig([STRING], STRING)),
    fn("SUBSTRING", sig([STRING, INT], STRING), sig([STRING, INT, INT], STRING),
       sig([BYTES, INT], BYTES), sig([BYTES, INT, INT], BYTES)),
    fn("REPLACE", sig([STRING, STRING, STRING], STRING)),
    fn("INSTR", sig([STRING, STRING], INT), sig([STRING, STRING, INT], INT), sig([STRING, STRING, INT, INT], INT)),
    fn("LPAD", sig([STRING, INT, STRING], STRING)),
    fn("RPAD", sig([STRING, INT, STRING], STRING)),
    fn("SPLIT", sig([STRING, STRING], t.Array(STRING))),
    fn("REVERSE", sig([STRING], STRING)),
    fn("EXTRACTJSONFIELD", sig([STRING, STRING], STRING)),
    # --------------------------------------------------------------- math
    fn("ABS", *_NUMERIC_SAME),
    fn("SIGN", sig([INT], INT), sig([BIGINT], INT), sig([DOUBLE], INT)),
    fn("ROUND", sig([DOUBLE], BIGINT), sig([DOUBLE, INT], DOUBLE), sig([ANY_DECIMAL], _round_type),
       sig([ANY_DECIMAL, INT], _round_type), sig([INT], INT), sig([BIGINT], BIGINT)),
    fn("FLOOR", sig([INT], INT), sig([BIGINT], BIGINT), sig([DOUBLE], DOUBLE), sig([ANY_DECIMAL], _decimal_floor_ceil)),
    fn("CEIL", sig([INT], INT), sig([BIGINT], BIGINT), sig([DOUBLE], DOUBLE), sig([ANY_DECIMAL], _decimal_floor_ceil)),
    fn("TRUNC", sig([DOUBLE], BIGINT), sig([DOUBLE, INT], DOUBLE), sig([ANY_DECIMAL], _round_type),
       sig([ANY_DECIMAL, INT], _round_type), sig([INT], INT), sig([BIGINT], BIGINT)),
    fn("SQRT", sig([DOUBLE], DOUBLE)),
    fn("CBRT", sig([DOUBLE], DOUBLE)),
    fn("EXP", sig([DOUBLE], DOUBLE)),
    fn("LN", sig([DOUBLE], DOUBLE)),
    fn("LOG", sig([DOUBLE], DOUBLE), sig([DOUBLE, DOUBLE], DOUBLE)),
    fn("POWER", sig([DOUBLE, DOUBLE], DOUBLE)),
    *(_double_math(n) for n in ("ACOS", "ASIN", "ATAN", "COS", "SIN", "TAN", "COT", "COSH", "SINH", "TANH",
                                "DEGREES", "RADIANS")),
    _double_math("ATAN2", 2),
    fn("PI", sig([], DOUBLE)),
    fn("RANDOM", sig([], DOUBLE)),
    # --------------------------------------------------------------- collections
    fn("ARRAY_LENGTH", sig([ArrayOf(T)], INT)),
    fn("ARRAY_CONTAINS", sig([ArrayOf(T), T], BOOLEAN)),
    fn("ARRAY_SORT", sig([ArrayOf(T)], ArrayOf(T)), sig([ArrayOf(T), STRING], ArrayOf(T))),
    fn("MAP_KEYS", sig([MapOf(K, V)], ArrayOf(K))),
    fn("MAP_VALUES", sig([MapOf(K, V)], ArrayOf(V))),
    fn("AS_VALUE", sig([T], T)),
]

FUNCTIONS: dict[str, Function] = {f.name: f for f in _FUNCTION_LIST}
