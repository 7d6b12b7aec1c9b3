"""Print AST expressions as SQL text the way ksqlDB prints them in messages."""

from __future__ import annotations

import decimal
import math
import re
from contextvars import ContextVar
from functools import singledispatch

from qtt import sqltypes as t
from qtt.sql import ast

#: ksqlDB's reserved words: its grammar's keywords that its ``nonReserved`` rule does not list
#: (SqlBase.g4). A name that is one is not an identifier there, so ksqlDB quotes it. qtt's
#: parser reads most of them as names where no keyword can stand, all but its
#: ``qtt.sql.parser.RESERVED_WORDS`` (docs/reference/case-files.md).
KSQL_RESERVED_WORDS = frozenset(
    """ADVANCE ALL AND AS AT BEGINNING BETWEEN BY CASE CAST CATALOG CONNECTOR CONNECTORS CREATE DAYS
    DECIMAL DELETE DESCRIBE DISTINCT DROP ELSE END EXISTS EXPORT EXTENDED FALSE FROM FULL GROUP
    HAVING HOPPING HOURS IN INNER INSERT INTO IS JOIN LEFT LIKE LIMIT LIST LOAD MATERIALIZED
    MILLISECOND MILLISECONDS MINUTES MONTHS NAMESPACE NOT NULL ON OR OUTER PRINT PROPERTIES QUERIES
    QUERY RENAME RETENTION RIGHT RUN SAMPLE SCRIPT SECONDS SELECT SIZE STREAM STREAMS TABLE
    TERMINATE THEN TO TOPIC TOPICS TRUE TUMBLING UNSET VALUES VIEW WHEN WHERE WINDOW WITH WITHIN
    YEARS""".split()  # noqa: SIM905 (a word list reads better as text)
)
#: an identifier token of ksqlDB's lexer, upper case: a letter or ``_`` first, or a digit first
#: and more after it (a number alone, or with an exponent, lexes as a number instead)
_BARE = re.compile(r"[A-Z_][A-Z0-9_@]*|[0-9][A-Z0-9_@]+")
_NUMBER = re.compile(r"[0-9]+(E[+-]?[0-9]+)?")


#: set while :func:`format_plain` prints: every name bare
_PLAIN: ContextVar[bool] = ContextVar("plain", default=False)
#: the lambda parameters in scope: ksqlDB's parser makes a reference to one a LambdaVariable,
#: which its formatter prints as it is, never quoted
_LAMBDA_VARIABLES: ContextVar[frozenset[str]] = ContextVar("lambda_variables", default=frozenset())


def format_identifier(name: str) -> str:
    """A name as ksqlDB prints it (IdentifierUtil.needsQuotes): bare when it is an upper-case
    identifier that is not a reserved word, else in backticks (FormatOptions.escape doubles no
    backtick inside the name: ``a``b`` prints ``a`b``)."""
    if _PLAIN.get() or (_BARE.fullmatch(name) and not _NUMBER.fullmatch(name) and name not in KSQL_RESERVED_WORDS):
        return name
    return "`" + name + "`"


def format_plain(node: ast.Expr) -> str:
    """``node`` as ksqlDB's ``Expression.toString()`` prints it in its type errors: as
    :func:`format_expr`, but no name quoted (``FormatOptions.of(s -> false)``)."""
    token = _PLAIN.set(True)
    try:
        return format_expr(node)
    finally:
        _PLAIN.reset(token)


@singledispatch
def format_expr(node: ast.Expr) -> str:
    """SQL text for an expression."""
    raise NotImplementedError(type(node).__name__)


@format_expr.register
def visit_NullLiteral(node: ast.NullLiteral) -> str:
    return "null"


@format_expr.register
def visit_BooleanLiteral(node: ast.BooleanLiteral) -> str:
    return "true" if node.value else "false"


@format_expr.register
def visit_IntegerLiteral(node: ast.IntegerLiteral) -> str:
    return str(node.value)


@format_expr.register
def visit_DecimalLiteral(node: ast.DecimalLiteral) -> str:
    # Java's BigDecimal.toString of the written digits (Python's str of a Decimal follows the same
    # rule): ``.5`` prints ``0.5``, ``5.`` ``5``, ``007.50`` ``7.50``, ``0.00000025`` ``2.5E-7``,
    # and ``-0.0`` ``0.0`` (a BigDecimal has no negative zero)
    value = decimal.Decimal(node.text)
    return str(value.copy_abs() if value.is_zero() else value)


@format_expr.register
def visit_DoubleLiteral(node: ast.DoubleLiteral) -> str:
    # ksqlDB prints a double in scientific notation with the fewest digits: ``2.5e2`` is ``2.5E2``
    value = float(node.text)
    if value == 0:
        return "-0E0" if math.copysign(1, value) < 0 else "0E0"
    _, digits, exponent = decimal.Decimal(repr(abs(value))).normalize().as_tuple()
    mantissa = "".join(map(str, digits))
    shown = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    return f"{'-' if value < 0 else ''}{shown}E{len(digits) - 1 + int(exponent)}"


@format_expr.register
def visit_StringLiteral(node: ast.StringLiteral) -> str:
    return "'" + node.value.replace("'", "''") + "'"


@format_expr.register
def visit_ColumnRef(node: ast.ColumnRef) -> str:
    if node.source is None and node.name in _LAMBDA_VARIABLES.get():
        return node.name
    return (
        f"{format_identifier(node.source)}.{format_identifier(node.name)}"
        if node.source
        else format_identifier(node.name)
    )


@format_expr.register
def visit_Dereference(node: ast.Dereference) -> str:
    return f"{format_expr(node.base)}->{format_identifier(node.field)}"


@format_expr.register
def visit_Subscript(node: ast.Subscript) -> str:
    return f"{format_expr(node.base)}[{format_expr(node.index)}]"


@format_expr.register
def visit_Negate(node: ast.Negate) -> str:
    # a space keeps two minus signs from reading as a comment: ``-(-x)`` prints ``- -X``
    operand = format_expr(node.operand)
    return f"- {operand}" if operand.startswith("-") else f"-{operand}"


@format_expr.register
def visit_UnaryPlus(node: ast.UnaryPlus) -> str:
    return f"+{format_expr(node.operand)}"


#: Binary operators ksqlDB prints with a keyword rather than the node's ``op``.
_KEYWORDS: dict[type[ast.Expr], str] = {ast.And: "AND", ast.Or: "OR"}


@format_expr.register
def visit_Concat(node: ast.Concat) -> str:
    # ksqlDB's parser reads ``a || b`` as a call of ``concat``, and prints it so
    return f"concat({format_expr(node.left)}, {format_expr(node.right)})"


@format_expr.register(ast.Arithmetic)
@format_expr.register(ast.Comparison)
@format_expr.register(ast.And)
@format_expr.register(ast.Or)
def visit_BinaryOperator(node: ast.Arithmetic | ast.Comparison | ast.And | ast.Or) -> str:
    op = node.op if isinstance(node, ast.Arithmetic | ast.Comparison) else _KEYWORDS[type(node)]
    return f"({format_expr(node.left)} {op} {format_expr(node.right)})"


@format_expr.register
def visit_DistinctFrom(node: ast.DistinctFrom) -> str:
    return _negated(node.negated, f"({format_expr(node.left)} IS DISTINCT FROM {format_expr(node.right)})")


def _negated(negated: bool, text: str) -> str:
    """``NOT`` before a predicate, as ksqlDB's parser reads ``x NOT LIKE y`` (a NOT around it)."""
    return f"(NOT {text})" if negated else text


@format_expr.register
def visit_Not(node: ast.Not) -> str:
    return f"(NOT {format_expr(node.operand)})"


@format_expr.register
def visit_IsNull(node: ast.IsNull) -> str:
    return f"({format_expr(node.operand)} IS {'NOT ' if node.negated else ''}NULL)"


@format_expr.register
def visit_Between(node: ast.Between) -> str:
    low, high = format_expr(node.low), format_expr(node.high)
    return _negated(node.negated, f"({format_expr(node.value)} BETWEEN {low} AND {high})")


@format_expr.register
def visit_InList(node: ast.InList) -> str:
    items = ", ".join(format_expr(i) for i in node.items)
    return _negated(node.negated, f"({format_expr(node.value)} IN ({items}))")


@format_expr.register
def visit_Like(node: ast.Like) -> str:
    escape = f" ESCAPE '{node.escape}'" if node.escape else ""
    return _negated(node.negated, f"({format_expr(node.value)} LIKE {format_expr(node.pattern)}{escape})")


@format_expr.register(ast.SearchedCase)
@format_expr.register(ast.SimpleCase)
def visit_Case(node: ast.SearchedCase | ast.SimpleCase) -> str:
    operand = f" {format_expr(node.operand)}" if isinstance(node, ast.SimpleCase) else ""
    whens = " ".join(f"WHEN {format_expr(w.condition)} THEN {format_expr(w.result)}" for w in node.whens)
    default = f" ELSE {format_expr(node.default)}" if node.default is not None else ""
    return f"(CASE{operand} {whens}{default} END)"


@format_expr.register
def visit_Cast(node: ast.Cast) -> str:
    return f"CAST({format_expr(node.operand)} AS {format_type(node.type)})"


def format_type(sql_type: t.SqlType) -> str:
    """A type as ksqlDB prints it in an expression: struct field names quoted only where they
    need it (plans and schemas quote every name; ``str`` of a type does)."""
    return t.type_text(sql_type, format_identifier)


@format_expr.register
def visit_CreateArray(node: ast.CreateArray) -> str:
    return f"ARRAY[{', '.join(format_expr(i) for i in node.items)}]"


@format_expr.register
def visit_CreateMap(node: ast.CreateMap) -> str:
    return f"MAP({', '.join(f'{format_expr(k)}:={format_expr(v)}' for k, v in node.entries)})"


@format_expr.register
def visit_CreateStruct(node: ast.CreateStruct) -> str:
    return f"STRUCT({', '.join(f'{format_identifier(k)}:={format_expr(v)}' for k, v in node.fields)})"


@format_expr.register
def visit_FunctionCall(node: ast.FunctionCall) -> str:
    # ksqlDB's parser keeps no star (``F(*)`` is a call with no argument); its formatter prints
    # one in any COUNT with no argument. The name is the parser's (a quoted one keeps its case).
    name = format_identifier(node.identifier)
    if not node.args and node.identifier == "COUNT":
        return f"{name}(*)"
    return f"{name}({', '.join(format_expr(a) for a in node.args)})"


@format_expr.register
def visit_Lambda(node: ast.Lambda) -> str:
    token = _LAMBDA_VARIABLES.set(_LAMBDA_VARIABLES.get() | set(node.params))
    try:
        return f"({', '.join(node.params)}) => {format_expr(node.body)}"
    finally:
        _LAMBDA_VARIABLES.reset(token)


@format_expr.register
def visit_IntervalUnit(node: ast.IntervalUnit) -> str:
    return node.unit + "S"
