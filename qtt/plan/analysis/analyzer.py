"""Type AST expressions into plan expressions, against a scope of visible columns.

One method per AST node (``singledispatchmethod``). Name resolution, ksqlDB's typing rules,
function resolution and the NULL-literal inference all happen here, once, so that the
runtime never needs to type anything.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Sequence
from functools import singledispatchmethod
from typing import cast

from qtt import sqltypes as t
from qtt.errors import SqlError, StatementError, UnknownColumnError, UnsupportedFeatureError
from qtt.plan.analysis import messages, pseudo_timestamps
from qtt.plan.analysis.case_types import case_type, then_type
from qtt.plan.analysis.coercion import (
    EQUALITY_OPS,
    arithmetic_type,
    between_problem,
    can_cast,
    cast_text,
    coerce_null,
    common_type,
    comparable,
    decimal_literal_type,
    implicit_cast,
    is_null_literal,
    map_key,
    unsupported_arithmetic,
    unsupported_cast,
)
from qtt.plan.analysis.lambda_calls import is_lambda_function, resolve_lambda_call
from qtt.plan.analysis.list_coercion import CoercionError, ListCoercer, compared, convert
from qtt.plan.analysis.scope import Scope, ScopeColumn  # noqa: F401 (re-exported: the planner's import)
from qtt.plan.analysis.scope import column_of as _col
from qtt.plan.analysis.scope import line_of as _line
from qtt.plan.functions import scalar_signatures as fns
from qtt.plan.functions.aggregate_signatures import is_aggregate
from qtt.plan.functions.signature_matching import NULL, NULL_TYPE_MESSAGE, Function, NullType, note_resolution
from qtt.plan.ir import expressions as e
from qtt.plan.ir.schema import WINDOW_BOUNDS as _WINDOW_BOUNDS
from qtt.sql import ast, type_rules
from qtt.sql.formatter import format_expr, format_plain

#: ksqlDB's ``ExpressionTypeManager`` refuses a simple CASE (``VisitorUtil.unsupportedOperation``)
SIMPLE_CASE_MESSAGE = (
    "not yet implemented: io.confluent.ksql.execution.util.ExpressionTypeManager$Visitor.visitSimpleCaseExpression"
)

_ISSUE = "(see https://github.com/confluentinc/ksql/issues/4239)"
#: the messages of a filter that does not type check that are ksqlDB's already
#: (and the AstSanitizer's "Exception while preparing statement", an ambiguous column: raised
#: before the filter is typed)
_FILTER_ERRORS = ("Error in ", "Type error in ", "Invalid Predicate: ", "Exception while preparing statement")
#: ksqlDB's messages for constructors it cannot type (``ExpressionTypeManager``)
_EMPTY_ARRAY = f"Array constructor cannot be empty. Please supply at least one element {_ISSUE}."
_EMPTY_MAP = f"Map constructor cannot be empty. Please supply at least one key value pair {_ISSUE}."


def _all_null(what: str, cast: str) -> str:
    return f"Cannot construct {what} {_ISSUE}. As a workaround, you may cast a NULL {cast} to the desired type."


# ---------------------------------------------------------------------------- the analyzer


class Analyzer:
    """Types the expressions of one clause (``clause`` names it in error messages)."""

    def __init__(
        self,
        scope: Scope,
        clause: str,
        *,
        lambda_vars: dict[str, t.SqlType] | None = None,
        aggregates: Callable[[ast.FunctionCall], e.Expression] | None = None,
        windows_later: bool = False,
    ) -> None:
        self.scope = scope
        #: the query windows its rows after this clause (a WHERE of a windowed aggregation), so a
        #: window bound the rows do not have yet is an unknown column, as ksqlDB words it
        self.windows_later = windows_later
        self.clause = clause
        self.lambda_vars = lambda_vars or {}
        #: plans an aggregate call (in an aggregating query's SELECT and HAVING); without it
        #: an aggregate function is not allowed in the clause.
        self.aggregates = aggregates
        #: inside a WHERE or HAVING condition, its operands that are not BOOLEAN (see boolean)
        self._deferred: list[tuple[ast.Expr, t.SqlType]] | None = None

    def __call__(self, node: ast.Expr) -> e.Expression:
        return self.visit(node)

    def typed(self, node: ast.Expr) -> e.Expression:
        """Analyze and require a concrete type (no bare NULL)."""
        expr = self.visit(node)
        if is_null_literal(expr):
            msg = NULL_TYPE_MESSAGE
            raise StatementError(msg, line=_line(node), column=_col(node))
        return expr

    def boolean(self, node: ast.Expr) -> e.Expression:
        """Analyze a condition; it must be BOOLEAN.

        A WHERE or HAVING clause that does not type check is ksqlDB's ``FilterTypeValidator``
        error: ``Error in WHERE expression: `` before the reason. Its operands that are not
        BOOLEAN are checked once the whole condition is typed, as ksqlDB checks them; qtt names
        the first (where ksqlDB names the whole condition when it is the last operand).
        """
        if self.clause not in pseudo_timestamps.CLAUSES or self._deferred is not None:
            return self._boolean(node, self._deferred)
        self._deferred = []
        try:
            expr = self._boolean(node)
            if self._deferred:
                shown, type_ = self._deferred[0]
                last = node
                while isinstance(last, ast.And | ast.Or):  # ksqlDB types AND and OR as their right operand
                    last = last.right
                for operand, operand_type in self._deferred:
                    if operand is last:
                        shown, type_ = node, operand_type
                msg = messages.not_boolean(self.clause, shown, type_)
                raise StatementError(msg, line=_line(shown), column=_col(shown))
            return expr
        except StatementError as error:
            # an unknown column is the analyzer's error, raised before the filter is typed
            own = isinstance(error, UnsupportedFeatureError | UnknownColumnError)
            if not own and not error.message.startswith(_FILTER_ERRORS):
                error.message = f"Error in {self.clause} expression: {error.message}"
            raise
        finally:
            self._deferred = None

    def _boolean(self, node: ast.Expr, deferred: list[tuple[ast.Expr, t.SqlType]] | None = None) -> e.Expression:
        expr = self._not_null(node)
        if expr.result_type != t.BOOLEAN:
            if deferred is not None:
                deferred.append((node, expr.result_type))
                return expr
            msg = messages.not_boolean(self.clause, node, expr.result_type)
            raise StatementError(msg, line=_line(node), column=_col(node))
        return expr

    def _not_null(self, node: ast.Expr) -> e.Expression:
        """A condition or an operand of AND, OR or NOT, which a bare NULL cannot be in ksqlDB:
        its ExpressionTypeManager gives NULL no type, so a WHERE, HAVING or WHEN condition that
        is one (or ends in ``AND NULL``) fails reading that type, and any other such operand
        fails to compile (``null && ...``)."""
        expr = self.visit(node)
        if is_null_literal(expr):
            raise StatementError(NULL_TYPE_MESSAGE, line=_line(node), column=_col(node))
        return expr

    @singledispatchmethod
    def visit(self, node: ast.Expr) -> e.Expression:
        raise UnsupportedFeatureError(f"expression {type(node).__name__}", line=_line(node), column=_col(node))

    # ------------------------------------------------------------------ literals

    @visit.register
    def visit_NullLiteral(self, node: ast.NullLiteral) -> e.Expression:
        return e.Literal(value=None, sql_type=NULL)

    @visit.register
    def visit_BooleanLiteral(self, node: ast.BooleanLiteral) -> e.Expression:
        return e.Literal(value=node.value, sql_type=t.BOOLEAN)

    @visit.register
    def visit_IntegerLiteral(self, node: ast.IntegerLiteral) -> e.Expression:
        type_ = t.INTEGER if -(2**31) <= node.value < 2**31 else t.BIGINT
        return e.Literal(value=node.value, sql_type=type_)

    @visit.register
    def visit_DecimalLiteral(self, node: ast.DecimalLiteral) -> e.Expression:
        return e.Literal(value=str(decimal.Decimal(node.text)), sql_type=decimal_literal_type(node.text))

    @visit.register
    def visit_DoubleLiteral(self, node: ast.DoubleLiteral) -> e.Expression:
        return e.Literal(value=float(node.text), sql_type=t.DOUBLE)

    @visit.register
    def visit_StringLiteral(self, node: ast.StringLiteral) -> e.Expression:
        return e.Literal(value=node.value, sql_type=t.STRING)

    # ------------------------------------------------------------------ references

    @visit.register
    def visit_ColumnRef(self, node: ast.ColumnRef) -> e.Expression:
        if node.source is None and node.name in self.lambda_vars:
            return e.LambdaVariable(name=node.name, sql_type=self.lambda_vars[node.name])
        if self.windows_later and node.name in _WINDOW_BOUNDS and not self.scope.matches(node):
            # ksqlDB resolves them as the windowed query's columns, then type-checks the clause
            # over the source's rows, which have no window yet
            raise StatementError(f"Unknown column {node.name}.", line=_line(node), column=_col(node))
        column = self.scope.resolve(node, self.clause)
        return e.ColumnRef(name=column.input_name or column.name, sql_type=column.type)

    @visit.register
    def visit_Dereference(self, node: ast.Dereference) -> e.Expression:
        base = self.typed(node.base)
        type_ = base.result_type
        if not isinstance(type_, t.Struct):
            raise StatementError(f"Expected STRUCT type, got: {type_}", line=_line(node), column=_col(node))
        found = type_.field(node.field)
        if found is None:
            msg = f"Could not find field '{node.field}' in '{format_plain(node.base)}'."
            raise StatementError(msg, line=_line(node), column=_col(node))
        return e.FieldRef(base=base, name=found.name, sql_type=found.type)

    @visit.register
    def visit_Subscript(self, node: ast.Subscript) -> e.Expression:
        base = self.typed(node.base)
        index = self.visit(node.index)
        type_ = base.result_type
        if isinstance(type_, t.Array):
            index = coerce_null(index, t.INTEGER)
            if index.result_type.base not in ("INTEGER", "BIGINT"):
                msg = f"Array index must be INTEGER or BIGINT, got {index.result_type}: {format_expr(node)}"
                raise StatementError(msg, line=_line(node), column=_col(node))
            return e.Subscript(base=base, index=index, sql_type=type_.element)
        if isinstance(type_, t.Map):
            key = map_key(coerce_null(index, type_.key), type_.key)
            if key is None:  # ksqlDB's Map.get: a key of another Java class is never found
                return e.Literal(value=None, sql_type=type_.value)
            return e.Subscript(base=base, index=key, sql_type=type_.value)
        raise StatementError(messages.not_subscriptable(node, type_), line=_line(node), column=_col(node))

    # ------------------------------------------------------------------ arithmetic

    @visit.register
    def visit_Negate(self, node: ast.Negate) -> e.Expression:
        operand = self.typed(node.operand)
        if not t.is_numeric(operand.result_type):
            msg = f"Cannot negate {format_expr(node.operand)} of type {operand.result_type}"
            raise StatementError(msg, line=_line(node), column=_col(node))
        return e.Negate(operand=operand, sql_type=operand.result_type)

    @visit.register
    def visit_UnaryPlus(self, node: ast.UnaryPlus) -> e.Expression:
        # ksqlDB's generated Java is +X: the identity on a number, and a compile error otherwise.
        # A cast to its own type (also the identity) keeps it from being a column reference.
        operand = self.typed(node.operand)
        if not t.is_numeric(operand.result_type):
            reason = f"unary plus of {format_expr(node.operand)} of type {operand.result_type}"
            raise StatementError(messages.codegen_error(self.clause, reason), line=_line(node), column=_col(node))
        return e.Cast(operand=operand, sql_type=operand.result_type)

    @visit.register
    def visit_Arithmetic(self, node: ast.Arithmetic) -> e.Expression:
        left, right = self.visit(node.left), self.visit(node.right)
        if is_null_literal(left) or is_null_literal(right):
            msg = messages.null_arithmetic(node, left.result_type, right.result_type)
            raise StatementError(msg, line=_line(node), column=_col(node))
        lt, rt = left.result_type, right.result_type
        if node.op == "+" and lt == t.STRING and rt == t.STRING:
            return e.Arithmetic(op="+", left=left, right=right, sql_type=t.STRING)  # Java's String +
        result = arithmetic_type(node.op, lt, rt)
        if result is None:
            shown = format_plain(node)  # ksqlDB's Operator names base types: DECIMAL, not DECIMAL(4, 2)
            msg = f"Error processing expression: {shown}. Unsupported arithmetic types. {lt.base} {rt.base}"
            raise StatementError(msg, line=_line(node), column=_col(node))
        if (problem := unsupported_arithmetic(node.op, result, in_lambda=bool(self.lambda_vars))) is not None:
            raise UnsupportedFeatureError(problem, line=_line(node), column=_col(node))
        return e.Arithmetic(op=node.op, left=left, right=right, sql_type=result)

    @visit.register
    def visit_Concat(self, node: ast.Concat) -> e.Expression:
        call = ast.FunctionCall(name="CONCAT", args=(node.left, node.right), pos=node.pos)
        return self.visit(call)

    # ------------------------------------------------------------------ predicates

    @visit.register
    def visit_Comparison(self, node: ast.Comparison) -> e.Expression:
        if self.clause in pseudo_timestamps.CLAUSES:
            node = cast(ast.Comparison, pseudo_timestamps.rewritten(node))
        left, right = self.visit(node.left), self.visit(node.right)
        if is_null_literal(left) or is_null_literal(right):
            msg = messages.null_comparison(left.result_type, node.op, right.result_type)
            raise StatementError(msg, line=_line(node), column=_col(node))
        self._check_comparable(node.left, left, node.right, right, node.op)
        return compared(node.op, left, right)

    def _check_comparable(self, ln: ast.Expr, left: e.Expression, rn: ast.Expr, right: e.Expression, op: str) -> None:
        lt, rt = left.result_type, right.result_type
        if op in EQUALITY_OPS and lt.base == rt.base and lt.base in ("ARRAY", "MAP", "STRUCT"):
            return  # ksqlDB accepts any two arrays (maps, structs) and compares them with Java's equals
        if not comparable(lt, rt, op):
            raise StatementError(messages.cannot_compare(ln, lt, rn, rt, op), line=_line(ln), column=_col(ln))

    @visit.register
    def visit_DistinctFrom(self, node: ast.DistinctFrom) -> e.Expression:
        if self.clause in pseudo_timestamps.CLAUSES:
            node = cast(ast.DistinctFrom, pseudo_timestamps.rewritten(node))
        left, right = self.visit(node.left), self.visit(node.right)
        if not node.negated and (is_null_literal(left) or is_null_literal(right)):  # NOT hides it from ksqlDB
            msg = messages.null_comparison(left.result_type, "IS DISTINCT FROM", right.result_type)
            raise StatementError(msg, line=_line(node), column=_col(node))
        left, right = coerce_null(left, right.result_type), coerce_null(right, left.result_type)
        self._check_comparable(node.left, left, node.right, right, "IS DISTINCT FROM")
        return e.DistinctFrom(left=left, right=right, negated=node.negated)

    @visit.register
    def visit_And(self, node: ast.And) -> e.Expression:
        return e.And(left=self.boolean(node.left), right=self.boolean(node.right))

    @visit.register
    def visit_Or(self, node: ast.Or) -> e.Expression:
        return e.Or(left=self.boolean(node.left), right=self.boolean(node.right))

    @visit.register
    def visit_Not(self, node: ast.Not) -> e.Expression:
        return e.Not(operand=self.boolean(node.operand))

    @visit.register
    def visit_IsNull(self, node: ast.IsNull) -> e.Expression:
        operand = self.visit(node.operand)
        return e.IsNull(operand=coerce_null(operand, t.STRING), negated=node.negated)

    @visit.register
    def visit_Between(self, node: ast.Between) -> e.Expression:
        if self.clause in pseudo_timestamps.CLAUSES:
            node = cast(ast.Between, pseudo_timestamps.rewritten(node))
        value, low, high = self.visit(node.value), self.visit(node.low), self.visit(node.high)
        if problem := between_problem(value.result_type, low.result_type, high.result_type):
            raise StatementError(messages.codegen_error(self.clause, problem), line=_line(node), column=_col(node))
        target = common_type([value.result_type, low.result_type, high.result_type])
        if target is None or isinstance(target, NullType):
            self._check_comparable(node.value, value, node.low, low, ">=")
            self._check_comparable(node.value, value, node.high, high, "<=")
            target = value.result_type
        value, low, high = (coerce_null(x, target) for x in (value, low, high))
        self._check_comparable(node.value, value, node.low, low, ">=")
        self._check_comparable(node.value, value, node.high, high, "<=")
        return e.Between(value=value, low=low, high=high, negated=node.negated)

    @visit.register
    def visit_InList(self, node: ast.InList) -> e.Expression:
        value = self.visit(node.value)
        items = [self.visit(i) for i in node.items]
        exprs = [value, *items]
        coercer = ListCoercer([format_plain(n) for n in (node.value, *node.items)])
        try:
            target = coercer.common_type(exprs)
        except CoercionError as error:
            # ksqlDB coerces an IN list as it compiles the clause
            msg = messages.codegen_error(self.clause, error.message)
            raise StatementError(msg, line=_line(node), column=_col(node)) from None
        if target is not None:
            value, *items = (convert(x, target) for x in exprs)
        structured = t.is_structured(value.result_type)
        in_list = e.StructuredInList if structured else e.InList
        return in_list(value=value, items=tuple(items), negated=node.negated)

    @visit.register
    def visit_Like(self, node: ast.Like) -> e.Expression:
        value = coerce_null(self.visit(node.value), t.STRING)
        pattern = coerce_null(self.visit(node.pattern), t.STRING)
        for raw, expr in ((node.value, value), (node.pattern, pattern)):
            if expr.result_type != t.STRING:
                msg = f"LIKE operands must be STRING, got {expr.result_type}: {format_expr(raw)}"
                raise StatementError(msg, line=_line(raw), column=_col(raw))
        if node.escape is not None and len(node.escape) != 1:
            msg = f"Escape must be a single character, got '{node.escape}'"
            raise StatementError(msg, line=_line(node), column=_col(node))
        return e.Like(value=value, pattern=pattern, escape=node.escape, negated=node.negated)

    # ------------------------------------------------------------------ conditionals

    @visit.register
    def visit_SearchedCase(self, node: ast.SearchedCase) -> e.Expression:
        # ksqlDB's validateWhenClauses: each branch's WHEN, then its THEN against the earlier
        # THENs, before the next branch is typed
        conditions: list[e.Expression] = []
        results: list[e.Expression] = []
        shown = [format_plain(w.condition) for w in node.whens]
        shown_results = [format_plain(w.result) for w in node.whens]
        for when in node.whens:
            conditions.append(self._when_operand(when.condition))
            results.append(self.visit(when.result))
            count = len(results)
            try:
                then_type(shown[:count], shown_results[:count], [r.result_type for r in results])
            except StatementError as error:
                raise error.at(line=_line(node), column=_col(node)) from None
        return self._case(node, conditions, shown, results)

    @visit.register
    def visit_SimpleCase(self, node: ast.SimpleCase) -> e.Expression:
        # ksqlDB parses a simple CASE, but its ExpressionTypeManager cannot type one
        raise StatementError(SIMPLE_CASE_MESSAGE, line=_line(node), column=_col(node))

    def _when_operand(self, node: ast.Expr) -> e.Expression:
        expr = self._not_null(node)
        if expr.result_type != t.BOOLEAN:
            msg = f"WHEN operand type should be boolean.\nType for '{format_plain(node)}' is {expr.result_type}"
            raise StatementError(msg, line=_line(node), column=_col(node))
        return expr

    def _case(
        self,
        node: ast.SearchedCase | ast.SimpleCase,
        conditions: Sequence[e.Expression],
        shown_conditions: Sequence[str],
        results: Sequence[e.Expression],
    ) -> e.Expression:
        default = self.visit(node.default) if node.default is not None else None
        shown_results = [format_plain(w.result) for w in node.whens]
        try:
            default_type = default.result_type if default is not None else None
            target = case_type(shown_conditions, shown_results, [r.result_type for r in results], default_type)
        except StatementError as error:
            raise error.at(line=_line(node), column=_col(node)) from None
        whens = tuple(
            e.When(condition=c, result=coerce_null(r, target)) for c, r in zip(conditions, results, strict=True)
        )
        default = coerce_null(default, target) if default is not None else None
        return e.Case(whens=whens, default=default, sql_type=target)

    @visit.register
    def visit_Cast(self, node: ast.Cast) -> e.Expression:
        operand = self.visit(node.operand)
        if not can_cast(operand.result_type, node.type):
            # ksqlDB finds unsupported casts while compiling a clause, and names the clause.
            msg = messages.codegen_error(self.clause, f"Cast of {operand.result_type} to {node.type} is not supported")
            raise StatementError(msg, line=_line(node), column=_col(node))
        problem = unsupported_cast(operand.result_type, node.type) or t.wider_than_spark(node.type)
        if problem is not None:
            raise UnsupportedFeatureError(problem, line=_line(node), column=_col(node))
        operand = coerce_null(operand, node.type)
        if operand.result_type == node.type:
            return operand
        note_resolution(lambda: cast_text(operand.result_type.base, node.type.base))
        return e.Cast(operand=operand, sql_type=node.type)

    # ------------------------------------------------------------------ constructors

    @visit.register
    def visit_CreateArray(self, node: ast.CreateArray) -> e.Expression:
        if not node.items:
            raise StatementError(_EMPTY_ARRAY, line=_line(node), column=_col(node))
        items = [self.visit(i) for i in node.items]
        element = common_type(i.result_type for i in items)
        if element is None:  # elements of different types: ksqlDB's list coercion decides
            element = self._user_list(node, node.items, items, "an array with all NULL elements", "value")
            return e.CreateArray(items=tuple(convert(i, element) for i in items), sql_type=t.Array(element))
        if isinstance(element, NullType):
            msg = _all_null("an array with all NULL elements", "value")
            raise StatementError(msg, line=_line(node), column=_col(node))
        return e.CreateArray(items=tuple(coerce_null(i, element) for i in items), sql_type=t.Array(element))

    def _user_list(
        self, node: ast.Expr, raw: Sequence[ast.Expr], exprs: Sequence[e.Expression], what: str, cast: str
    ) -> t.SqlType:
        """The common type of a constructor's elements, keys or values by ksqlDB's list coercion
        (``CoercionUtil.coerceUserList``), with its messages."""
        try:
            found = ListCoercer([format_plain(n) for n in raw]).common_type(exprs)
        except CoercionError as error:
            raise StatementError(error.message, line=_line(node), column=_col(node)) from None
        if found is None or isinstance(found, NullType):
            raise StatementError(_all_null(what, cast), line=_line(node), column=_col(node))
        return found

    @visit.register
    def visit_CreateMap(self, node: ast.CreateMap) -> e.Expression:
        if not node.entries:
            raise StatementError(_EMPTY_MAP, line=_line(node), column=_col(node))
        keys = [self.visit(k) for k, _ in node.entries]
        vals = [self.visit(v) for _, v in node.entries]
        key_type = common_type(k.result_type for k in keys)
        value_type = common_type(v.result_type for v in vals)
        if key_type is None or isinstance(key_type, NullType):
            raw_keys = [k for k, _ in node.entries]
            key_type = self._user_list(node, raw_keys, keys, "a map with all NULL keys", "key")
            keys = [convert(k, key_type) for k in keys]
        if value_type is None or isinstance(value_type, NullType):
            raw_values = [v for _, v in node.entries]
            value_type = self._user_list(node, raw_values, vals, "a map with all NULL values", "value")
            vals = [convert(v, value_type) for v in vals]
        entries = tuple(
            e.MapEntry(key=coerce_null(k, key_type), value=coerce_null(v, value_type))
            for k, v in zip(keys, vals, strict=True)
        )
        return e.CreateMap(entries=entries, sql_type=t.Map(key_type, value_type))

    @visit.register
    def visit_CreateStruct(self, node: ast.CreateStruct) -> e.Expression:
        values: list[e.StructFieldValue] = []
        for name, value_node in node.fields:
            value = self.visit(value_node)
            if (problem := type_rules.field_name_problem(name)) is not None:  # ksqlDB's Field.of
                raise StatementError(problem, line=_line(node), column=_col(node))
            twin = next((v for v in values if v.name == name), None)
            if twin is not None:
                first, second = (f"`{name}` {x.result_type}" for x in (twin.value, value))
                msg = f"Duplicate field names found in STRUCT: '{first}' and '{second}'"
                raise StatementError(msg, line=_line(node), column=_col(node))
            if is_null_literal(value):
                # ksqlDB's ExpressionTypeManager gives NULL no type, and its struct type's field
                # refuses a missing one (a NullPointerException: confluentinc/ksql#9525)
                raise StatementError(NULL_TYPE_MESSAGE, line=_line(value_node), column=_col(value_node))
            values.append(e.StructFieldValue(name=name, value=value))
        type_ = t.Struct(tuple(t.Field(v.name, v.value.result_type) for v in values))
        return e.CreateStruct(fields=tuple(values), sql_type=type_)

    # ------------------------------------------------------------------ functions

    @visit.register
    def visit_FunctionCall(self, node: ast.FunctionCall) -> e.Expression:
        if is_aggregate(node.name):
            if self.aggregates is None:
                # ksqlDB type-checks the arguments first: an unknown column in one is that error
                for argument in node.args:
                    if not isinstance(argument, ast.AllColumns | ast.Lambda):
                        self.visit(argument)
                msg = f"Aggregate functions are not allowed in {self.clause}: {format_expr(node)}"
                if self.clause == "WHERE":  # ksqlDB types it, then its code generator finds no UDF
                    msg = messages.codegen_error("WHERE", f"Can't find any functions with the name '{node.identifier}'")
                raise StatementError(msg, line=_line(node), column=_col(node))
            return self.aggregates(node)
        if any(isinstance(a, ast.Lambda) for a in node.args) or is_lambda_function(node.name):
            try:
                return resolve_lambda_call(node, self.visit, self._lambda_body)
            except SqlError as error:
                raise error.at(line=_line(node), column=_col(node)) from None
        args = [self.visit(a) for a in node.args]
        # ksqlDB's ExpressionTypeManager.visitIntervalUnit gives a unit keyword no type: a null argument
        types = [NULL if isinstance(a, e.IntervalUnit) else a.result_type for a in args]
        try:
            resolved = fns.resolve(node.name, types, node.written, node.identifier)
        except SqlError as error:
            raise error.at(line=_line(node), column=_col(node)) from None
        self._check_constant_args(node, resolved.function, args)
        typed_args = tuple(
            implicit_cast(arg, param) if param is not None else arg
            for arg, param in zip(args, resolved.param_types, strict=True)
        )
        for arg in typed_args:
            if is_null_literal(arg):
                msg = NULL_TYPE_MESSAGE
                raise StatementError(msg, line=_line(node), column=_col(node))
        return e.Call(name=node.name, args=typed_args, sql_type=resolved.return_type)

    def _check_constant_args(self, node: ast.FunctionCall, function: Function, args: Sequence[e.Expression]) -> None:
        # Spark takes some arguments (ROUND's places, date patterns) only as constants.
        for index in sorted(function.constant_args):
            if index < len(args) and not isinstance(args[index], e.Literal):
                feature = f"{node.name} with a non-constant argument {index + 1}"
                raise UnsupportedFeatureError(feature, line=_line(node), column=_col(node))
        pattern_index = fns.DATETIME_PATTERN_ARGS.get(node.name)
        if pattern_index is not None and pattern_index < len(args):
            pattern = args[pattern_index]
            if isinstance(pattern, e.Literal) and isinstance(pattern.value, str):
                problem = fns.pattern_problem(node.name, pattern.value)
                if problem is not None:
                    raise UnsupportedFeatureError(problem, line=_line(node), column=_col(node))

    def _lambda_body(self, node: ast.Lambda, param_types: Sequence[t.SqlType]) -> e.Expression:
        # The body sees the enclosing lambdas' variables and the columns (no parameter is named
        # like either: lambda_arguments checked it). Aggregates are not allowed inside a lambda.
        bound = {**self.lambda_vars, **dict(zip(node.params, param_types, strict=True))}
        return Analyzer(self.scope, self.clause, lambda_vars=bound).visit(node.body)

    @visit.register
    def visit_IntervalUnit(self, node: ast.IntervalUnit) -> e.Expression:
        return e.IntervalUnit(unit=node.unit)

    @visit.register
    def visit_Lambda(self, node: ast.Lambda) -> e.Expression:
        msg = f"Lambda expressions are only valid as function arguments: {format_expr(node)}"
        raise StatementError(msg, line=_line(node), column=_col(node))
