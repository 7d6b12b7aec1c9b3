"""Blank out ``//`` and ``/* */`` comments in JSON text, as ksqlDB's loader accepts them.

ksqlDB reads its test files with Jackson's ``ALLOW_COMMENTS``. Rather than parse a JSON
dialect, qtt replaces every comment with spaces of the same length (newlines kept), so the
strict JSON reader, the line index and every error's line and column work unchanged.
"""

from __future__ import annotations


class UnterminatedCommentError(ValueError):
    """A ``/*`` comment that never ends; ``offset`` is where it starts."""

    def __init__(self, offset: int) -> None:
        super().__init__("unterminated /* comment")
        self.offset = offset


def _blank(segment: str) -> str:
    return "".join(c if c in "\r\n" else " " for c in segment)


def blank_comments(text: str) -> str:
    """``text`` with each comment outside a string replaced by blanks of the same length.

    Raises:
        UnterminatedCommentError: a ``/*`` comment has no closing ``*/``.
    """
    if "//" not in text and "/*" not in text:
        return text
    out: list[str] = []
    size = len(text)
    start = 0  # first character not yet copied
    i = 0
    while i < size:
        c = text[i]
        if c == '"':
            i += 1
            while i < size and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif c == "/" and i + 1 < size and text[i + 1] in "/*":
            if text[i + 1] == "/":
                end = i + 2
                while end < size and text[end] not in "\r\n":
                    end += 1
            else:
                close = text.find("*/", i + 2)
                if close < 0:
                    raise UnterminatedCommentError(i)
                end = close + 2
            out.append(text[start:i])
            out.append(_blank(text[i:end]))
            start = i = end
        else:
            i += 1
    out.append(text[start:])
    return "".join(out)
