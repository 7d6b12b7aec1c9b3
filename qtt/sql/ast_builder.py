"""Build :mod:`qtt.sql.ast` nodes from lark's parse tree: one method per grammar rule.

The parse entry points (:mod:`qtt.sql.parser`) run lark and hand its tree to
:class:`AstBuilder`; everything that knows the shape of a grammar rule lives here.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from lark import Token, v_args

from qtt import sqltypes as t
from qtt.errors import SqlSyntaxError
from qtt.sql import ast, type_rules
from qtt.sql.ast_parts import (
    TIME_UNIT_FUNCTIONS,
    Duration,
    case_parts,
    check_escape,
    check_grouping,
    check_map_keys,
    check_relation_names,
    duration_amount,
    function_argument,
    grace_ms,
    property_value,
    type_constructor,
    window_options,
)
from qtt.sql.ast_terms import TermRules, identifier_of, int_of, pos_of, string_of, token_pos, whole_number
from qtt.sql.formatter import format_expr

#: the keywords before a statement's target name (located in its messages)
_BEFORE_TARGET = re.compile(
    r"(?:INSERT\s+INTO|DROP\s+(?:STREAM|TABLE)(?:\s+IF\s+EXISTS)?|ALTER\s+(?:STREAM|TABLE))\s+", re.IGNORECASE
)

# The text of an identifier at the start of a function call, quoted or not.
_NAME_TEXT = re.compile(r'`(?:[^`]|``)*`|"(?:[^"]|"")*"|[^\s(]+')


@v_args(meta=True, inline=True)
class AstBuilder(TermRules):
    """Builds AST nodes bottom-up; one method per grammar rule or alias.

    lark's non-recursive transformer, so that deep expressions (hundreds of ``OR`` terms)
    never meet Python's recursion limit here.
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self._text = text
        #: the custom types (``CREATE TYPE``) of the statements built so far, by upper-case name:
        #: lark builds the statements in order, so each one sees the types before it
        self._custom_types: dict[str, t.SqlType] = {}

    @property
    def text(self) -> str:
        """The SQL text being built, which positions index."""
        return self._text

    # ------------------------------------------------------------------ identifiers

    def identifier(self, meta: Any, token: Any) -> str:
        if isinstance(token, Token):
            return identifier_of(token)
        return token  # already a nonreserved keyword name

    def clause_free_nonreserved(self, meta: Any, token: Token) -> str:
        return str(token).upper()

    def bare_identifier(self, meta: Any, token: Any) -> str:
        return self.identifier(meta, token)

    # ------------------------------------------------------------------ statements

    @v_args(meta=True, inline=False)
    def statements(self, meta: Any, children: list[ast.Statement]) -> list[ast.Statement]:
        return children

    def _located(self, meta: Any) -> dict[str, Any]:
        """A statement's text and position, which every statement node carries."""
        return {"text": self._text[meta.start_pos : meta.end_pos], "pos": pos_of(meta)}

    def create_source(
        self,
        meta: Any,
        create,
        or_replace,
        is_source,
        kind,
        if_not_exists,
        name,
        elements,
        properties,
    ):
        return ast.CreateSource(
            kind=kind,
            name=name,
            elements=tuple(elements or ()),
            properties=properties or {},
            or_replace=or_replace is not None,
            if_not_exists=if_not_exists is not None,
            is_source=is_source is not None,
            **self._located(meta),
        )

    def create_as(self, meta: Any, create, or_replace, kind, if_not_exists, name, properties, as_, query):
        return ast.CreateAsSelect(
            kind=kind,
            name=name,
            query=query,
            properties=properties or {},
            or_replace=or_replace is not None,
            if_not_exists=if_not_exists is not None,
            **self._located(meta),
        )

    def insert_into(self, meta: Any, insert, into, target, properties, query):
        self._check_target(meta, target)
        return ast.InsertInto(target=target, query=query, properties=properties or {}, **self._located(meta))

    def insert_values(self, meta: Any, insert, into, target, columns, values, *exprs):
        self._check_target(meta, target)
        given = tuple(e for e in exprs if e is not None)
        # ksqlDB's InsertValues constructor refuses these as the statement is prepared
        problem = None
        if not given:
            problem = "Expected some values for INSERT INTO statement."
        elif columns and len(columns) != len(given):
            problem = f"Expected number columns and values to match: {len(columns)}, {len(given)}"
        if problem is not None:
            prefix = type_rules.PREPARE_PREFIX
            raise type_rules.PrepareError(prefix + problem, detail=problem, line=meta.line, column=meta.column)
        return ast.InsertValues(target=target, columns=tuple(columns or ()), values=given, **self._located(meta))

    def drop_source(self, meta: Any, drop, kind, if_exists, name, delete_topic):
        self._check_target(meta, name)
        return ast.DropSource(
            kind=kind,
            name=name,
            if_exists=if_exists is not None,
            delete_topic=delete_topic is not None,
            **self._located(meta),
        )

    def _check_target(self, meta: Any, name: str) -> None:
        """A statement's target name, checked as ksqlDB's ``ParserUtil.getSourceName`` checks it."""
        written = _BEFORE_TARGET.match(self._text, meta.start_pos)
        start = written.end() if written else meta.start_pos
        check_relation_names([name], self._text, start, start)

    def create_type(self, meta: Any, create, type_kw, if_not_exists, name, as_, type_):
        # a second CREATE TYPE of a name is the planner's error; the first type stays
        self._custom_types.setdefault(name.upper(), type_)
        return ast.RegisterType(name=name, type=type_, if_not_exists=if_not_exists is not None, **self._located(meta))

    def drop_type(self, meta: Any, drop, type_kw, if_exists, name):
        self._custom_types.pop(name.upper(), None)
        return ast.DropType(name=name, if_exists=if_exists is not None, **self._located(meta))

    def alter_source(self, meta: Any, alter, kind, name, *options):
        self._check_target(meta, name)
        return ast.AlterSource(kind=kind, name=name, columns=tuple(options), **self._located(meta))

    def alter_option(self, meta: Any, add, column, name, type_):
        return ast.TableElement(name=type_rules.column_name(name, meta), type=type_, pos=pos_of(meta))

    def assert_values(self, meta: Any, assert_, values_, source, columns, values, *exprs):
        return ast.AssertValues(
            source=source,
            columns=tuple(columns or ()),
            values=tuple(e for e in exprs if e is not None),
            **self._located(meta),
        )

    def assert_tombstone(self, meta: Any, assert_, null, values_, source, columns, key, *exprs):
        return ast.AssertTombstone(
            source=source,
            columns=tuple(columns or ()),
            key=tuple(e for e in exprs if e is not None),
            **self._located(meta),
        )

    def assert_source(self, meta: Any, assert_, kind, name, elements, properties):
        return ast.AssertSource(
            kind=kind, name=name, elements=tuple(elements or ()), properties=properties or {}, **self._located(meta)
        )

    def run_script(self, meta: Any, run, script, path):
        return ast.RunScript(path=string_of(path), **self._located(meta))

    def set_property(self, meta: Any, set_, name, eq, value):
        return ast.SetProperty(name=string_of(name), value=string_of(value), **self._located(meta))

    def unset_property(self, meta: Any, unset, name):
        return ast.UnsetProperty(name=string_of(name), **self._located(meta))

    def source_kind(self, meta: Any, token: Token) -> str:
        return str(token).upper()

    def or_replace(self, meta: Any, *tokens: Token) -> bool:
        return True

    def if_not_exists(self, meta: Any, *tokens: Token) -> bool:
        return True

    def if_exists(self, meta: Any, *tokens: Token) -> bool:
        return True

    def delete_topic(self, meta: Any, *tokens: Token) -> bool:
        return True

    @v_args(meta=True, inline=False)
    def column_list(self, meta: Any, names: list[str]) -> tuple[str, ...]:
        return tuple(type_rules.column_name(name, meta) for name in names)

    @v_args(meta=True, inline=False)
    def table_elements(self, meta: Any, elements: list[ast.TableElement]) -> list[ast.TableElement]:
        return elements

    def table_element(self, meta: Any, name: str, type_: t.SqlType, constraint: Any) -> ast.TableElement:
        (kind, header_key), name = constraint or (None, None), type_rules.column_name(name, meta)
        return ast.TableElement(name=name, type=type_, constraint=kind, header_key=header_key, pos=pos_of(meta))

    schema_element = table_element

    @v_args(meta=True, inline=False)
    def schema(self, meta: Any, elements: list[Any]) -> list[ast.TableElement]:
        return [e for e in elements if e is not None]

    def key_constraint(self, meta: Any, key: Token) -> tuple[str, None]:
        return ("KEY", None)

    def primary_key_constraint(self, meta: Any, primary: Token, key: Token) -> tuple[str, None]:
        return ("PRIMARY KEY", None)

    def headers_constraint(self, meta: Any, headers: Token) -> tuple[str, None]:
        return ("HEADERS", None)

    def header_constraint(self, meta: Any, header: Token, key: Token) -> tuple[str, str]:
        return ("HEADER", string_of(key))

    @v_args(meta=True, inline=False)
    def with_properties(self, meta: Any, children: list[Any]) -> dict[str, object]:
        properties: dict[str, object] = {}
        written: dict[str, str] = {}
        for name, value, text in children[1:]:
            if name in written:  # ksqlDB collects them in an ImmutableMap, which refuses a key twice
                problem = f"Multiple entries with same key: {name}={written[name]} and {name}={text}"
                prefix = type_rules.PREPARE_PREFIX
                raise type_rules.PrepareError(prefix + problem, detail=problem, line=meta.line, column=meta.column)
            properties[name], written[name] = value, text
        return properties

    def negative_number(self, meta: Any, minus: Token, number: Token) -> ast.Expr:
        literal = {"INTEGER_VALUE": self.integer_literal, "DECIMAL_VALUE": self.decimal_literal}.get(
            number.type, self.double_literal
        )(meta, number)
        return self.negate(meta, minus, literal)

    def property(self, meta: Any, name: Any, eq: Token, value: ast.Expr) -> tuple[str, object, str]:
        key = string_of(name).upper() if isinstance(name, Token) else name.upper()
        return key, property_value(value), format_expr(value)

    # ------------------------------------------------------------------ queries

    @v_args(meta=True, inline=False)
    def query(self, meta: Any, children: list[Any]) -> ast.Query:
        items: list[ast.SelectItem] = []
        clauses: dict[str, Any] = {}
        relation = None
        for child in children:
            if isinstance(child, ast.SelectItem):
                items.append(child)
            elif isinstance(child, ast.Relation):
                relation = child
            elif isinstance(child, tuple) and len(child) == 2 and isinstance(child[0], str):
                clauses[child[0]] = child[1]
        assert relation is not None
        return ast.Query(select=tuple(items), from_=relation, pos=pos_of(meta), **clauses)

    def select_single(self, meta: Any, expr: ast.Expr, *alias: Any) -> ast.SingleColumn:
        name = next((a for a in alias if isinstance(a, str) and not isinstance(a, Token)), None)
        return ast.SingleColumn(expr=expr, alias=name and type_rules.column_name(name, meta), pos=pos_of(meta))

    def select_struct_all(self, meta: Any, base: ast.Expr, arrow: Token, star: Token) -> ast.StructAll:
        return ast.StructAll(base=base, pos=pos_of(meta))

    def select_all_from(self, meta: Any, source: str, star: Token) -> ast.AllColumns:
        return ast.AllColumns(source=source, pos=pos_of(meta))

    def select_all(self, meta: Any, star: Token) -> ast.AllColumns:
        return ast.AllColumns(pos=pos_of(meta))

    @v_args(meta=True, inline=False)
    def relation(self, meta: Any, children: list[Any]) -> ast.Relation:
        relation: ast.Relation = children[0]
        for kind, right, within, on in children[1:]:
            relation = ast.Join(kind=kind, left=relation, right=right, on=on, within=within, pos=right.pos)
        return relation

    @v_args(meta=True, inline=False)
    def aliased_relation(self, meta: Any, children: list[Any]) -> ast.Table:
        names = [c for c in children if not isinstance(c, Token)]
        check_relation_names(names, self._text, meta.start_pos, meta.end_pos)
        return ast.Table(name=names[0], alias=names[1] if len(names) > 1 else None, pos=pos_of(meta))

    def joined_source(self, meta: Any, kind, join, right, within, on, condition):
        return (kind or "INNER", right, within, condition)

    def inner_join(self, meta: Any, *tokens: Token) -> str:
        return "INNER"

    def left_join(self, meta: Any, *tokens: Token) -> str:
        return "LEFT"

    def right_join(self, meta: Any, *tokens: Token) -> str:
        return "RIGHT"

    def full_join(self, meta: Any, *tokens: Token) -> str:
        return "FULL"

    def within_single(self, meta: Any, within: Token, size: int, grace: Any) -> ast.WithinWindow:
        return ast.WithinWindow(before_ms=size, after_ms=size, grace_ms=grace_ms(grace), pos=pos_of(meta))

    def within_before_after(self, meta: Any, within, before, after, grace):
        return ast.WithinWindow(before_ms=before, after_ms=after, grace_ms=grace_ms(grace), pos=pos_of(meta))

    def window_clause(self, meta: Any, window: Token, name: Token | None, spec: ast.WindowSpec) -> tuple[str, Any]:
        return ("window", spec)

    def tumbling(self, meta: Any, kw, size_kw, size, *rest):
        return ast.WindowSpec(kind="TUMBLING", size_ms=size, pos=pos_of(meta), **window_options(rest))

    def hopping(self, meta: Any, kw, size_kw, size, advance_kw, by, advance, *rest):
        options = window_options(rest)
        return ast.WindowSpec(kind="HOPPING", size_ms=size, advance_ms=advance, pos=pos_of(meta), **options)

    def session(self, meta: Any, kw, size, *rest):
        return ast.WindowSpec(kind="SESSION", size_ms=size, pos=pos_of(meta), **window_options(rest))

    def retention(self, meta: Any, kw: Token, ms: int) -> tuple[str, int]:
        return ("retention_ms", ms)

    def grace(self, meta: Any, grace: Token, period: Token, ms: int) -> tuple[str, int] | int:
        return ("grace_ms", ms)

    def duration(self, meta: Any, minus: Token | None, amount: Token, unit: str) -> int:
        return Duration(duration_amount(minus, amount, int_of), unit)

    def time_unit(self, meta: Any, token: Token) -> str:
        return str(token).upper().rstrip("S")

    def where_clause(self, meta: Any, where: Token, expr: ast.Expr) -> tuple[str, Any]:
        return ("where", expr)

    def group_by(self, meta: Any, group: Token, by: Token, exprs: tuple[ast.Expr, ...]):
        return ("group_by", check_grouping("GROUP BY", exprs, meta))

    def partition_by(self, meta: Any, partition: Token, by: Token, exprs: tuple[ast.Expr, ...]):
        return ("partition_by", check_grouping("PARTITION BY", exprs, meta))

    @v_args(meta=True, inline=False)
    def grouping(self, meta: Any, exprs: list[ast.Expr]) -> tuple[ast.Expr, ...]:
        return tuple(exprs)

    def empty_grouping(self, meta: Any) -> tuple[ast.Expr, ...]:
        return ()

    def having(self, meta: Any, having: Token, expr: ast.Expr) -> tuple[str, Any]:
        return ("having", expr)

    def emit(self, meta: Any, emit: Token, kind: Token) -> tuple[str, Any]:
        return ("emit", str(kind).upper())

    def limit(self, meta: Any, limit: Token, *number: Token | None) -> tuple[str, Any]:
        return ("limit", whole_number(tuple(n for n in number if n is not None), "LIMIT", meta))

    # ------------------------------------------------------------------ expressions

    def or_(self, meta: Any, left, op, right):
        return ast.Or(left=left, right=right, pos=pos_of(meta))

    def and_(self, meta: Any, left, op, right):
        return ast.And(left=left, right=right, pos=pos_of(meta))

    def not_(self, meta: Any, op, operand):
        return ast.Not(operand=operand, pos=pos_of(meta))

    def comparison(self, meta: Any, left, op, right):
        return ast.Comparison(op=op, left=left, right=right, pos=pos_of(meta))

    def comparison_op(self, meta: Any, token: Token) -> str:
        return "<>" if str(token) == "!=" else str(token)

    def between(self, meta: Any, value, *rest):
        negated = rest[0] is not None
        low, high = rest[2], rest[4]
        return ast.Between(value=value, low=low, high=high, negated=negated, pos=pos_of(meta))

    def in_list(self, meta: Any, value, not_, in_, *items):
        return ast.InList(value=value, items=tuple(items), negated=not_ is not None, pos=pos_of(meta))

    def like(self, meta: Any, value, not_, like, pattern, escape_kw, escape):
        if escape is not None:
            check_escape(string_of(escape), token_pos(escape))
        return ast.Like(
            value=value,
            pattern=pattern,
            escape=string_of(escape) if escape is not None else None,
            negated=not_ is not None,
            pos=pos_of(meta),
        )

    def is_null(self, meta: Any, operand, is_, not_, null):
        return ast.IsNull(operand=operand, negated=not_ is not None, pos=pos_of(meta))

    def distinct_from(self, meta: Any, left, is_, not_, distinct, from_, right):
        return ast.DistinctFrom(left=left, right=right, negated=not_ is not None, pos=pos_of(meta))

    def concat(self, meta: Any, left, right):
        return ast.Concat(left=left, right=right, pos=pos_of(meta))

    def arithmetic(self, meta: Any, left, op, right):
        return ast.Arithmetic(op=str(op), left=left, right=right, pos=pos_of(meta))

    def negate(self, meta: Any, minus: Token, operand: ast.Expr) -> ast.Expr:
        # ksqlDB reads "-5" as one literal, so BIGINT's minimum is a valid literal; "-(5)" is a
        # minus applied to the number, which keeps the number's own type and range.
        touching = self._text[minus.end_pos : meta.end_pos].lstrip()[:1]
        if not (touching.isdigit() or touching == "."):
            return ast.Negate(operand=operand, pos=pos_of(meta))
        if isinstance(operand, ast.IntegerLiteral):
            return replace(operand, value=-operand.value, pos=pos_of(meta))
        if isinstance(operand, ast.DecimalLiteral | ast.DoubleLiteral) and not operand.text.startswith("-"):
            return replace(operand, text="-" + operand.text, pos=pos_of(meta))
        return ast.Negate(operand=operand, pos=pos_of(meta))

    def unary_plus(self, meta: Any, plus: Token, operand: ast.Expr) -> ast.Expr:
        return ast.UnaryPlus(operand=operand, pos=pos_of(meta))

    def simple_case(self, meta: Any, case, operand, *rest):
        whens, default = case_parts(rest)
        return ast.SimpleCase(operand=operand, whens=whens, default=default, pos=pos_of(meta))

    def searched_case(self, meta: Any, case, *rest):
        whens, default = case_parts(rest)
        return ast.SearchedCase(whens=whens, default=default, pos=pos_of(meta))

    def when_clause(self, meta: Any, when, condition, then, result):
        return ast.WhenClause(condition=condition, result=result, pos=pos_of(meta))

    def cast(self, meta: Any, cast, operand, as_, type_):
        return ast.Cast(operand=operand, type=type_, pos=pos_of(meta))

    def create_array(self, meta: Any, array, *items):
        return ast.CreateArray(items=tuple(i for i in items if i is not None), pos=pos_of(meta))

    def create_map(self, meta: Any, map_, *entries):
        return ast.CreateMap(entries=check_map_keys(tuple(e for e in entries if e), meta), pos=pos_of(meta))

    def map_entry(self, meta: Any, key, value):
        return (key, value)

    def create_struct(self, meta: Any, struct, *entries):
        return ast.CreateStruct(fields=tuple(e for e in entries if e is not None), pos=pos_of(meta))

    def struct_entry(self, meta: Any, name, value):
        return (name, value)

    def type_constructor(self, meta: Any, name: str, value: Token) -> ast.Expr:
        return type_constructor(name, self._written(meta, name), string_of(value), ast.Pos(meta.line, meta.column))

    def function_star(self, meta: Any, name: str, star: Token) -> ast.FunctionCall:
        return ast.FunctionCall(name=name.upper(), star=True, spelling=self._written(meta, name), pos=pos_of(meta))

    def function_call(self, meta: Any, name: str, *args: Any) -> ast.FunctionCall:
        given = [a for a in args if a is not None]
        values = tuple(
            function_argument(a) if i == 0 and name.upper() in TIME_UNIT_FUNCTIONS else a for i, a in enumerate(given)
        )
        return ast.FunctionCall(name=name.upper(), args=values, spelling=self._written(meta, name), pos=pos_of(meta))

    def _written(self, meta: Any, name: str) -> str:
        """A function's name exactly as the statement spells it, quotes included."""
        if getattr(meta, "empty", True):
            return ""
        match = _NAME_TEXT.match(self._text, meta.start_pos)
        return match.group(0) if match else ""

    def lambda_(self, meta: Any, *parts: Any) -> ast.Lambda:
        params = tuple(p for p in parts[:-1] if isinstance(p, str) and not isinstance(p, Token))
        if len(set(params)) < len(params):  # ksqlDB's LambdaFunctionCall refuses them as it is built
            problem = f"Lambda arguments have duplicates: [{', '.join(params)}]"
            prefix = type_rules.PREPARE_PREFIX
            raise type_rules.PrepareError(prefix + problem, detail=problem, line=meta.line, column=meta.column)
        return ast.Lambda(params=params, body=parts[-1], pos=pos_of(meta))

    def lambda_parenthesised(self, meta: Any, param: ast.Expr, body: ast.Expr) -> ast.Lambda:
        # ``(x) => body``: the grammar reads ``(x)`` as an expression, to tell it from ``(x) + 1``.
        if not isinstance(param, ast.ColumnRef) or param.source is not None:
            pos = param.pos or pos_of(meta)
            line, column = (pos.line, pos.column) if pos else (0, 0)
            msg = f"line {line}:{column}: Syntax Error\nA lambda parameter must be a name, not {format_expr(param)}"
            raise SqlSyntaxError(msg, line=line, column=column)
        return ast.Lambda(params=(param.name,), body=body, pos=pos_of(meta))

    def subscript(self, meta: Any, base, index):
        return ast.Subscript(base=base, index=index, pos=pos_of(meta))

    def column_ref(self, meta: Any, name: str) -> ast.ColumnRef:
        return ast.ColumnRef(name=type_rules.column_name(name, meta), pos=pos_of(meta))

    def qualified_column_ref(self, meta: Any, source: str, name: str) -> ast.ColumnRef:
        return ast.ColumnRef(name=type_rules.column_name(name, meta), source=source, pos=pos_of(meta))

    def dereference(self, meta: Any, base, arrow, field):
        return ast.Dereference(base=base, field=field, pos=pos_of(meta))
