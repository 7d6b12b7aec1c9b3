"""ksqlDB's wording of a syntax error: ``line L:C: Syntax Error``, ``Expecting {...}``, ``Statement: ...``.

ksqlDB's parser is ANTLR's, which names the tokens it expected by its vocabulary: literal
tokens quoted (``'STRING'``, ``','``), token classes by name (``INTEGER_VALUE``,
``IDENTIFIER``, ``STRING`` for a string literal), in token-type order (the grammar's
implicit punctuation first, then keywords, operators and token classes). qtt names lark's
terminals the same way. The set is what qtt's grammar accepts at that point, which is
ANTLR's set when the two grammars agree there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: qtt's terminal names for ANTLR's token classes, where they differ.
_CLASS_NAMES = {"FLOAT_VALUE": "FLOATING_POINT_VALUE", "$END": "<EOF>"}

#: ksqlDB's implicit punctuation tokens in the order its grammar first uses them.
_PUNCTUATION_ORDER = (";", "(", ",", ")", ".", "[", "]", ":", ":=", "=>", "->")
_OPERATOR_ORDER = ("'='", "'<>'", "'!='", "'<'", "'<='", "'>'", "'>='", "'+'", "'-'", "'*'", "'/'", "'%'", "'||'")
_CLASS_ORDER = (
    "STRING",
    "INTEGER_VALUE",
    "DECIMAL_VALUE",
    "FLOATING_POINT_VALUE",
    "IDENTIFIER",
    "DIGIT_IDENTIFIER",
    "QUOTED_IDENTIFIER",
    "BACKQUOTED_IDENTIFIER",
    "<EOF>",
)


def antlr_name(terminal: str, literal: str | None) -> str:
    """The name ANTLR gives a token: ``literal`` quoted (upper case), else its class name."""
    if terminal == "NEQ":
        return "'<>'"
    if literal is not None:
        return f"'{literal.upper()}'"
    return _CLASS_NAMES.get(terminal, terminal)


def _order(name: str) -> tuple[int, int, str]:
    bare = name[1:-1] if name.startswith("'") and len(name) > 1 else None
    if bare in _PUNCTUATION_ORDER:
        return (0, _PUNCTUATION_ORDER.index(bare), "")
    if name in _OPERATOR_ORDER:
        return (2, _OPERATOR_ORDER.index(name), "")
    if name in _CLASS_ORDER:
        return (3, _CLASS_ORDER.index(name), "")
    return (1, 0, name)  # keywords


def expecting(names: Iterable[str]) -> str:
    """``{a, b}`` in ANTLR's order, as ksqlDB prints the expected tokens."""
    return "{" + ", ".join(sorted(set(names), key=_order)) + "}"


def statement_at(text: str, offset: int) -> str:
    """The ``;``-terminated statement of ``text`` that ``offset`` falls in (quotes respected)."""
    start = 0
    i, size = 0, len(text)
    while i < size:
        c = text[i]
        if c in "'\"`":
            close = text.find(c, i + 1)
            i = size if close < 0 else close + 1
            continue
        if c == ";":
            if i >= offset:
                return text[start : i + 1].strip()
            start = i + 1
        i += 1
    return text[start:].strip()


def statement_start(text: str, offset: int) -> int:
    """Where the ``;``-terminated statement of ``text`` that ``offset`` falls in starts."""
    start = 0
    i, size = 0, min(offset, len(text))
    while i < size:
        c = text[i]
        if c in "'\"`":
            close = text.find(c, i + 1)
            i = len(text) if close < 0 else close + 1
            continue
        if c == ";":
            start = i + 1
        i += 1
    return start


#: What ksqlDB's SyntaxErrorValidator says of any mismatch whose ANTLR message mentions EOF.
_AT_END = "Syntax error at or near \";\"\n'}', ']', or ')' is missing"


def antlr_set(names: Iterable[str]) -> str:
    """The tokens as ANTLR's ``IntervalSet.toString`` prints them: in ANTLR's order, in braces
    when there are two or more."""
    ordered = sorted(set(names), key=_order)
    return ordered[0] if len(ordered) == 1 else "{" + ", ".join(ordered) + "}"


def expectations(names: Iterable[str], near: str) -> str:
    """ksqlDB's words for ANTLR's "expecting" set (``SyntaxErrorValidator.getExpectations``): a
    mismatch at the end of the input is a missing closing bracket; a set is listed only while
    Java's ``split(",")`` cuts its text into at most three parts (a ``','`` token counts twice);
    a longer one is left out, and the message has an empty line there."""
    text = antlr_set(names)
    if "EOF" in near or "EOF" in text:
        return _AT_END
    parts = text.split(",")
    while len(parts) > 1 and not parts[-1]:  # Java's split drops trailing empty strings
        parts.pop()
    return f"Expecting {text}" if len(parts) <= 3 else ""


def ksql_message(line: int, column: int, expected: str | None, statement: str, near: str) -> str:
    """ksqlDB's message, then ANTLR's own line for it (older ksqlDB files match on that one);
    ``expected`` is what :func:`expectations` says, None for an error with no expected set."""
    parts = [f"line {line}:{column}: Syntax Error"]
    if expected is not None:
        parts.append(expected)
    parts.append(f"Statement: {statement}")
    tail = " expecting one of the tokens above" if expected is not None else ""
    parts.append(f"line {line}:{column}: mismatched input '{near}'{tail}")
    return "\n".join(parts)


def missing_message(line: int, column: int, token: str, statement: str, near: str) -> str:
    """ksqlDB's message when inserting one ``token`` would have let the parser go on."""
    return f"line {line}:{column}: Syntax Error\nmissing {token} at '{near}'\nStatement: {statement}"


def reserved_message(line: int, column: int, word: str, statement: str) -> str:
    """ksqlDB's message when a reserved keyword stands where the parser could skip it (ANTLR's
    "extraneous input"): most often a keyword used as a name, or a word left before one."""
    problem = (
        f'"{word}" is a reserved keyword and it can\'t be used as an identifier. '
        f"You can use it as an identifier by escaping it as '{word}' "
    )
    return f"line {line}:{column}: Syntax Error\n{problem}\nStatement: {statement}"


#: The statements ksqlDB's SyntaxErrorValidator knows, in its order (the first word of every
#: statement of its grammar): an error at a statement's first word is an unknown statement.
KSQL_COMMANDS = (
    *("SELECT", "CREATE", "INSERT", "DESCRIBE", "PRINT", "EXPLAIN", "SHOW", "LIST", "TERMINATE"),
    *("PAUSE", "RESUME", "DROP", "SET", "DEFINE", "UNDEFINE", "UNSET", "ASSERT", "ALTER"),
)

#: ksqlDB's first token of a statement: a name or number, a quoted text, an operator, or any one
#: other character (its lexer's UNRECOGNIZED)
_FIRST_TOKEN = re.compile(
    r"[A-Za-z_][A-Za-z0-9_@]*|[0-9][A-Za-z0-9_@.]*|'(?:[^']|'')*'?|\"(?:[^\"]|\"\")*\"?|`(?:[^`]|``)*`?"
    r"|<=|>=|<>|!=|\|\||:=|->|=>|\S"
)
_SKIPPED = re.compile(r"(?:\s+|--[\s\S][^\r\n]*|/\*[\s\S]*?\*/)*")


def first_token(text: str, start: int) -> tuple[int, str] | None:
    """The offset and text of the first token at or after ``start`` (blanks and comments
    skipped), or None at the end of ``text``."""
    at = _SKIPPED.match(text, start)
    offset = at.end() if at else start
    found = _FIRST_TOKEN.match(text, offset)
    return (offset, found.group()) if found else None


def _distance(a: str, b: str) -> int:
    """Levenshtein's edit distance, as commons-text's ``LevenshteinDetailedDistance``."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def unknown_statement_message(line: int, column: int, word: str, statement: str) -> str:
    """ksqlDB's message for a statement whose first word starts none: the closest command
    (the first of the closest, in :data:`KSQL_COMMANDS`' order) is offered."""
    target = word.upper()
    closest = min(KSQL_COMMANDS, key=lambda command: _distance(command, target))
    return (
        f"line {line}:{column}: Syntax Error\nUnknown statement '{word}'\nDid you mean '{closest}'?"
        f"\nStatement: {statement}"
    )


#: Names a user reads as one: the quoted forms of a name, and the non-reserved keywords (which
#: are names too), are left out of a readable "expecting" set that has ``IDENTIFIER``.
_NAME_FORMS = frozenset(["DIGIT_IDENTIFIER", "QUOTED_IDENTIFIER", "BACKQUOTED_IDENTIFIER"])


def readable_expecting(names: Iterable[str], nonreserved: Iterable[str]) -> str:
    """The expected tokens as :func:`expecting` names them, without the ones ``IDENTIFIER`` stands for."""
    names = set(names)
    if "IDENTIFIER" in names:
        names -= _NAME_FORMS | set(nonreserved)
    return expecting(names)


#: At most this many characters of the offending line are shown on each side of the mistake.
_SNIPPET_REACH = 60


def snippet(text: str, line: int, column: int, width: int = 1) -> str:
    """The ``line`` of ``text`` and a caret line under ``width`` characters from ``column`` (both 1-based).

    A long line is cut to the part around the mistake, marked with ``...``.
    """
    lines = text.split("\n")
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    start = max(0, column - 1 - _SNIPPET_REACH)
    end = column - 1 + max(width, 1) + _SNIPPET_REACH
    head = "..." if start > 0 else ""
    shown = head + source[start:end].rstrip() + ("..." if end < len(source.rstrip()) else "")
    offset = len(head) + column - 1 - start
    width = max(1, min(width, len(source) - (column - 1))) if column - 1 < len(source) else 1
    return f"{shown}\n{' ' * offset}{'^' * width}"


#: ksqlDB's tokens, as :func:`select_item_prediction` reads a select list: blanks and comments,
#: then one token (its lexer's longest match; any other character alone).
_TOKEN = re.compile(
    r"(?P<skip>\s+|--[\s\S][^\r\n]*|/\*[\s\S]*?\*/)"
    r"|(?P<string>'(?:[^']|'')*'?)|(?P<quoted>`(?:[^`]|``)*`?|\"(?:[^\"]|\"\")*\"?)"
    r"|(?P<number>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?(?![A-Za-z_@]))"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_@]*|[0-9][A-Za-z0-9_@]*)"
    r"|(?P<op>->|=>|<=|>=|<>|!=|\|\||:=|[\s\S])"
)
_OPENERS = {"(": ")", "[": "]", "CASE": "END"}
_LITERAL_WORDS = frozenset(["NULL", "TRUE", "FALSE"])


def _tokens(text: str, start: int) -> list[tuple[int, str, str]]:
    """``(offset, kind, text)`` of each token of ``text`` from ``start`` to its ``;`` (included)."""
    found = []
    for match in _TOKEN.finditer(text, start):
        kind = match.lastgroup or "op"
        if kind == "skip":
            continue
        found.append((match.start(), kind, match.group()))
        if match.group() == ";":
            break
    return found


def _closing(tokens: list[tuple[int, str, str]], at: int) -> int | None:
    """The index of the token that closes the bracket (or ``CASE``) at ``at``; None if none does."""
    stack = []
    for index in range(at, len(tokens)):
        word = tokens[index][2].upper() if tokens[index][1] == "word" else tokens[index][2]
        if word in _OPENERS:
            stack.append(_OPENERS[word])
        elif stack and word == stack[-1]:
            stack.pop()
            if not stack:
                return index
    return None


def _after_primary(tokens: list[tuple[int, str, str]], at: int) -> tuple[int | None, bool]:
    """Where the primary expression a select item starts with at ``at`` ends (with its
    subscripts, dereferences and ``->*``): the index of the first token past it (None when no
    token closes it), and whether it is complete there (``s.`` and ``x->`` are not)."""
    size = len(tokens)

    def text(index: int) -> str:
        if index >= size:
            return ""
        kind, value = tokens[index][1], tokens[index][2]
        return value.upper() if kind == "word" else value

    def kind(index: int) -> str:
        return tokens[index][1] if index < size else ""

    def closed(opener: int) -> int | None:
        close = _closing(tokens, opener)
        return None if close is None else close + 1

    first = text(at)
    if first == "-":  # a number's sign, or the unary minus of any expression
        return (at + 2, True) if kind(at + 1) == "number" else (at + 1, False)
    if kind(at) in ("number", "string") or first in _LITERAL_WORDS or first == "*":
        return at + 1, True
    end: int | None
    if first in ("(", "CASE"):
        end = closed(at)
    elif (first in ("CAST", "MAP", "STRUCT") and text(at + 1) == "(") or (first == "ARRAY" and text(at + 1) == "["):
        end = closed(at + 1)
    elif kind(at) in ("word", "quoted"):
        if text(at + 1) == "(":
            end = closed(at + 1)
        elif kind(at + 1) == "string":
            end = at + 2
        elif text(at + 1) == ".":
            if text(at + 2) != "*" and kind(at + 2) not in ("word", "quoted"):
                return at + 2, False
            end = at + 3
        else:
            end = at + 1
    else:  # no primary expression starts so: the item is an expression from its first token
        return at, True
    while end is not None and end < size:
        if text(end) == "[":
            end = closed(end)
        elif text(end) == "->":
            if text(end + 1) == "*":
                return end + 2, True
            if kind(end + 1) not in ("word", "quoted"):
                return end + 1, False
            end += 2
        else:
            break
    return end, True


def select_item_prediction(text: str, offset: int) -> bool:
    """Whether a syntax error at ``offset`` is one ANTLR meets while it predicts a select
    item's kind (an expression, ``x->*``, ``s.*`` or ``*``): that prediction reads on to the end
    of the item's leading primary expression, and where no kind fits before it ends (inside a
    call's parentheses, after ``s.``) ksqlDB reports "no viable alternative" (``Syntax error at
    or near 'X'``), not a mismatch. The item's first token is checked before the prediction, and
    past a complete primary the item may end, so errors there are mismatches as elsewhere."""
    tokens = _tokens(text, statement_start(text, offset))
    depth, index = 0, 0
    while index < len(tokens) and tokens[index][0] < offset:
        word = tokens[index][2].upper()
        if depth == 0 and tokens[index][1] == "word" and word == "SELECT":
            break
        depth += word in _OPENERS
        depth -= depth > 0 and word in _OPENERS.values()
        index += 1
    else:
        return False
    item = index + 1
    while item < len(tokens) and tokens[item][0] < offset:
        end, complete = _after_primary(tokens, item)
        if end is None:
            return True
        past = tokens[end][0] if end < len(tokens) else len(text)
        if offset < past or (offset == past and not complete):
            return True
        depth, index = 0, item
        while index < len(tokens) and tokens[index][0] < offset:
            word = tokens[index][2].upper() if tokens[index][1] == "word" else tokens[index][2]
            if depth == 0 and word in (",", "FROM"):
                break
            depth += word in _OPENERS
            depth -= depth > 0 and word in _OPENERS.values()
            index += 1
        if index >= len(tokens) or tokens[index][0] >= offset or tokens[index][2].upper() == "FROM":
            return False
        item = index + 1
    return False


def create_with_prediction(text: str, offset: int) -> bool:
    """Whether a syntax error at ``offset`` lies inside the WITH clause of a CREATE STREAM|TABLE
    that declares no columns: ANTLR predicts whether it is a CREATE or a CREATE ... AS SELECT
    only past that clause (at ``AS``, or where the statement ends), so a mistake inside it
    leaves no viable alternative, as in a select item (:func:`select_item_prediction`)."""
    tokens = _tokens(text, statement_start(text, offset))
    words = [value.upper() if kind == "word" else value for _, kind, value in tokens]
    index = 1
    if not words or words[0] != "CREATE":
        return False
    if words[index : index + 2] == ["OR", "REPLACE"]:
        index += 2
    if words[index : index + 1] not in (["STREAM"], ["TABLE"]):
        return False
    index += 1
    if words[index : index + 3] == ["IF", "NOT", "EXISTS"]:
        index += 3
    if index + 1 >= len(words) or tokens[index][1] not in ("word", "quoted") or words[index + 1] != "WITH":
        return False
    with_at = index + 1
    if tokens[with_at][0] >= offset:
        return False
    close = _closing(tokens, with_at + 1) if words[with_at + 1 : with_at + 2] == ["("] else None
    return close is None or offset <= tokens[close][0]


def no_viable_message(line: int, column: int, near: str, statement: str) -> str:
    """ksqlDB's message when ANTLR's prediction finds no alternative at ``near``."""
    at = f"line {line}:{column}"
    return f"{at}: Syntax Error\nSyntax error at or near '{near}' at {at}\nStatement: {statement}"
