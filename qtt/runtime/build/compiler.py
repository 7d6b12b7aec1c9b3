"""Compile plan expressions into Spark Columns: one method per expression node.

The plan is already typed, so each method knows its operands' SQL types. Where Spark's
semantics differ from ksqlDB's (Java's), the method says so and compensates:

- a comparison with a null operand is false, not null (ksqlDB's generated code checks for
  null first), and NaN compares false with everything, as Java's ``<`` and ``==`` do;
- maps compare by content, whatever their entry order (Java's ``Map.equals``);
- ``a AND b`` / ``a OR b`` with a null ``a`` is null: Java unboxes ``a`` first and fails, and
  a failed expression is null; Spark's three-valued logic would answer false / true;
- integer division truncates, double division by zero is +/-Infinity or NaN, LIKE has no
  default escape and ``%`` does not match line breaks, arrays are 1-based.

Errors inside an expression make it null rather than failing the query: ksqlDB logs them
to the processing log and emits null. The failing part is null; in a query built under
:func:`~qtt.runtime.build.lambda_failures.whole_expression_errors` the whole top-level
expression is, as in ksqlDB.
"""

from __future__ import annotations

import base64
import decimal
import inspect
from collections.abc import Callable
from functools import singledispatchmethod

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.errors import RuntimeBuildError
from qtt.plan.analysis.expression_errors import CAUGHT_ARGUMENTS
from qtt.plan.ir import expressions as e
from qtt.plan.ir.depth import deep_call, in_deep_call, tree_depth
from qtt.runtime.build import builtins
from qtt.runtime.build.builtins.casts import cast
from qtt.runtime.build.builtins.comparisons import (
    comparable,
    compare,
    distinct,
    double_equality_key,
    holds_null,
    mixed_equality,
    structured_match,
)
from qtt.runtime.build.builtins.numeric import decimal_quotient
from qtt.runtime.build.builtins.strings import dynamic_like_regex, like_regex, like_with_escape
from qtt.runtime.build.lambda_failures import failure, whole_expression_rule
from qtt.runtime.build.names import col
from qtt.runtime.spark.session import activate
from qtt.runtime.spark.spark_types import to_spark

# Expressions up to this depth compile on the caller's stack; deeper ones in a deep call.
_SHALLOW = 100


def _children(expr: e.Expression) -> tuple[e.Expression, ...]:
    return expr.children()


def _null_boolean() -> Column:
    return F.lit(None).cast("boolean")


def literal(value: object, type_: t.SqlType) -> Column:
    """A typed literal column from a plan literal's JSON value."""
    spark_type = to_spark(type_)
    if value is None:
        return F.lit(None).cast(spark_type)
    if isinstance(type_, t.Decimal):
        return F.lit(decimal.Decimal(str(value))).cast(spark_type)
    if type_.base == "BYTES":
        return F.lit(base64.b64decode(str(value))).cast(spark_type)
    return F.lit(value).cast(spark_type)


class Compiler:
    """Turns one plan expression tree into a Spark Column.

    Args:
        lambda_columns: the Spark lambda variable bound to each lambda parameter in scope.
    """

    def __init__(self, lambda_columns: dict[str, Column] | None = None) -> None:
        self.lambda_columns = lambda_columns or {}
        self._nesting = 0

    def __call__(self, expr: e.Expression) -> Column:
        if self._nesting == 0 and not in_deep_call() and tree_depth(expr, _children, stop=_SHALLOW) > _SHALLOW:
            # Deep expressions (generated SQL: hundreds of OR terms) compile on a large stack.
            return deep_call(self._on_this_thread, expr)
        self._nesting += 1
        try:
            column = self.visit(expr)
            if self._nesting == 1 and not self.lambda_columns:
                column = self._whole_expression_failure(expr, column)
            return column
        finally:
            self._nesting -= 1

    def _whole_expression_failure(self, expr: e.Expression, column: Column) -> Column:
        """``column`` null wherever a part of ``expr`` throws in ksqlDB's Java, in a query built
        under :func:`~qtt.runtime.build.lambda_failures.whole_expression_errors`."""
        caught = whole_expression_rule()
        if caught is None or isinstance(expr, e.Lambda):
            return column
        return self._null_where(failure(expr, self, caught), column, expr.result_type)

    def _caught(self, part: e.Expression, column: Column | None = None, type_: t.SqlType | None = None) -> Column:
        """``part`` (compiled: ``column`` of ``type_``, else ``part`` compiled here), which ksqlDB
        evaluates in a try of its own (``ksql.nested.error.set.null``): in a query built under
        :func:`~qtt.runtime.build.lambda_failures.whole_expression_errors` with caught parts,
        null wherever ``part`` throws inside."""
        compiled = self(part) if column is None else column
        if whole_expression_rule() is not True:
            return compiled
        return self._null_where(failure(part, self, True), compiled, type_ or part.result_type)

    @staticmethod
    def _null_where(fails: Column | None, column: Column, type_: t.SqlType) -> Column:
        if fails is None:
            return column
        return F.when(F.coalesce(fails, F.lit(False)), F.lit(None).cast(to_spark(type_))).otherwise(column)

    def _on_this_thread(self, expr: e.Expression) -> Column:
        """Compile ``expr`` on a thread of its own (the large stack), with the session active there."""
        activate()
        return self(expr)

    @singledispatchmethod
    def visit(self, expr: e.Expression) -> Column:
        msg = (
            f"no Spark translation for expression {type(expr).type_tag!r} ({type(expr).__qualname__}); "
            f"add a visit_{type(expr).__name__} method to qtt.runtime.build.compiler.Compiler"
        )
        raise RuntimeBuildError(msg)

    @visit.register
    def visit_ColumnRef(self, expr: e.ColumnRef) -> Column:
        return col(expr.name)

    @visit.register
    def visit_Literal(self, expr: e.Literal) -> Column:
        return literal(expr.value, expr.sql_type)

    @visit.register
    def visit_LambdaVariable(self, expr: e.LambdaVariable) -> Column:
        return self.lambda_columns[expr.name]

    # A lambda is only ever an argument of a higher-order function, and those take a Python
    # function, not a Column: the one node whose translation is not a Column.
    @visit.register  # type: ignore[arg-type]
    def visit_Lambda(self, expr: e.Lambda) -> Callable[..., Column]:
        """The lambda as the Python function of Columns that Spark's higher-order functions take.

        ``F.transform``, ``F.filter``, ``F.aggregate`` ... count the function's parameters from
        its signature, so the signature has one per lambda parameter. The body sees the
        enclosing lambdas' variables too.
        """
        params, body, outer = expr.params, expr.body, self.lambda_columns

        def apply(*columns: Column) -> Column:
            return Compiler({**outer, **dict(zip(params, columns, strict=True))})(body)

        def failed(*columns: Column) -> Column | None:
            # with ksql.nested.error.set.null off, a CAST or constructor item in the body fails it too
            caught = whole_expression_rule() is not False
            return failure(body, Compiler({**outer, **dict(zip(params, columns, strict=True))}), caught)

        signature = inspect.Signature(
            [inspect.Parameter(f"arg{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(len(params))]
        )
        apply.__signature__ = signature  # type: ignore[attr-defined]
        failed.__signature__ = signature  # type: ignore[attr-defined]
        # Where the body fails as Java code would (see qtt.runtime.build.lambda_failures).
        apply.failed = failed  # type: ignore[attr-defined]
        return apply

    @visit.register
    def visit_IntervalUnit(self, expr: e.IntervalUnit) -> Column:
        # A time function takes its unit as a constant string ("SECOND", "DAY" ...).
        return F.lit(expr.unit)

    @visit.register
    def visit_Arithmetic(self, expr: e.Arithmetic) -> Column:
        left, right = self(expr.left), self(expr.right)
        if expr.sql_type == t.STRING:
            # Java's String + writes a null operand as "null". Plans persisted before this node
            # took STRING called CONCAT instead, which skips it.
            return F.concat(F.coalesce(left, F.lit("null")), F.coalesce(right, F.lit("null")))
        target = to_spark(expr.sql_type)
        base = expr.sql_type.base
        if base in ("INTEGER", "BIGINT"):
            left, right = left.cast(target), right.cast(target)
            if expr.op == "/":
                # Java integer division truncates toward zero, as Spark's div (by zero: null).
                return F.call_function("div", left, right).cast(target)
        if base == "DOUBLE":
            left, right = left.cast(target), right.cast(target)
            # Java doubles divide by zero into +/-Infinity or NaN, where Spark returns null;
            # multiplying keeps null for a null operand. Each operand is used twice at most,
            # so chains of divisions stay small.
            if expr.op == "/":
                return F.when(right == 0, left * F.lit(float("inf"))).otherwise(left / right)
            if expr.op == "%":
                return F.when(right == 0, left * F.lit(float("nan"))).otherwise(left % right)
        if isinstance(expr.sql_type, t.Decimal) and expr.op in ("/", "%"):
            return decimal_quotient(expr.op, left, right, expr.sql_type)
        ops = {
            "+": Column.__add__,
            "-": Column.__sub__,
            "*": Column.__mul__,
            "/": Column.__truediv__,
            "%": Column.__mod__,
        }
        return ops[expr.op](left, right).cast(target)

    @visit.register
    def visit_Negate(self, expr: e.Negate) -> Column:
        return (-self(expr.operand)).cast(to_spark(expr.sql_type))

    @visit.register
    def visit_Comparison(self, expr: e.Comparison) -> Column:
        return compare(
            expr.op,
            self(expr.left),
            self(expr.right),
            expr.left.result_type,
            expr.right.result_type,
        )

    @visit.register
    def visit_MixedEquality(self, expr: e.MixedEquality) -> Column:
        return mixed_equality(expr.op, self(expr.left), self(expr.right), expr.left.result_type, expr.right.result_type)

    @visit.register
    def visit_DistinctFrom(self, expr: e.DistinctFrom) -> Column:
        result = distinct(self(expr.left), self(expr.right), expr.left.result_type, expr.right.result_type)
        return ~result if expr.negated else result

    @visit.register
    def visit_And(self, expr: e.And) -> Column:
        return self._java_logic(expr, stop_on=False)

    @visit.register
    def visit_Or(self, expr: e.Or) -> Column:
        return self._java_logic(expr, stop_on=True)

    def _java_logic(self, expr: e.And | e.Or, *, stop_on: bool) -> Column:
        """Java's ``&&`` / ``||`` over a flattened chain of operands, left to right.

        The first operand that is null makes the result null (unboxing fails), the first
        that equals ``stop_on`` decides it; otherwise it is ``not stop_on``. One CASE over
        the chain evaluates lazily and uses each operand once per test, where nesting
        ``when(left is null ...)`` per node would grow exponentially with the chain.
        """
        result = None
        for operand in _flatten(expr, type(expr)):
            value = self(operand)
            decided = value if stop_on else ~value
            if result is None:
                result = F.when(value.isNull(), _null_boolean()).when(decided, F.lit(stop_on))
            else:
                result = result.when(value.isNull(), _null_boolean()).when(decided, F.lit(stop_on))
        assert result is not None
        return result.otherwise(F.lit(not stop_on))

    @visit.register
    def visit_Not(self, expr: e.Not) -> Column:
        return ~self(expr.operand)

    @visit.register
    def visit_IsNull(self, expr: e.IsNull) -> Column:
        operand = self(expr.operand)
        return operand.isNotNull() if expr.negated else operand.isNull()

    @visit.register
    def visit_Like(self, expr: e.Like) -> Column:
        value = self(expr.value)
        if isinstance(expr.pattern, e.Literal):
            if expr.pattern.value is None:
                return _null_boolean()
            regex = like_regex(str(expr.pattern.value), expr.escape)
            if regex is None:
                return _null_boolean()
            matched = value.rlike(regex)
        elif expr.escape is None:
            matched = F.regexp_like(value, dynamic_like_regex(self(expr.pattern)))
        else:
            matched = like_with_escape(value, self(expr.pattern), expr.escape)
        return ~matched if expr.negated else matched

    @visit.register
    def visit_Between(self, expr: e.Between) -> Column:
        value, vt = self(expr.value), expr.value.result_type
        low = compare(">=", value, self(expr.low), vt, expr.low.result_type)
        high = compare("<=", value, self(expr.high), vt, expr.high.result_type)
        # Java's ``low && high``: a failed (null) lower comparison fails the whole BETWEEN.
        result = F.when(low.isNull(), _null_boolean()).otherwise(low & high)
        return ~result if expr.negated else result

    @visit.register
    def visit_InList(self, expr: e.InList) -> Column:
        return self._in_list(expr, nested_nulls_match=False)

    @visit.register
    def visit_StructuredInList(self, expr: e.StructuredInList) -> Column:
        return self._in_list(expr, nested_nulls_match=True)

    def _in_list(self, expr: e.InList | e.StructuredInList, *, nested_nulls_match: bool) -> Column:
        # ksqlDB's InListEvaluator: a null value or a null item never matches; never null.
        # Spark's equality of arrays, maps and structs already matches two nulls in one place.
        value_type = expr.value.result_type
        raw = self(expr.value)
        items_raw = [(self(i), i.result_type) for i in expr.items if not _is_null_literal(i)]
        if nested_nulls_match and t.contains_map(value_type) and all(it == value_type for _, it in items_raw):
            # a map matches by get() of each of its keys, which Spark's equality cannot say
            found = F.lit(False)
            for item, _ in items_raw:
                found = found | structured_match(raw, item, value_type)
            return ~found if expr.negated else found
        # InListEvaluator matches DOUBLEs inside an array, map or struct with Double.equals too
        inside = t.is_structured(value_type)
        value = comparable(raw, value_type, java_doubles=inside)
        items = [comparable(item, item_type, java_doubles=inside) for item, item_type in items_raw]
        if value_type.base == "DOUBLE":
            # InListEvaluator's exact match is Double.equals
            value, items = double_equality_key(value), [double_equality_key(i) for i in items]
        found = value.isin(items) if items else F.lit(False)
        nested_null = None if nested_nulls_match else holds_null(raw, value_type)
        if nested_null is not None:
            # it matches element by element, and a null inside never matches
            found = found & ~nested_null
        result = F.coalesce(found, F.lit(False))
        return ~result if expr.negated else result

    @visit.register
    def visit_Case(self, expr: e.Case) -> Column:
        # ksqlDB's SearchedCaseFunction unboxes each condition in turn: a null one reached
        # before a true one throws, and the whole CASE is null (Spark would skip the branch).
        result: Column | None = None
        failed = F.lit(None).cast(to_spark(expr.sql_type))
        for when in expr.whens:
            condition = self(when.condition)
            value = self(when.result).cast(to_spark(expr.sql_type))
            result = F.when(condition.isNull(), failed) if result is None else result.when(condition.isNull(), failed)
            result = result.when(condition, value)
        assert result is not None
        default = self(expr.default).cast(to_spark(expr.sql_type)) if expr.default is not None else None
        return result.otherwise(default) if default is not None else result

    @visit.register
    def visit_Cast(self, expr: e.Cast) -> Column:
        in_lambda = bool(self.lambda_columns)
        converted = cast(self(expr.operand), expr.operand.result_type, expr.sql_type, in_lambda=in_lambda)
        return self._caught(expr.operand, converted, expr.sql_type)  # the CAST with its operand

    @visit.register
    def visit_Call(self, expr: e.Call) -> Column:
        # ksqlDB evaluates an argument that is a call or a field access in a try of its own
        args = [self._caught(a) if isinstance(a, CAUGHT_ARGUMENTS) else self(a) for a in expr.args]
        return builtins.call(expr, args)

    @visit.register
    def visit_Subscript(self, expr: e.Subscript) -> Column:
        base, index = self(expr.base), self(expr.index)
        if isinstance(expr.base.result_type, t.Array):
            # ksqlDB: 1-based, negative from the end, out of range (and 0) is null.
            safe = F.when(index == 0, F.lit(None)).otherwise(index).cast("int")
            return F.try_element_at(base, safe)
        return F.try_element_at(base, index)

    @visit.register
    def visit_FieldRef(self, expr: e.FieldRef) -> Column:
        return self(expr.base).getField(expr.name)

    @visit.register
    def visit_CreateArray(self, expr: e.CreateArray) -> Column:
        element = to_spark(expr.sql_type.element)  # type: ignore[attr-defined]
        return F.array(*[self._caught(i).cast(element) for i in expr.items])

    @visit.register
    def visit_CreateMap(self, expr: e.CreateMap) -> Column:
        map_type = expr.sql_type
        assert isinstance(map_type, t.Map)
        if not expr.entries:
            return F.create_map().cast(to_spark(map_type))
        parts: list[Column] = []
        keys: list[Column] = []
        for entry in expr.entries:
            key = self._caught(entry.key).cast(to_spark(map_type.key))
            parts += [key, self._caught(entry.value).cast(to_spark(map_type.value))]
            if not (isinstance(entry.key, e.Literal) and entry.key.value is not None):
                keys.append(key)
        result = F.create_map(*parts)
        if not keys:
            return result
        # Spark cannot hold a null map key; ksqlDB fails to write one, so the map is null.
        any_null = F.greatest(*[k.isNull() for k in keys]) if len(keys) > 1 else keys[0].isNull()
        return F.when(any_null, F.lit(None)).otherwise(result)

    @visit.register
    def visit_CreateStruct(self, expr: e.CreateStruct) -> Column:
        if not expr.fields:
            return F.struct().cast(to_spark(expr.sql_type))
        return F.struct(*[self._caught(f.value).alias(f.name) for f in expr.fields])


def _flatten(expr: e.Expression, kind: type[e.And] | type[e.Or]) -> list[e.Expression]:
    if isinstance(expr, kind):
        return _flatten(expr.left, kind) + _flatten(expr.right, kind)
    return [expr]


def _is_null_literal(expr: e.Expression) -> bool:
    return isinstance(expr, e.Literal) and expr.value is None
