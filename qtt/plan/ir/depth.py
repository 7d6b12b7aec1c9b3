"""Deep inputs: run recursive work on a large stack, and bound how deep JSON may nest.

Generated SQL nests deeply (hundreds of ``OR`` terms, ``||`` chains, nested calls), and so do
the plans and case files that hold it. The analyzer, the formatter, the plan codec (cattrs and
``json``) and the expression compiler are recursive; at CPython's default limit of 1,000 frames
they raise ``RecursionError`` at a few hundred levels. Rewriting every visitor as a loop would
scatter the work; instead :func:`deep_call` runs such work in a thread with a 512 MiB stack and a
raised recursion limit. That is safe because the stack is large enough for the frames the limit
allows, the limit is only raised while a deep call runs (the calling thread waits for it), and
the documented limits below, checked by iterative scans before any recursive walk, keep inputs
far inside it.
"""

from __future__ import annotations

import contextvars
import re
import sys
import threading
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
N = TypeVar("N")

#: The deepest nesting of arrays and objects in a case file, ``plan.json`` or ``spec.json``.
MAX_JSON_DEPTH = 5_000

# ~6 KiB of C stack per allowed frame: far more than CPython 3.11 uses for the C calls between
# Python frames (cattrs, singledispatch, the json scanner), so the limit trips before the stack.
_STACK_BYTES = 512 * 1024 * 1024
_RECURSION_LIMIT = 80_000

_lock = threading.Lock()
_active = 0
_saved_limit = 0
_local = threading.local()


def deep_call(fn: Callable[..., T], /, *args: object, **kwargs: object) -> T:
    """Call ``fn(*args, **kwargs)`` on a large stack with a raised recursion limit.

    Exceptions propagate to the caller unchanged; a call made from inside a deep call runs
    directly.
    """
    if in_deep_call():
        return fn(*args, **kwargs)
    outcome: list[T] = []
    failure: list[BaseException] = []
    caller = contextvars.copy_context()  # the worker sees the caller's context variables

    def run() -> None:
        _local.deep = True
        try:
            outcome.append(caller.run(fn, *args, **kwargs))
        except BaseException as e:
            failure.append(e)

    _enter()
    try:
        with _lock:
            old = threading.stack_size(_STACK_BYTES)
            try:
                worker = threading.Thread(target=run, name="qtt-deep", daemon=True)
                worker.start()
            finally:
                threading.stack_size(old)
        worker.join()
    finally:
        _leave()
    if failure:
        raise failure[0].with_traceback(failure[0].__traceback__)
    return outcome[0]


def _enter() -> None:
    global _active, _saved_limit
    with _lock:
        if _active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, _RECURSION_LIMIT))
        _active += 1


def _leave() -> None:
    global _active
    with _lock:
        _active -= 1
        if _active == 0:
            sys.setrecursionlimit(_saved_limit)


_PATH_LEVELS = 8
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]')


def json_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> tuple[str, int, int] | None:
    """Where ``text`` first nests deeper than ``limit``: (JSON path, line, column), or ``None``.

    An iterative scan, so it works at any depth; texts with fewer brackets than ``limit`` are
    not scanned at all. The path names the enclosing value at most eight levels down (the line
    and column are exact); it is exact for valid JSON and a best effort for invalid JSON.
    """
    if text.count("[") + text.count("{") <= limit:
        return None
    # One entry per open container: its kind, its path, and its position (array) or key (object).
    stack: list[tuple[str, str]] = []
    position: list[int | str] = []
    expect_key = False
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            if not stack:
                path = "$"
            elif len(stack) >= _PATH_LEVELS:
                path = stack[-1][1]
            elif stack[-1][0] == "[":
                path = f"{stack[-1][1]}[{position[-1]}]"
            else:
                path = f"{stack[-1][1]}.{position[-1]}"
            stack.append((token, path))
            position.append(0 if token == "[" else "")
            expect_key = token == "{"
            if len(stack) > limit:
                line = text.count("\n", 0, match.start()) + 1
                column = match.start() - text.rfind("\n", 0, match.start())
                return path, line, column
        elif token in "]}":
            if stack:
                stack.pop()
                position.pop()
            expect_key = False
        elif token == ",":
            if stack and stack[-1][0] == "[":
                position[-1] = int(position[-1]) + 1
            expect_key = bool(stack) and stack[-1][0] == "{"
        elif token != ":" and expect_key:
            position[-1] = token[1:-1]
            expect_key = False
    return None


def tree_depth(root: N, children: Callable[[N], Iterable[N]], *, stop: int | None = None) -> int:
    """The number of levels of a tree (1 for a leaf), counted iteratively; at most ``stop + 1``."""
    deepest = 0
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if stop is not None and deepest > stop:
            break
        stack.extend((child, depth + 1) for child in children(node))
    return deepest


def in_deep_call() -> bool:
    """Whether the calling code already runs inside :func:`deep_call`."""
    return bool(getattr(_local, "deep", False))


_MAX_INT_DIGITS = 4_300
_LONG_INTEGER = re.compile(rf"\d{{{_MAX_INT_DIGITS + 1},}}")


def json_int(digits: str) -> int:
    """``parse_int`` for JSON readers: Python converts at most 4,300 digits (CVE-2020-10735).

    Raises:
        ValueError: a longer integer, with a bounded excerpt of it.
    """
    if len(digits) > _MAX_INT_DIGITS:
        msg = f"an integer of {len(digits):,} digits ({digits[:20]}...); qtt reads at most {_MAX_INT_DIGITS:,} digits"
        raise ValueError(msg)
    return int(digits)


def json_error_position(text: str, error: ValueError) -> tuple[int | None, int | None]:
    """The (line, column) of a JSON reader's error: its own, or that of an over-long integer."""
    line, column = getattr(error, "lineno", None), getattr(error, "colno", None)
    if line is None:
        found = _LONG_INTEGER.search(text)
        if found is not None:
            line = text.count("\n", 0, found.start()) + 1
            column = found.start() - text.rfind("\n", 0, found.start())
    return line, column


def too_deep_message(what: str, limit: int) -> str:
    """The message of an input that nests deeper than ``limit``."""
    return f"{what} nests deeper than {limit:,} levels, the limit; flatten it or split it"
