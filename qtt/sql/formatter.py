"""Print AST expressions as SQL text the way ksqlDB prints them in messages."""

from __future__ import annotations

from functools import singledispatch

from qtt.sql import ast


def _name(name: str) -> str:
    # ksqlDB prints names that need no quoting bare, and quotes the rest with backticks.
    if name and name.isupper() and name.replace("_", "").isalnum() and not name[0].isdigit():
        return name
    return "`" + name.replace("`", "``") + "`"


@singledispatch
def format_expr(node: ast.Expr) -> str:
    """SQL text for an expression."""
    raise NotImplementedError(type(node).__name__)


@format_expr.register
def _(node: ast.NullLiteral) -> str:
    return "null"


@format_expr.register
def _(node: ast.BooleanLiteral) -> str:
    return "true" if node.value else "false"


@format_expr.register
def _(node: ast.IntegerLiteral) -> str:
    return str(node.value)


@format_expr.register(ast.DecimalLiteral)
@format_expr.register(ast.DoubleLiteral)
def _(node: ast.DecimalLiteral | ast.DoubleLiteral) -> str:
    return node.text


@format_expr.register
def _(node: ast.StringLiteral) -> str:
    return "'" + node.value.replace("'", "''") + "'"


@format_expr.register
def _(node: ast.ColumnRef) -> str:
    return f"{_name(node.source)}.{_name(node.name)}" if node.source else _name(node.name)


@format_expr.register
def _(node: ast.Dereference) -> str:
    return f"{format_expr(node.base)}->{_name(node.field)}"


@format_expr.register
def _(node: ast.Subscript) -> str:
    return f"{format_expr(node.base)}[{format_expr(node.index)}]"


@format_expr.register
def _(node: ast.Negate) -> str:
    return f"-{format_expr(node.operand)}"


@format_expr.register
def _(node: ast.Arithmetic) -> str:
    return f"({format_expr(node.left)} {node.op} {format_expr(node.right)})"


@format_expr.register
def _(node: ast.Concat) -> str:
    return f"({format_expr(node.left)} || {format_expr(node.right)})"


@format_expr.register
def _(node: ast.Comparison) -> str:
    return f"({format_expr(node.left)} {node.op} {format_expr(node.right)})"


@format_expr.register
def _(node: ast.DistinctFrom) -> str:
    middle = "IS NOT DISTINCT FROM" if node.negated else "IS DISTINCT FROM"
    return f"({format_expr(node.left)} {middle} {format_expr(node.right)})"


@format_expr.register
def _(node: ast.And) -> str:
    return f"({format_expr(node.left)} AND {format_expr(node.right)})"


@format_expr.register
def _(node: ast.Or) -> str:
    return f"({format_expr(node.left)} OR {format_expr(node.right)})"


@format_expr.register
def _(node: ast.Not) -> str:
    return f"(NOT {format_expr(node.operand)})"


@format_expr.register
def _(node: ast.IsNull) -> str:
    return f"({format_expr(node.operand)} IS {'NOT ' if node.negated else ''}NULL)"


@format_expr.register
def _(node: ast.Between) -> str:
    neg = "NOT " if node.negated else ""
    low, high = format_expr(node.low), format_expr(node.high)
    return f"({format_expr(node.value)} {neg}BETWEEN {low} AND {high})"


@format_expr.register
def _(node: ast.InList) -> str:
    neg = "NOT " if node.negated else ""
    return f"({format_expr(node.value)} {neg}IN ({', '.join(format_expr(i) for i in node.items)}))"


@format_expr.register
def _(node: ast.Like) -> str:
    neg = "NOT " if node.negated else ""
    escape = f" ESCAPE '{node.escape}'" if node.escape else ""
    return f"({format_expr(node.value)} {neg}LIKE {format_expr(node.pattern)}{escape})"


@format_expr.register
def _(node: ast.SearchedCase) -> str:
    whens = " ".join(f"WHEN {format_expr(w.condition)} THEN {format_expr(w.result)}" for w in node.whens)
    default = f" ELSE {format_expr(node.default)}" if node.default is not None else ""
    return f"(CASE {whens}{default} END)"


@format_expr.register
def _(node: ast.SimpleCase) -> str:
    whens = " ".join(f"WHEN {format_expr(w.condition)} THEN {format_expr(w.result)}" for w in node.whens)
    default = f" ELSE {format_expr(node.default)}" if node.default is not None else ""
    return f"(CASE {format_expr(node.operand)} {whens}{default} END)"


@format_expr.register
def _(node: ast.Cast) -> str:
    return f"CAST({format_expr(node.operand)} AS {node.type})"


@format_expr.register
def _(node: ast.CreateArray) -> str:
    return f"ARRAY[{', '.join(format_expr(i) for i in node.items)}]"


@format_expr.register
def _(node: ast.CreateMap) -> str:
    return f"MAP({', '.join(f'{format_expr(k)}:={format_expr(v)}' for k, v in node.entries)})"


@format_expr.register
def _(node: ast.CreateStruct) -> str:
    return f"STRUCT({', '.join(f'{_name(k)}:={format_expr(v)}' for k, v in node.fields)})"


@format_expr.register
def _(node: ast.FunctionCall) -> str:
    if node.star:
        return f"{node.name}(*)"
    return f"{node.name}({', '.join(format_expr(a) for a in node.args)})"


@format_expr.register
def _(node: ast.Lambda) -> str:
    params = node.params[0] if len(node.params) == 1 else f"({', '.join(node.params)})"
    return f"{params} => {format_expr(node.body)}"


@format_expr.register
def _(node: ast.IntervalUnit) -> str:
    return node.unit + "S"
