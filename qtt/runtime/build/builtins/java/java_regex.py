"""Java regular expressions rewritten to tell whether a group took part in a match.

Java's ``Matcher.group(n)`` is null for a group that took no part in the match (``(b)?``
against ``a``); Spark's ``regexp_extract`` gives ``''`` for it, as for a group that matched
nothing. :func:`mark_group` puts an empty group first inside group ``n``: it takes part exactly
when group ``n`` does, Java resets it when the engine backtracks out of group ``n``, and a
backreference to it fails where it took no part. :func:`participation_pattern` builds on it a
pattern that ``Pattern.matches`` the text exactly when group ``n`` took part in the first match
``Matcher.find`` finds: an atomic group keeps that match as ``find`` chooses it (the shortest
prefix, then the pattern's own order), then the backreference. This module must not import
pyspark.
"""

from __future__ import annotations

import re

# Comments mode, quoting and numbered backreferences (which the new group would renumber).
_UNSURE = re.compile(r"\(\?[a-zA-Z-]*x|\\Q|\\[1-9]")


def _class_end(pattern: str, i: int) -> int | None:
    """The index after the character class that starts at ``i``; None for a class this reader
    does not follow (nested, or starting with ']')."""
    i += 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        return None
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
        elif c == "[":
            return None
        elif c == "]":
            return i + 1
        else:
            i += 1
    return None


def participation_pattern(pattern: str, n: int) -> str | None:
    """The pattern described above for group ``n`` of ``pattern``, or None where this reader is
    not sure of the pattern's groups (quoting, nested classes, comments mode, numbered
    backreferences)."""
    marked = mark_group(pattern, n)
    return None if marked is None else rf"(?>[\s\S]*?(?:{marked}))\{n + 1}[\s\S]*"


def mark_group(pattern: str, n: int) -> str | None:
    """``pattern`` with an empty group put first inside group ``n``: that group is ``n + 1``, and
    takes part in a match exactly when group ``n`` does. None as for
    :func:`participation_pattern`."""
    if n < 1 or _UNSURE.search(pattern):
        return None
    open_groups: list[tuple[int, int]] = []  # (group number or 0, index where its content starts)
    count = 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
        elif c == "[":
            end = _class_end(pattern, i)
            if end is None:
                return None
            i = end
        elif c == "(":
            number, start = 0, i + 1
            if not pattern.startswith("(?", i):
                count += 1
                number = count
            elif pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!"):
                close = pattern.find(">", i)
                if close < 0:
                    return None
                count += 1
                number, start = count, close + 1
            open_groups.append((number, start))
            i = start if number else i + 1
        elif c == ")":
            if not open_groups:
                return None
            number, start = open_groups.pop()
            if number == n:
                return pattern[:start] + "()(?:" + pattern[start:i] + ")" + pattern[i:]
            i += 1
        else:
            i += 1
    return None
