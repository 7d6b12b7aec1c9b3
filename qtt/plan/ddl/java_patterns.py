"""Which date/time patterns java.time's ``DateTimeFormatter.ofPattern`` refuses, in its words.

ksqlDB compiles a ``TIMESTAMP_FORMAT`` when it reads the WITH clause, and refuses the statement
with the reason ``DateTimeFormatterBuilder.appendPattern`` gives. This reproduces the refusals
a pattern's letters and quotes cause; the widths of numeric fields are not checked.
"""

from __future__ import annotations

#: letters java.time reads as a field (``FIELD_MAP``) or handles on their own
KNOWN_LETTERS = frozenset("GyuQqMLDdFEceaHkKhmsSAnNgzVvZOXxWwYBp")
#: the most letters of one kind a pattern may repeat, where java.time sets a limit
MOST_LETTERS = {
    **dict.fromkeys("a", 1),
    **dict.fromkeys("dhHkKms", 2),
    **dict.fromkeys("D", 3),
    **dict.fromkeys("GMLQqEec", 5),
    **dict.fromkeys("z", 4),
    **dict.fromkeys("ZXx", 5),
    **dict.fromkeys("W", 1),
    **dict.fromkeys("w", 2),
}


def pattern_problem(pattern: str) -> str | None:
    """The message of the ``IllegalArgumentException`` ``DateTimeFormatter.ofPattern(pattern)``
    throws, or None if it compiles."""
    optional = 0
    pos = 0
    while pos < len(pattern):
        cur = pattern[pos]
        if cur.isascii() and cur.isalpha():
            pos, problem = _letters(pattern, pos)
            if problem is not None:
                return problem
            continue
        if cur == "'":
            pos += 1
            while pos < len(pattern):
                if pattern[pos] == "'":
                    if pos + 1 < len(pattern) and pattern[pos + 1] == "'":
                        pos += 1
                    else:
                        break
                pos += 1
            if pos >= len(pattern):
                return f"Pattern ends with an incomplete string literal: {pattern}"
        elif cur == "[":
            optional += 1
        elif cur == "]":
            if optional == 0:
                return "Pattern invalid as it contains ] without previous ["
            optional -= 1
        elif cur in "{}#":
            return f"Pattern includes reserved character: '{cur}'"
        pos += 1
    return None


def _letters(pattern: str, pos: int) -> tuple[int, str | None]:
    """Read the run of one letter at ``pos``: where the run ends, and what java.time says of it."""
    cur, count, pos = _run(pattern, pos)
    if cur == "p":
        if pos >= len(pattern) or not (pattern[pos].isascii() and pattern[pos].isalpha()):
            return pos, f"Pad letter 'p' must be followed by valid pad pattern: {pattern}"
        cur, count, pos = _run(pattern, pos)
    if cur not in KNOWN_LETTERS:
        return pos, f"Unknown pattern letter: {cur}"
    if cur == "c" and count == 2:
        return pos, 'Invalid pattern "cc"'
    if cur == "V" and count != 2:
        return pos, "Pattern letter count must be 2: V"
    if cur == "O" and count not in (1, 4):
        return pos, "Pattern letter count must be 1 or 4: O"
    if cur == "v" and count not in (1, 4):
        return pos, "Wrong number of pattern letters: v"
    if count > MOST_LETTERS.get(cur, count):
        return pos, f"Too many pattern letters: {cur}"
    return pos, None


def _run(pattern: str, pos: int) -> tuple[str, int, int]:
    """The letter at ``pos``, how many times it repeats there, and the position after the run."""
    cur = pattern[pos]
    end = pos
    while end < len(pattern) and pattern[end] == cur:
        end += 1
    return cur, end - pos, end
