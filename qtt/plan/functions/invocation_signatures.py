"""Scalar function signatures: the lambda invocation (TRANSFORM, REDUCE, FILTER) section of the table.

Written in :mod:`qtt.plan.functions.signature_dsl`; :mod:`qtt.plan.functions.scalar_signatures` merges every
section into one table. A call with a lambda argument is resolved by
:mod:`qtt.plan.analysis.lambda_calls` against :data:`LAMBDA_SIGNATURES`; the ``FUNCTIONS`` entries
only let a call without a lambda fail with ksqlDB's list of valid alternatives.
Return types, null rules and errors follow ksqlDB's ``udf.lambda`` UDFs.
"""

from __future__ import annotations

from dataclasses import dataclass

from qtt import sqltypes as t
from qtt.plan.functions.signature_dsl import fn, sig
from qtt.plan.functions.signature_matching import ArrayOf, Function, K, MapOf, Pattern, T, Var, describe_pattern


@dataclass(frozen=True)
class LambdaParam(t.SqlType):
    """A lambda parameter of a signature: its parameter patterns and result. Never persisted."""

    params: tuple[Pattern, ...]
    result: Pattern

    def __str__(self) -> str:
        # ksqlDB's LambdaType.toString
        return f"LAMBDA ({', '.join(describe_pattern(p) for p in self.params)}) => {describe_pattern(self.result)}"

    @property
    def base(self) -> str:
        return "LAMBDA"


R, S, V = Var("R"), Var("S"), Var("V")
BOOL = t.BOOLEAN

#: name -> (collection kind, parameter patterns, result pattern), in ksqlDB's order.
LAMBDA_SIGNATURES: dict[str, tuple[tuple[str, tuple[Pattern, ...], Pattern], ...]] = {
    "TRANSFORM": (
        ("ARRAY", (ArrayOf(T), LambdaParam((T,), R)), ArrayOf(R)),
        ("MAP", (MapOf(K, V), LambdaParam((K, V), R), LambdaParam((K, V), S)), MapOf(R, S)),
    ),
    "FILTER": (
        ("ARRAY", (ArrayOf(T), LambdaParam((T,), BOOL)), ArrayOf(T)),
        ("MAP", (MapOf(K, V), LambdaParam((K, V), BOOL)), MapOf(K, V)),
    ),
    "REDUCE": (
        ("ARRAY", (ArrayOf(T), S, LambdaParam((S, T), S)), S),
        ("MAP", (MapOf(K, V), S, LambdaParam((S, K, V), S)), S),
    ),
}

FUNCTIONS: list[Function] = [
    fn(name, *(sig(params, result) for _, params, result in overloads)) for name, overloads in LAMBDA_SIGNATURES.items()
]
