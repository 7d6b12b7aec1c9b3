"""Resolve and type a call with lambda arguments: TRANSFORM, FILTER and REDUCE.

ksqlDB types the non-lambda arguments first, binds the lambda parameters' types from them
(the collection's element, key and value types; REDUCE's state type from its initial value),
then types each lambda body with its parameters in scope (named like no column: see
:mod:`qtt.plan.analysis.lambda_arguments`). The lambda's result type decides the call's type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.analysis import pseudo_timestamps
from qtt.plan.analysis.coercion import is_null_literal
from qtt.plan.functions.invocation_signatures import LAMBDA_SIGNATURES, LambdaParam
from qtt.plan.functions.names import shown_name
from qtt.plan.functions.signature_matching import (
    NULL_TYPE_MESSAGE,
    ArrayOf,
    MapOf,
    NullType,
    Pattern,
    Var,
    describe_pattern,
    note_resolution,
    shown_argument,
    substitute,
)
from qtt.plan.ir import expressions as e
from qtt.sql import ast

#: types one lambda: its AST and its parameters' types -> the typed body.
LambdaTyper = Callable[[ast.Lambda, Sequence[t.SqlType]], e.Expression]


def is_lambda_function(name: str) -> bool:
    """Whether ``name`` is a function that takes lambda arguments."""
    return name in LAMBDA_SIGNATURES


def _shown(arg: ast.Expr | e.Expression, lambda_arity: int | None = None) -> str:
    if lambda_arity is not None:
        # ksqlDB's first pass gives a lambda argument a SqlLambda of its arity only, which prints LAMBDA
        return "LAMBDA"
    assert isinstance(arg, e.Expression)
    return shown_argument(arg.result_type)


def _no_match(name: str, shown: Sequence[str], label: str) -> StatementError:
    overloads = LAMBDA_SIGNATURES.get(name, ())
    options = "\n".join(f"  {name}({', '.join(describe_pattern(p) for p in params)})" for _, params, _ in overloads)
    msg = f"Function '{label}' does not accept parameters ({', '.join(shown)})."
    if options:
        msg += f"\nValid alternatives are:\n{options}"
    return StatementError(msg)


def resolve_lambda_call(
    node: ast.FunctionCall,
    visit: Callable[[ast.Expr], e.Expression],
    type_lambda: LambdaTyper,
) -> e.Call:
    """The typed call of a lambda function (``node.name`` is one of TRANSFORM, FILTER, REDUCE).

    Raises:
        StatementError: for arguments that fit no signature (a lambda over something that is
            not a collection, a lambda of the wrong arity, a body of the wrong type).
    """
    name = node.name
    label = shown_name(name, node.written)
    values: list[e.Expression | None] = [None if isinstance(a, ast.Lambda) else visit(a) for a in node.args]
    shown = [
        _shown(a, len(a.params)) if isinstance(a, ast.Lambda) else _shown(v)  # type: ignore[arg-type]
        for a, v in zip(node.args, values, strict=True)
    ]
    if not is_lambda_function(name):
        raise _no_match(name, shown, label)
    collection = values[0] if values else None
    if collection is not None and is_null_literal(collection):
        raise StatementError(NULL_TYPE_MESSAGE)
    kind = (
        "ARRAY"
        if collection is not None and isinstance(collection.result_type, t.Array)
        else "MAP"
        if collection is not None and isinstance(collection.result_type, t.Map)
        else None
    )
    overload = next(
        (
            (params, result)
            for k, params, result in LAMBDA_SIGNATURES[name]
            if k == kind and _fits(params, node.args, values)
        ),
        None,
    )
    if overload is None:
        raise _no_match(name, shown, label)
    params, result = overload
    note_resolution(lambda: f"{name}({', '.join(describe_pattern(p) for p in params)})")
    assert collection is not None
    bindings = _bind(collection.result_type)
    args: list[e.Expression] = [collection]
    for index in range(1, len(params)):
        pattern, raw, value = params[index], node.args[index], values[index]
        if value is not None:
            # REDUCE's initial state binds S.
            if is_null_literal(value):
                raise StatementError(NULL_TYPE_MESSAGE)
            bindings["S"] = value.result_type
            args.append(value)
            continue
        assert isinstance(pattern, LambdaParam) and isinstance(raw, ast.Lambda)
        param_types = [substitute(p, bindings, []) for p in pattern.params]
        assert all(p is not None for p in param_types)
        with pseudo_timestamps.lambda_parameters(raw.params):  # they are no pseudo columns
            body = type_lambda(raw, param_types)  # type: ignore[arg-type]
        body = _fit_result(pattern, param_types, body, bindings)  # type: ignore[arg-type]
        args.append(e.Lambda(params=raw.params, body=body, sql_type=body.result_type))
    return_type = substitute(result, bindings, [])
    assert return_type is not None
    return e.Call(name=name, args=tuple(args), sql_type=return_type)


def _fits(params: Sequence[Pattern], raw: Sequence[ast.Expr], values: Sequence[e.Expression | None]) -> bool:
    if len(params) != len(raw):
        return False
    for pattern, node, value in zip(params, raw, values, strict=True):
        if isinstance(pattern, LambdaParam) != isinstance(node, ast.Lambda):
            return False
        if isinstance(pattern, LambdaParam) and isinstance(node, ast.Lambda):
            if len(pattern.params) != len(node.params):
                return False
        elif value is not None and isinstance(pattern, (ArrayOf, MapOf)):
            continue
    return True


def _bind(collection: t.SqlType) -> dict[str, t.SqlType]:
    if isinstance(collection, t.Array):
        return {"T": collection.element}
    assert isinstance(collection, t.Map)
    return {"K": collection.key, "V": collection.value}


def _fit_result(
    pattern: LambdaParam,
    param_types: Sequence[t.SqlType],
    body: e.Expression,
    bindings: dict[str, t.SqlType],
) -> e.Expression:
    """The body, once its type fits the lambda's declared result; binds R and S.

    As ksqlDB's ``GenericsUtil.reserveGenerics``, a result already bound (REDUCE's state)
    must have its type exactly, without widening, and a declared BOOLEAN (FILTER's) must be one.
    A bare NULL body is refused whatever the lambda declares: ksqlDB's ``SqlLambdaResolved``
    needs the body's type, and a NULL has none.
    """
    if isinstance(body.result_type, NullType):
        raise StatementError(NULL_TYPE_MESSAGE)
    result = pattern.result
    if isinstance(result, Var) and result.name not in bindings:
        bindings[result.name] = body.result_type
        return body
    expected = substitute(result, bindings, [])
    assert expected is not None
    if body.result_type == expected:
        return body
    declared = f"LAMBDA ({', '.join(describe_pattern(p) for p in pattern.params)}) => {describe_pattern(result)}"
    resolved = f"LAMBDA ({', '.join(str(p) for p in param_types)}) => {body.result_type}"
    if isinstance(result, Var):
        msg = (
            f"Found invalid instance of generic schema when mapping {declared} to {resolved}. "
            f"Cannot map {result.name} to both {expected} and {body.result_type}"
        )
    else:
        structure = "because they do not have the same schema structure."
        msg = f"Cannot infer generics for {declared} from {resolved} {structure}"
    raise StatementError(msg)
