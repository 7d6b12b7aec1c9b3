"""Where each value of a JSON text is: its line, and its span of characters, by JSON path.

One scanner serves two jobs: errors point at the line of the value they name
(:mod:`qtt.harness.cases.loader`), and ``qtt run --update`` replaces one value's text and leaves
every other character of the file as it was (:mod:`qtt.harness.update`). The text must be valid
JSON with its comments blanked out (:func:`~qtt.harness.cases.json_comments.blank_comments`
keeps every offset).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class JsonIndex:
    """The values of a JSON text by JSON path (``$.tests[0].name``)."""

    #: the 1-based line of every value; an object member's path maps to the line of its key
    lines: dict[str, int]
    #: the ``(start, end)`` offsets of every value's text (``text[start:end]``), from its first
    #: character to just past its last; for an object member, the value's, not the key's
    spans: dict[str, tuple[int, int]]


@lru_cache(maxsize=4)
def json_index(text: str) -> JsonIndex:
    """The line and span of every value of a valid JSON text, by JSON path.

    Raises:
        IndexError, ValueError: the text is not valid JSON (callers that only want a line for
            an error message ignore them).
    """
    newlines = [i for i, c in enumerate(text) if c == "\n"]
    lines: dict[str, int] = {}
    spans: dict[str, tuple[int, int]] = {}
    size = len(text)

    def line_at(i: int) -> int:
        return bisect_right(newlines, i - 1) + 1

    def skip(i: int) -> int:
        while i < size and text[i] in " \t\r\n":
            i += 1
        return i

    def string_end(i: int) -> int:
        j = i + 1
        while text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return j + 1

    def value(i: int, path: str) -> int:
        i = skip(i)
        start = i
        lines.setdefault(path, line_at(i))
        opener = text[i]
        if opener in "{[":
            closer = "}" if opener == "{" else "]"
            i, index = skip(i + 1), 0
            while text[i] != closer:
                if opener == "{":
                    end = string_end(i)
                    child = f"{path}.{json.loads(text[i:end])}"
                    lines[child] = line_at(i)
                    i = skip(end) + 1  # past the colon
                else:
                    child = f"{path}[{index}]"
                    index += 1
                i = skip(value(i, child))
                if text[i] == ",":
                    i = skip(i + 1)
            end = i + 1
        elif opener == '"':
            end = string_end(i)
        else:
            end = i
            while end < size and text[end] not in ",]} \t\r\n":
                end += 1
            if end == start:  # not JSON (a stray "," or "}"): never loop on it
                msg = f"no JSON value at offset {start}"
                raise ValueError(msg)
        spans[path] = (start, end)
        return end

    value(0, "$")
    return JsonIndex(lines, spans)


def json_lines(text: str) -> dict[str, int]:
    """The 1-based line of every value of a valid JSON text, by JSON path (``$.tests[0].name``).

    Only called when a case is malformed, so that its error can point at the offending line.
    An object member's path maps to the line of its key.
    """
    return json_index(text).lines
