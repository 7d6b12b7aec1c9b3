"""ksqlDB's JSON string functions as plain Python, with Jackson's reading and writing.

ksqlDB's JSON UDFs (``io.confluent.ksql.function.udf.json``) read with an ``ObjectMapper`` that
keeps every number exact (floats as ``BigDecimal``), ignores what follows the first value, and
answers ``MissingNode`` for empty input; they write compactly, numbers as plain text. Spark has
no JSON reader with these rules, so the functions run as Python UDFs over these helpers. This
module must not import pyspark: its tests run without a JVM.
"""

from __future__ import annotations

import json
import re
import unicodedata
from decimal import Decimal
from typing import Any

from qtt import sqltypes as t

#: The value of empty input: Jackson's ``MissingNode``.
MISSING = object()

_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _reject_constant(name: str) -> Any:
    # Jackson refuses NaN and Infinity unless ALLOW_NON_NUMERIC_NUMBERS is on.
    raise ValueError(f"non-standard token {name}")


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=_reject_constant)


def parse(text: str) -> Any:
    """The first JSON value of ``text`` (``ObjectReader.readTree``), or ``MISSING`` for blank text.

    Raises:
        ValueError: for text that does not start with a valid JSON value.
    """
    start = _WHITESPACE.match(text).end()  # type: ignore[union-attr]
    if start == len(text):
        return MISSING
    value, end = _DECODER.raw_decode(text, start)
    if end < len(text):
        _check_root_end(value, text[end])
    return value


_ROOT_SPACE = frozenset(" \t\r\n")


def _check_root_end(value: Any, after: str) -> None:
    """Jackson's checks on the character after a top-level scalar (what follows is ignored).

    A number must end at whitespace (``_verifyRootSpace``: "12kg", "12." and "01" are errors);
    ``true``, ``false`` and ``null`` must not run into a Java identifier character
    (``_matchToken``: "truex" is an error, "true!" and "null$" are not).
    """
    if value is None or isinstance(value, bool):
        if after < "0" or after in "]}" or not _java_identifier_part(after):
            return
        msg = f"unrecognized token: {value!r} followed by {after!r}"
        raise ValueError(msg)
    if isinstance(value, int | Decimal) and after not in _ROOT_SPACE:
        msg = f"a top-level number followed by {after!r}, not whitespace"
        raise ValueError(msg)


def _java_identifier_part(ch: str) -> bool:
    """Java's ``Character.isJavaIdentifierPart``."""
    code = ord(ch)
    if code <= 0x08 or 0x0E <= code <= 0x1B or 0x7F <= code <= 0x9F:
        return True  # identifier-ignorable controls
    return unicodedata.category(ch) in _IDENTIFIER_CATEGORIES


_IDENTIFIER_CATEGORIES = frozenset(["Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "Mn", "Mc", "Pc", "Sc", "Cf"])


def quote(text: str) -> str:
    """A JSON string literal as Jackson writes it: control characters as ``\\u00XX`` (upper case)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif code < 0x20:
            out.append(_SHORT_ESCAPES.get(ch, f"\\u{code:04X}"))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def write(value: Any, *, plain: bool = True) -> str:
    """``value`` (as :func:`parse` returns it) as compact JSON.

    ``plain``: decimals as plain text, as the UDFs' ``ObjectMapper`` writes them
    (``WRITE_BIGDECIMAL_AS_PLAIN``); otherwise as ``JsonNode.toString()`` writes them,
    ``BigDecimal.toString()`` (``1.5E+2``, a zero without its sign).
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, Decimal):
        if plain:
            return format(value, "f")
        # Python's str(Decimal) is BigDecimal.toString's scientific notation; BigDecimal has no -0.
        return str(abs(value) if value == 0 else value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ",".join(write(v, plain=plain) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(quote(k) + ":" + write(v, plain=plain) for k, v in value.items()) + "}"
    msg = f"not a JSON value: {type(value).__name__}"
    raise TypeError(msg)


def _parse_or_none(text: str | None) -> Any:
    # The UDFs' KsqlFunctionException for invalid JSON makes the result null.
    if text is None:
        return MISSING
    try:
        return parse(text)
    except (ValueError, RecursionError):
        return MISSING


def is_json_string(text: str | None) -> bool:
    """IS_JSON_STRING: whether ``text`` holds a JSON value."""
    return _parse_or_none(text) is not MISSING


def json_array_length(text: str | None) -> int | None:
    """JSON_ARRAY_LENGTH: the length of a top-level array, else null."""
    value = _parse_or_none(text)
    return len(value) if isinstance(value, list) else None


def json_keys(text: str | None) -> list[str] | None:
    """JSON_KEYS: the keys of a top-level object, in order, else null."""
    value = _parse_or_none(text)
    return list(value) if isinstance(value, dict) else None


def json_records(text: str | None) -> dict[str, str] | None:
    """JSON_RECORDS: each key of a top-level object with its value as text, else null."""
    value = _parse_or_none(text)
    if not isinstance(value, dict):
        return None
    # A text value is its text (TextNode.textValue()); anything else its JsonNode.toString().
    return {k: v if isinstance(v, str) else write(v, plain=False) for k, v in value.items()}


def json_items(text: str | None) -> list[str] | None:
    """JSON_ITEMS: each element of a top-level array as its JSON text (a string quoted, as
    Jackson's ``JsonNode.toString``), else null."""
    value = _parse_or_none(text)
    if not isinstance(value, list):
        return None
    return [write(item, plain=False) for item in value]


def json_concat(*texts: str | None) -> str | None:
    """JSON_CONCAT with PostgreSQL's ``||`` rules: objects merge (last wins), else arrays concatenate."""
    values = []
    for text in texts:
        value = _parse_or_none(text)
        if value is MISSING:
            return None
        values.append(value)
    if not values:
        return None  # ksqlDB's nodes.get(0) fails
    if len(values) == 1:
        return write(values[0])  # one value is written as it is, not wrapped in an array
    if all(isinstance(v, dict) for v in values):
        merged: dict[str, Any] = {}
        for v in values:
            merged.update(v)
        return write(merged)
    items: list[Any] = []
    for v in values:
        items.extend(v if isinstance(v, list) else [v])
    return write(items)


def json_array_contains(text: str | None, wanted: Any, kind: str) -> bool:
    """JSON_ARRAY_CONTAINS: whether the top-level array holds ``wanted``.

    ``kind`` is the SQL type of ``wanted`` (``INTEGER``, ``BIGINT``, ``DOUBLE``, ``STRING``,
    ``BOOLEAN``; anything else never matches). As ksqlDB's streaming reader, elements are
    read one at a time: a match before a syntax error counts, an error before it gives false.
    A null text is false, as qtt's persisted plans recorded it (ksqlDB's ``createParser(null)``
    throws, which makes it null there: a documented difference).
    """
    if text is None:
        return False
    pos = _WHITESPACE.match(text).end()  # type: ignore[union-attr]
    if not text.startswith("[", pos):
        return False
    pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text.startswith("]", pos):
        return False
    while True:
        try:
            element, pos = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return False
        if _out_of_range(element, wanted, kind):
            return False  # readValueAs(Integer/Long) throws InputCoercionException: false
        if _same(element, wanted, kind):
            return True
        pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
        if not text.startswith(",", pos):
            return False
        pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]


_INT_RANGES = {"INTEGER": (t.INT_MIN, t.INT_MAX), "BIGINT": (t.BIGINT_MIN, t.BIGINT_MAX)}


def _out_of_range(element: Any, wanted: Any, kind: str) -> bool:
    """Whether ksqlDB's ``parser.readValueAs(val.getClass())`` fails on this element: an
    integer token read as the wanted value's Integer or Long, outside that type's range."""
    if wanted is None or kind not in _INT_RANGES or isinstance(element, bool) or not isinstance(element, int):
        return False
    low, high = _INT_RANGES[kind]
    return not low <= element <= high


def _same(element: Any, wanted: Any, kind: str) -> bool:
    if element is None:
        return wanted is None
    if wanted is None:
        return False
    if isinstance(element, bool):
        return kind == "BOOLEAN" and element is wanted
    if isinstance(element, int):
        return kind in ("INTEGER", "BIGINT") and element == wanted
    if isinstance(element, Decimal):
        return kind == "DOUBLE" and float(element) == wanted
    if isinstance(element, str):
        return kind == "STRING" and element == wanted
    return False


# ---------------------------------------------------------------------------- EXTRACTJSONFIELD

_ABSENT = object()
_INT = re.compile(r"[+-]?\d+")


def _path_char(ch: str) -> bool:
    # Java's Character.isLetterOrDigit, or '_'
    return ch == "_" or unicodedata.category(ch) in ("Lu", "Ll", "Lt", "Lm", "Lo", "Nd")


def json_path_tokens(path: str) -> list[str] | None:
    """The steps of a JSON path as ksqlDB's ``JsonPathTokenizer`` reads them; None if invalid.

    ``$`` then any of ``.name`` (letters, digits, '_' and ':'), ``[name]`` (letters, digits
    and '_') and ``["text"]`` (with ``\\"`` and ``\\\\`` escapes); no spaces, no wildcards.
    """
    if not path.startswith("$"):
        return None
    tokens: list[str] = []
    i, size = 1, len(path)
    while i < size:
        start = i + 1
        if path[i] == ".":
            i = start
            while i < size and (path[i] == ":" or _path_char(path[i])):
                i += 1
            if i == start:
                return None
            tokens.append(path[start:i])
            continue
        if path[i] != "[":
            return None
        i = start
        if i < size and path[i] == '"':
            i += 1
            token = []
            while i < size and path[i] != '"':
                if path[i] == "\\":
                    if i + 1 == size or path[i + 1] not in '"\\':
                        return None
                    i += 1
                token.append(path[i])
                i += 1
            if i == size:
                return None
            tokens.append("".join(token))
            i += 1
        else:
            while i < size and _path_char(path[i]):
                i += 1
            if i == start:
                return None
            tokens.append(path[start:i])
        if i == size or path[i] != "]":
            return None
        i += 1
    return tokens


def extract_json_field(text: str | None, path: str | None) -> str | None:
    """EXTRACTJSONFIELD: the value at ``path``, text as is and anything else as JSON (``null``
    for a JSON null); null for a missing value, an invalid path or text that is not JSON.

    As ksqlDB's ``JsonExtractString``: in an array a step must read as a Java int (``$.a.1``
    is ``$.a[1]``); in an object it is a field name, the last of a repeated name winning.
    """
    if text is None or path is None:
        return None
    tokens = json_path_tokens(path)
    node = _parse_or_none(text)
    if tokens is None or node is MISSING:
        return None
    for token in tokens:
        if isinstance(node, list):
            if not _INT.fullmatch(token):
                return None
            index = int(token)
            node = node[index] if 0 <= index < len(node) else _ABSENT
        elif isinstance(node, dict):
            node = node.get(token, _ABSENT)
        else:
            return None
        if node is _ABSENT:
            return None
    return node if isinstance(node, str) else write(node, plain=False)
