"""Parse the dialect into :mod:`qtt.sql.ast` nodes with lark's LALR parser.

The grammar lives in ``grammar.lark`` and :mod:`qtt.sql.ast_builder` turns lark's tree into
AST nodes; this module holds the entry points and turns lark's errors into
:class:`~qtt.errors.SqlSyntaxError` with a line and column.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from functools import cache
from importlib import resources
from typing import Any

import lark
from lark.parsers.lalr_analysis import Reduce

from qtt import sqltypes as t
from qtt.errors import SqlSyntaxError
from qtt.sql import ast
from qtt.sql.ast_builder import AstBuilder
from qtt.sql.formatter import KSQL_RESERVED_WORDS
from qtt.sql.source_refs import check_qualifiers
from qtt.sql.syntax_errors import (
    KSQL_COMMANDS,
    antlr_name,
    create_with_prediction,
    expectations,
    first_token,
    ksql_message,
    missing_message,
    no_viable_message,
    readable_expecting,
    reserved_message,
    select_item_prediction,
    snippet,
    statement_at,
    statement_start,
    unknown_statement_message,
)

_PUNCTUATION = {
    "LPAR": "(",
    "RPAR": ")",
    "COMMA": ",",
    "SEMICOLON": ";",
    "DOT": ".",
    "LSQB": "[",
    "RSQB": "]",
    "COLON": ":",
}


@cache
def _parser() -> lark.Lark:
    grammar = resources.files("qtt.sql").joinpath("grammar.lark").read_text(encoding="utf-8")
    return lark.Lark(
        grammar,
        parser="lalr",
        start=["statements", "type", "expression", "schema", "window_clause"],
        propagate_positions=True,
        maybe_placeholders=True,
        lexer_callbacks={"IDENTIFIER": _keyword},
    )


#: The keywords that are never names, as in ksqlDB (which reserves these and more): the words
#: that begin or join a statement, a clause or an expression, where a stray one is a mistake to
#: be reported where it stands. The other keywords ksqlDB reserves stay names where no keyword
#: is expected, as qtt has always read them: time units (``DATEADD(DAYS, 1, d)``), window words
#: (a column ``SIZE``), ``BY`` (a column ``BY``), literals (a type named ``NULL`` gets ksqlDB's
#: "Syntax error at or near" message from the AST builder).
RESERVED_WORDS = frozenset(
    {"SELECT", "FROM", "WHERE", "GROUP", "HAVING", "WINDOW", "LIMIT", "AS", "DISTINCT", "WITH", "WITHIN"}
    | {"AND", "OR", "NOT", "IS", "IN", "LIKE", "BETWEEN", "EXISTS", "CASE", "WHEN", "THEN", "ELSE", "END", "CAST"}
    | {"JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "ON"}
    | {"CREATE", "INSERT", "INTO", "VALUES", "DROP", "DELETE", "UNSET", "TABLE", "STREAM"}
)


@cache
def _reserved() -> dict[str, str]:
    """Reserved word -> its terminal in the grammar."""
    terminals = {t.pattern.value.upper(): t.name for t in _parser().terminals if t.pattern.type == "str"}
    return {word: terminals[word] for word in RESERVED_WORDS}


_NONRESERVED_RULES = ("nonreserved", "clause_free_nonreserved")

#: Non-reserved keywords that start an expression of their own (a constructor), not only a name.
_CONSTRUCTORS = frozenset(["ARRAY", "MAP", "STRUCT"])


@cache
def _clause_free_nonreserved() -> frozenset[str]:
    """The non-reserved keywords a readable "expecting" set counts as names (``IDENTIFIER``)."""
    rules = _parser().rules
    names = {s.name for r in rules if r.origin.name == "clause_free_nonreserved" for s in r.expansion}
    return frozenset(names - _CONSTRUCTORS)


def _keyword(token: lark.Token) -> lark.Token:
    """A reserved keyword is never a name, as in ksqlDB's lexer.

    lark's contextual lexer only tries the terminals the parser accepts next, so where a keyword
    cannot come it reads the word as an ``IDENTIFIER``: ``WHERE a AND AND b`` would parse the
    second ``AND`` as a column and fail later, at ``b``. Typed as its keyword, it fails where
    it stands.
    """
    name = _reserved().get(token.value.upper())
    return token if name is None else lark.Token.new_borrow_pos(name, token.value, token)


def parse_statements(text: str) -> list[ast.Statement]:
    """Parse a script of ``;``-terminated statements.

    Raises:
        SqlSyntaxError: with the line and column of the first token that does not fit.
    """
    tree = _parse(text, "statements")
    statements = _transform(AstBuilder(text), tree)
    try:
        for statement in statements:
            _check_literals(statement)
            if isinstance(statement, ast.CreateAsSelect | ast.InsertInto):
                check_qualifiers(statement.query, iter_nodes)
    except SqlSyntaxError as error:
        raise _with_snippet(error, text) from None
    return statements


def parse_type(text: str) -> t.SqlType:
    """Parse a type in ksqlDB's syntax, such as ``ARRAY<STRUCT<`A` INT>>``."""
    return _transform(AstBuilder(text), _parse(text, "type"))


def parse_expression(text: str) -> ast.Expr:
    """Parse a single expression."""
    expr = _transform(AstBuilder(text), _parse(text, "expression"))
    try:
        _check_literals(expr)
    except SqlSyntaxError as error:
        raise _with_snippet(error, text) from None
    return expr


def parse_window(text: str) -> ast.WindowSpec:
    """Parse a window as ksqlDB's plans print it: ``" TUMBLING ( SIZE 1 HOURS ) "``."""
    clause = f"WINDOW {text}"
    _, spec = _transform(AstBuilder(clause), _parse(clause, "window_clause"))
    return spec


def parse_schema(text: str) -> tuple[ast.TableElement, ...]:
    """Parse a column list as ksqlDB prints it: ``"`K` STRING KEY, `V` INTEGER"``."""
    return tuple(_transform(AstBuilder(text), _parse(text, "schema")))


#: The deepest nesting of an expression (operators, calls, parentheses) that qtt plans. Each
#: ``OR``/``AND``/``||``/``+`` term of a chain and each nested call or bracket is one level.
MAX_EXPRESSION_DEPTH = 1_000


def grammar_forms() -> frozenset[str]:
    """Every form of the grammar a parse tree can show: each named rule and each alternative's
    alias (``simple_case``, ``select_struct_all``); not the rules lark inlines, which only pass
    one child on (:mod:`qtt.harness.upkeep.syntax_coverage` asks which forms no case writes)."""
    return frozenset(
        _name(rule.alias or rule.origin.name)
        for rule in _parser().rules
        if rule.alias is not None or not (rule.options.expand1 or _name(rule.origin.name).startswith("_"))
    )


def forms_in(text: str) -> set[str]:
    """The forms of the grammar (:func:`grammar_forms`) that a script's parse tree uses."""
    return {_name(tree.data) for tree in _parse(text, "statements").iter_subtrees()}


def _name(symbol: str | lark.Token) -> str:
    return symbol if isinstance(symbol, str) else symbol.value


def _parse(text: str, start: str) -> lark.Tree:
    try:
        tree = _parser().parse(text, start=start)
    except lark.UnexpectedInput as e:
        raise _syntax_error(e, text, start) from None
    _check_depth(tree)
    return tree


def _check_depth(tree: lark.Tree) -> None:
    """Reject a parse tree nested deeper than :data:`MAX_EXPRESSION_DEPTH` (an iterative walk).

    The analyzer, formatter and compiler recurse over expressions; this bound keeps them inside
    the stack that :func:`qtt.plan.ir.depth.deep_call` gives them.
    """
    # A statement's own rules (query, select item, clause) add a few levels above its expressions.
    limit = MAX_EXPRESSION_DEPTH + 16
    stack: list[tuple[lark.Tree, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            meta = node.meta
            line, column = (None, None) if meta.empty else (meta.line, meta.column)
            message = (
                f"the expression nests deeper than {MAX_EXPRESSION_DEPTH:,} levels, the limit "
                f"(each OR, AND, || or arithmetic term of a chain and each nested call counts one level)"
            )
            hint = "split the expression, for example with IN (...) or a CASE, or plan it in steps"
            raise SqlSyntaxError(message, line=line, column=column, hint=hint)
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, lark.Tree))


def _transform(builder: AstBuilder, tree: lark.Tree) -> Any:
    # lark wraps exceptions raised in callbacks; ours carry their own position.
    try:
        return builder.transform(tree)
    except lark.exceptions.VisitError as e:
        if isinstance(e.orig_exc, SqlSyntaxError):
            raise _with_snippet(e.orig_exc, builder.text) from None
        raise


def _with_snippet(error: SqlSyntaxError, text: str) -> SqlSyntaxError:
    """Give an error raised after parsing (by the AST builder, or a literal check) its snippet."""
    if error.snippet is None and error.line and error.column:
        error.snippet = snippet(text, error.line, error.column)
    return error


def _syntax_error(e: lark.UnexpectedInput, text: str, start: str = "statements") -> SqlSyntaxError:
    if start == "statements" and (unknown := _unknown_statement(e, text)) is not None:
        return unknown
    error = _mismatch(e, text, start)
    offset = _error_offset(e, text)
    predicted = select_item_prediction(text, offset) or create_with_prediction(text, offset)
    if start == "statements" and error.line and error.column and predicted:
        if isinstance(e, lark.UnexpectedToken):
            near = "<EOF>" if e.token.type == "$END" else str(e.token)
        else:
            near = text[offset : offset + 1]
        error.message = no_viable_message(error.line, error.column, near, statement_at(text, offset))
    return error


def _error_offset(e: lark.UnexpectedInput, text: str) -> int:
    """Where in ``text`` the parser stopped."""
    if isinstance(e, lark.UnexpectedToken):
        return len(text) if e.token.type == "$END" or e.token.start_pos is None else e.token.start_pos
    return e.pos_in_stream or 0


def _mismatch(e: lark.UnexpectedInput, text: str, start: str) -> SqlSyntaxError:
    line, column = e.line, e.column
    width = 1
    if isinstance(e, lark.UnexpectedToken) and _names_only(e) and _extraneous_reserved(e.token, text, start):
        near = str(e.token)
        message = reserved_message(line, column, near, statement_at(text, e.token.start_pos or 0))
        detail = f"Syntax Error: unexpected {near!r}, a reserved keyword (a name spelled so is written `{near}`)"
        shown = snippet(text, line, column, len(near))
        return SqlSyntaxError(message, line=line, column=column, detail=detail, snippet=shown)
    if isinstance(e, lark.UnexpectedToken):
        at_end = e.token.type == "$END"
        near = "<EOF>" if at_end else str(e.token)
        offset = len(text) if at_end or e.token.start_pos is None else e.token.start_pos
        if at_end:
            line, column = _end_position(text)
        else:
            width = len(near.split("\n", 1)[0])
        terminals = _past_optional_parts(e, _acceptable(e))
        missing = _missing_token(e, terminals)
        seen = "end of input" if at_end else f"{near!r}"
    elif isinstance(e, lark.UnexpectedCharacters):
        offset = e.pos_in_stream or 0
        near = text[offset] if offset < len(text) else "<EOF>"
        terminals = set(e.allowed or ())
        seen = f"character {near!r}"
    else:  # pragma: no cover - lark has no other kinds of UnexpectedInput for LALR
        near, offset, terminals, seen = "?", 0, set(), "?"
    shown = snippet(text, line, column, width)
    if isinstance(e, lark.UnexpectedToken) and missing is not None:
        message = missing_message(line, column, _antlr_name(missing), statement_at(text, offset), near)
        detail = f"Syntax Error: missing {_antlr_name(missing)} before {seen}"
        return SqlSyntaxError(message, line=line, column=column, detail=detail, snippet=shown)
    names = [_antlr_name(name) for name in terminals]
    expected = expectations(names, near) if terminals else None
    message = ksql_message(line, column, expected, statement_at(text, offset), near)
    detail = f"Syntax Error: unexpected {seen}"
    # a character no token starts with is the mistake itself: the long list of every token the
    # lexer could have read there would not help
    if terminals and isinstance(e, lark.UnexpectedToken):
        nonreserved = (_antlr_name(name) for name in _clause_free_nonreserved())
        detail += f"; expecting {readable_expecting(names, nonreserved)}"
    return SqlSyntaxError(message, line=line, column=column, detail=detail, snippet=shown)


def _unknown_statement(e: lark.UnexpectedInput, text: str) -> SqlSyntaxError | None:
    """ksqlDB's error when the failing statement's first word begins no statement: ANTLR stops
    at that word (lark may not, having read a keyword it begins with: ``INSERTT``). A reserved
    keyword there, ANTLR's extraneous input (after another statement, or before a statement's
    first word), gets ksqlDB's reserved keyword message instead. ``RUN`` (``RUN SCRIPT`` of
    ksqlDB's SQL tests) is left to the grammar."""
    offset = _error_offset(e, text)
    begin = statement_start(text, offset)
    found = first_token(text, begin)
    if found is None or found[0] > offset or found[1].upper() == "RUN":
        return None
    at, word = found
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    statement = statement_at(text, at)
    shown = snippet(text, line, column, len(word))
    if word.upper() in KSQL_COMMANDS:
        unsupported = word.upper() if at == offset else _connector_statement(text, at, offset)
        if unsupported is None:
            return None
        # ksqlDB parses it (SHOW, DESCRIBE, a bare SELECT, ...); qtt's grammar has no such statement
        detail = f"Syntax Error: qtt does not support {unsupported} statements"
        message = f"line {line}:{column}: {detail}\nStatement: {statement}"
        return SqlSyntaxError(message, line=line, column=column, detail=detail, snippet=shown)
    after = first_token(text, at + len(word))
    extraneous = begin > 0 or after is None or after[1].upper() in KSQL_COMMANDS
    if extraneous and word.upper() in KSQL_RESERVED_WORDS:
        detail = f"Syntax Error: unexpected {word!r}, a reserved keyword, where a statement begins"
        message = reserved_message(line, column, word, statement)
        return SqlSyntaxError(message, line=line, column=column, detail=detail, snippet=shown)
    detail = f"Syntax Error: unknown statement {word!r}; a statement begins with one of {', '.join(KSQL_COMMANDS)}"
    message = unknown_statement_message(line, column, word, statement)
    return SqlSyntaxError(message, line=line, column=column, detail=detail, snippet=shown)


_CONNECTOR_STATEMENTS = (("CREATE", "SOURCE", "CONNECTOR"), ("CREATE", "SINK", "CONNECTOR"), ("DROP", "CONNECTOR"))


def _connector_statement(text: str, at: int, offset: int) -> str | None:
    """``CONNECTOR`` when the statement at ``at`` is ksqlDB's ``CREATE SOURCE|SINK CONNECTOR`` or
    ``DROP CONNECTOR`` and the parser stopped inside those words, else None."""
    tokens: list[tuple[int, str]] = []
    position = at
    while len(tokens) < 3 and (token := first_token(text, position)) is not None:
        tokens.append(token)
        position = token[0] + len(token[1])
    words = tuple(word.upper() for _, word in tokens)
    for shape in _CONNECTOR_STATEMENTS:
        if words[: len(shape)] == shape and offset in (start for start, _ in tokens[1 : len(shape)]):
            return "CONNECTOR"
    return None


_NAME_TERMINALS = frozenset(["IDENTIFIER", "QUOTED_IDENTIFIER", "BACKQUOTED_IDENTIFIER", "DIGIT_IDENTIFIER"])


def _names_only(e: lark.UnexpectedToken) -> bool:
    """Whether only a name can stand where ``e`` failed (a column's or an alias's name)."""
    rules = _parser().rules
    nonreserved = {x.name for r in rules if r.origin.name in _NONRESERVED_RULES for x in r.expansion}
    terminals = _acceptable(e)
    return bool(terminals) and terminals <= _NAME_TERMINALS | nonreserved


def _extraneous_reserved(token: lark.Token, text: str, start: str) -> bool:
    """Whether ANTLR would report ``token`` as extraneous input, a reserved keyword in the way:
    one of ksqlDB's reserved words (never a name) after which the parser could go on as if it
    were not there (ANTLR tries deleting the token before anything else)."""
    if token.start_pos is None or token.end_pos is None or token.type not in _reserved().values():
        return False
    if token.value.upper() not in KSQL_RESERVED_WORDS:
        return False
    blanked = text[: token.start_pos] + " " * (token.end_pos - token.start_pos) + text[token.end_pos :]
    after = len(blanked) - len(blanked[token.end_pos :].lstrip())
    try:
        _parser().parse(blanked, start=start)
    except lark.UnexpectedInput as again:
        failed_at = len(blanked) if isinstance(again, lark.UnexpectedEOF) else again.pos_in_stream
        return failed_at is not None and failed_at > after
    return True


def _acceptable(e: lark.UnexpectedToken) -> set[str]:
    """What the parser can really shift here: LALR's lookahead set, less merged-state noise."""
    parser = e.interactive_parser
    if parser is None:
        return set(e.expected)
    try:
        return set(parser.accepts()) or set(e.expected)
    except lark.LarkError:  # pragma: no cover - accepts() replays the parser on a copy
        return set(e.expected)


def _past_optional_parts(e: lark.UnexpectedToken, terminals: set[str]) -> set[str]:
    """What ANTLR expects here: the tokens after every construct that could end here.

    Where the parser could finish what it is reading (a type, a column definition), ANTLR's
    prediction skips what could still follow it (an optional ``KEY``, another ``+ term``) and
    stops at the first place that needs a token, so it reports only the tokens that close the
    construct (``Expecting {',', ')'}``). This follows LALR's reductions to that place.
    """
    parser = e.interactive_parser
    if parser is None:
        return terminals
    states = parser.parser_state.parse_conf.states
    stack = list(parser.parser_state.state_stack)
    candidates = set(terminals)
    while True:
        actions = states[stack[-1]]
        reducing = {name for name in candidates if name in actions and actions[name][0] is Reduce}
        rules = {actions[name][1] for name in reducing}
        if not reducing or len(rules) != 1:
            return candidates
        (rule,) = rules
        if len(rule.expansion):
            del stack[-len(rule.expansion) :]
        stack.append(states[stack[-1]][rule.origin.name][1])
        candidates = reducing


def _missing_token(e: lark.UnexpectedToken, terminals: set[str]) -> str | None:
    """The one token whose insertion would let the parser take ``e.token`` (ANTLR's "missing X")."""
    parser = e.interactive_parser
    if parser is None:
        return None
    fits = []
    # As lark's accepts(): a shallow copy without tree-building callbacks. A deep copy of the
    # value stack recurses through every tree parsed so far, too deep for a long statement.
    quiet = copy.copy(parser.parser_state.parse_conf)
    quiet.callbacks = {}
    for name in sorted(terminals - {"$END"}):
        attempt = parser.copy(deepcopy_values=False)
        attempt.parser_state.parse_conf = quiet
        try:
            attempt.feed_token(lark.Token(name, _SAMPLES.get(name, name)))
            attempt.feed_token(e.token)
        except lark.exceptions.UnexpectedInput:
            continue
        fits.append(name)
    return fits[0] if len(fits) == 1 else None


#: A value for an inserted token of a class; only the parser's shape matters here.
_SAMPLES = {"INTEGER_VALUE": "1", "DECIMAL_VALUE": "1.0", "FLOAT_VALUE": "1E0", "STRING": "''"}


def _end_position(text: str) -> tuple[int, int]:
    lines = text.rstrip().split("\n")
    return len(lines), len(lines[-1]) + 1


def _antlr_name(name: str) -> str:
    if name in _PUNCTUATION:
        return antlr_name(name, _PUNCTUATION[name])
    if name == "$END":
        return antlr_name(name, None)
    pattern = _parser().get_terminal(name).pattern
    return antlr_name(name, pattern.value if pattern.type == "str" else None)


def iter_nodes(node: object) -> Iterator[ast.Node]:
    """Yield ``node`` and every AST node below it, parents first (iteratively: any depth)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Node):
            yield item
        if is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in reversed(fields(item)) if f.name != "pos")
        elif isinstance(item, tuple | list):
            stack.extend(reversed(item))


def _check_literals(root: object) -> None:
    """Reject numeric literals that ksqlDB's parser rejects."""
    for node in iter_nodes(root):
        if isinstance(node, ast.IntegerLiteral) and not t.BIGINT_MIN <= node.value <= t.BIGINT_MAX:
            _raise_literal(f"Invalid numeric literal: {node.value}", node)
        if isinstance(node, ast.DoubleLiteral) and math.isinf(float(node.text)):
            _raise_literal(f"Number overflows DOUBLE: {node.text}", node)


def _raise_literal(message: str, node: ast.Node) -> None:
    pos = node.pos
    if pos is None:
        raise SqlSyntaxError(message)
    # ksqlDB rejects these while building its AST, which prefixes the message and counts
    # the column one further than its parser does; case files match on that text.
    ksql = f"Failed to prepare statement: line {pos.line}:{pos.column + 1}: {message}"
    raise SqlSyntaxError(ksql, line=pos.line, column=pos.column, detail=message)
