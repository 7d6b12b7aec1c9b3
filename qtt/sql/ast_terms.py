"""The grammar rules for literals and types, and the token helpers every rule uses.

:class:`TermRules` is the base of :class:`qtt.sql.ast_builder.AstBuilder`: lark finds a rule's
method on the builder, so these rules live here only to keep each module to one size.
"""

from __future__ import annotations

from typing import Any

from lark import Token, v_args
from lark.visitors import Transformer_NonRecursive

from qtt import sqltypes as t
from qtt.errors import SqlSyntaxError
from qtt.sql import ast, type_rules

# Keywords that are literals; as a type name they are a syntax error, not an unknown type.
_RESERVED_LITERALS = frozenset(["NULL", "TRUE", "FALSE"])


def identifier_of(token: Token) -> str:
    """Apply ksqlDB's case rule: unquoted names are upper-cased, quoted ones kept."""
    text = str(token)
    if token.type == "QUOTED_IDENTIFIER":
        return text[1:-1].replace('""', '"')
    if token.type == "BACKQUOTED_IDENTIFIER":
        return text[1:-1].replace("``", "`")
    return text.upper()


def string_of(token: Token) -> str:
    return str(token)[1:-1].replace("''", "'")


# Python refuses to convert longer digit strings to int (CVE-2020-10735); no integer that
# qtt accepts (BIGINT, a DECIMAL's precision, a duration) comes close.
_MAX_INT_DIGITS = 4_300


def int_of(token: Token) -> int:
    """The value of an integer token; an absurdly long one is a located syntax error."""
    text = str(token)
    if len(text) > _MAX_INT_DIGITS:
        line, column = token.line or 0, token.column or 0
        shown = f"{text[:20]}... ({len(text):,} digits)"
        # the same form as the planner's range check of literals (qtt.sql.parser._raise_literal)
        detail = f"Invalid numeric literal: {shown}"
        message = f"Failed to prepare statement: line {line}:{column + 1}: {detail}"
        raise SqlSyntaxError(message, line=line, column=column, detail=detail)
    return int(text)


def whole_number(tokens: tuple[Token, ...], command: str, meta: Any) -> int:
    """A clause's signed number (``[MINUS] number``) that must be whole, as ksqlDB's
    ``ParserUtil.processIntegerNumber`` reads it while it builds the statement."""
    if tokens[-1].type != "INTEGER_VALUE":
        problem = f"Value must be integer for command: {command}"
        line, column = getattr(meta, "line", None), getattr(meta, "column", None)
        raise type_rules.PrepareError(type_rules.PREPARE_PREFIX + problem, detail=problem, line=line, column=column)
    value = int_of(tokens[-1])
    return -value if len(tokens) > 1 else value


def pos_of(meta: Any) -> ast.Pos | None:
    if getattr(meta, "empty", True):
        return None
    return ast.Pos(meta.line, meta.column)


def token_pos(token: Token) -> ast.Pos:
    return ast.Pos(token.line or 0, token.column or 0)


@v_args(meta=True, inline=True)
class TermRules(Transformer_NonRecursive):
    """Literals and types; ``_custom_types`` is the builder's table of ``CREATE TYPE`` names."""

    _custom_types: dict[str, t.SqlType]

    # ------------------------------------------------------------------ literals

    def null_literal(self, meta: Any, token: Token) -> ast.Expr:
        return ast.NullLiteral(pos=token_pos(token))

    def true_literal(self, meta: Any, token: Token) -> ast.Expr:
        return ast.BooleanLiteral(value=True, pos=token_pos(token))

    def false_literal(self, meta: Any, token: Token) -> ast.Expr:
        return ast.BooleanLiteral(value=False, pos=token_pos(token))

    def integer_literal(self, meta: Any, token: Token) -> ast.Expr:
        return ast.IntegerLiteral(value=int_of(token), pos=token_pos(token))

    def decimal_literal(self, meta: Any, token: Token) -> ast.Expr:
        return ast.DecimalLiteral(text=str(token), pos=token_pos(token))

    def double_literal(self, meta: Any, token: Token) -> ast.Expr:
        return ast.DoubleLiteral(text=str(token), pos=token_pos(token))

    def string_literal(self, meta: Any, token: Token) -> ast.Expr:
        return ast.StringLiteral(value=string_of(token), pos=token_pos(token))

    # ------------------------------------------------------------------ types

    def array_type(self, meta: Any, array, lt, element, gt):
        return t.Array(element)

    def postfix_array_type(self, meta: Any, element, array):
        return t.Array(element)

    def map_type(self, meta: Any, map_, lt, key, value, gt):
        return t.Map(key, value)

    def struct_type(self, meta: Any, struct, lt, *rest):
        fields = [f for f in rest[:-1] if f is not None]
        return type_rules.struct(fields, line=meta.line, column=meta.column)

    def struct_type_field(self, meta: Any, name: str, type_: t.SqlType) -> t.Field:
        return type_rules.field(name, type_, line=meta.line, column=meta.column)

    def decimal_type(self, meta: Any, decimal, precision: tuple[Token, ...], scale: tuple[Token, ...]):
        return type_rules.decimal(
            whole_number(precision, "DECIMAL(PRECISION)", meta),
            whole_number(scale, "DECIMAL(SCALE)", meta),
            line=meta.line,
            column=meta.column,
        )

    def decimal_param(self, meta: Any, *tokens: Token) -> tuple[Token, ...]:
        # ksqlDB's grammar takes a signed number here; SqlDecimal refuses a negative one
        return tokens

    def named_type(self, meta: Any, name: str, *params: Any) -> t.SqlType:
        # ksqlDB's SqlTypeParser reads a named type's parameters (``VARCHAR(10)``, ``INT(11)``)
        # and ignores them
        custom = self._custom_types.get(name.upper())
        if custom is not None and name.upper() not in t.TYPE_ALIASES:
            return custom
        found = t.TYPE_ALIASES.get(name.upper())
        if found is None:
            if name.upper() not in _RESERVED_LITERALS:
                raise type_rules.unknown_type(name, sorted(t.TYPE_ALIASES), line=meta.line, column=meta.column)
            # ksqlDB's grammar has no type named by a literal keyword: a plain syntax error.
            unknown = (
                f"Unknown type: {name}; expected one of "
                f"{', '.join(sorted(t.TYPE_ALIASES))}, DECIMAL, ARRAY, MAP or STRUCT"
            )
            msg = f"Syntax Error\nSyntax error at or near '{name}' at line {meta.line}:{meta.column}\n{unknown}"
            raise SqlSyntaxError(msg, line=meta.line, column=meta.column, detail=f"Syntax Error: {unknown}")
        return found
