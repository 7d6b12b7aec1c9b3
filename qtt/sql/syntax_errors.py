"""ksqlDB's wording of a syntax error: ``line L:C: Syntax Error``, ``Expecting {...}``, ``Statement: ...``.

ksqlDB's parser is ANTLR's, which names the tokens it expected by its vocabulary: literal
tokens quoted (``'STRING'``, ``','``), token classes by name (``INTEGER_VALUE``,
``IDENTIFIER``, ``STRING`` for a string literal), in token-type order (the grammar's
implicit punctuation first, then keywords, operators and token classes). qtt names lark's
terminals the same way. The set is what qtt's grammar accepts at that point, which is
ANTLR's set when the two grammars agree there.
"""

from __future__ import annotations

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


def ksql_message(line: int, column: int, expected: str | None, statement: str, near: str) -> str:
    """ksqlDB's message, then ANTLR's own line for it (older ksqlDB files match on that one)."""
    parts = [f"line {line}:{column}: Syntax Error"]
    if expected:
        parts.append(f"Expecting {expected}")
    parts.append(f"Statement: {statement}")
    tail = " expecting one of the tokens above" if expected else ""
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
