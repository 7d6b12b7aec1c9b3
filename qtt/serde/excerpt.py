"""Bounded excerpts of rejected input, for error messages.

A record can hold megabytes in one field, and a 14-byte number can stand for a billion
digits; a message quotes at most :data:`LIMIT` characters of either, so that rejecting
an input never costs more than reading it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: the most characters of rejected input one message quotes.
LIMIT = 100


def excerpt(text: str, limit: int = LIMIT) -> str:
    """``text`` itself, or its start and end around a note of how much was left out."""
    return excerpt_runs([(text, 1)], limit)


def excerpt_runs(runs: Sequence[tuple[str, int]], limit: int = LIMIT) -> str:
    """An excerpt of the text that ``runs`` spell (each ``(piece, repeat)`` is ``piece * repeat``).

    Runs describe text too long to build, such as the zeros of ``1E-999999999`` written
    out; the excerpt costs time in the number of runs and ``limit``, not in the length.
    """
    total = sum(len(piece) * repeat for piece, repeat in runs)
    if total <= limit:
        return "".join(piece * repeat for piece, repeat in runs)
    half = limit // 2
    head = _take(runs, half)
    tail = _take([(piece[::-1], repeat) for piece, repeat in reversed(runs)], half)[::-1]
    return f"{head}...[{total - 2 * half} characters left out]...{tail}"


def _take(runs: Iterable[tuple[str, int]], count: int) -> str:
    """The first ``count`` characters that ``runs`` spell."""
    parts: list[str] = []
    need = count
    for piece, repeat in runs:
        if need <= 0:
            break
        if not piece or repeat <= 0:
            continue
        times = min(repeat, need // len(piece) + 1)
        text = (piece * times)[:need]
        parts.append(text)
        need -= len(text)
    return "".join(parts)


def json_value(value: object, limit: int = LIMIT) -> str:
    """A rejected JSON value for a message: a scalar's bounded ``repr``, or what kind of container it is.

    A container is never printed: one nested a thousand deep would cost a recursion (and a
    message as long as the file) to quote.
    """
    if isinstance(value, dict):
        return f"an object of {len(value)} member(s)"
    if isinstance(value, list):
        return f"an array of {len(value)} element(s)"
    return excerpt(repr(value), limit)
