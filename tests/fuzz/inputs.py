"""What the fuzz suite feeds qtt: real files from the repository, mutated, and random data.

Corpora are read once from ``cases/`` and ``historical_plans/``. Mutations work at two
levels: on the parsed JSON (replace, drop or add a member, change a value's type), which
reaches the schema checks behind the parser, and on the text (cut, splice, insert), which
reaches the parser itself.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any

import simplejson
from hypothesis import strategies as st

from tests.fuzz.profiles import ROOT

CASES = ROOT / "cases"
HISTORICAL = ROOT / "historical_plans"


@cache
def case_files() -> tuple[str, ...]:
    """The text of every case file under ``cases/``."""
    return tuple(p.read_text(encoding="utf-8") for p in sorted(CASES.glob("*.json")))


@cache
def case_scripts() -> tuple[str, ...]:
    """The statements of each case, one script per case (a line per statement)."""
    out: list[str] = []
    for text in case_files():
        for case in json.loads(text).get("tests", []):
            out.append("\n".join(s for s in case.get("statements", []) if isinstance(s, str)))
    return tuple(out)


@cache
def historical_files(name: str) -> tuple[str, ...]:
    """The text of every ``historical_plans/*/*/<name>`` (``plan.json`` or ``spec.json``)."""
    return tuple(p.read_text(encoding="utf-8") for p in sorted(HISTORICAL.glob(f"*/*/{name}")))


# --- random JSON -------------------------------------------------------------------------

#: numbers at the edges: huge and tiny exponents, long digit strings, negative zero.
EDGE_NUMBERS = (
    "0",
    "-0",
    "1E+999999",
    "1E+999999999",
    "-1E-999999999",
    "1E+9999999999",
    "9223372036854775808",
    "-9223372036854775809",
    "2147483648",
    "1" * 5000,
    # more digits than a double holds (Java's BigInteger.doubleValue() gives Infinity)
    "9" * 310,
    "0." + "0" * 400 + "1",
    "1.5e308",
    "4.9e-324",
    "123456789012345678901234567890.123456789",
)

#: one of :data:`EDGE_NUMBERS` (drawn by index, so that reports do not print them all).
edge_numbers = st.integers(min_value=0, max_value=len(EDGE_NUMBERS) - 1).map(EDGE_NUMBERS.__getitem__)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
    st.sampled_from(["", "x", "tests", "name", "statements", "inputs", "outputs", "key", "value", "topic"]),
)

json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20,
)


def one_of(corpus: Callable[[], tuple[Any, ...]]) -> st.SearchStrategy[Any]:
    """An item of ``corpus()``, drawn by index (so that a failure prints the index, not the corpus)."""
    return st.integers(min_value=0, max_value=len(corpus()) - 1).map(lambda i: corpus()[i])


# --- mutations of parsed JSON ------------------------------------------------------------


def _slots(doc: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in ``doc``, containers first."""
    out: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            items = list(node.items())
        elif isinstance(node, list):
            items = list(enumerate(node))
        else:
            continue
        for key, child in items:
            out.append((node, key))
            stack.append(child)
    return out


def _other_type(value: Any) -> Any:
    """A value of another JSON type that looks related (``"1"`` for 1, ``[v]`` for v ...)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return {"x": value}
    if isinstance(value, dict):
        return list(value.values())
    return 0


@st.composite
def mutated_json(draw: st.DrawFn, documents: Callable[[], tuple[Any, ...]], *, max_mutations: int = 4) -> Any:
    """One of ``documents()`` with a few structural changes at random places (write it with :func:`dump`)."""
    doc = copy.deepcopy(draw(one_of(documents)))
    for _ in range(draw(st.integers(min_value=1, max_value=max_mutations))):
        slots = _slots(doc)
        if not slots:
            return draw(json_values)
        container, key = draw(st.sampled_from(slots))
        action = draw(st.sampled_from(["replace", "drop", "add", "retype", "text", "edge", "nest"]))
        if action == "replace":
            container[key] = draw(json_values)
        elif action == "drop":
            del container[key]
        elif action == "add":
            if isinstance(container, dict):
                container[draw(st.text(max_size=12))] = draw(json_values)
            else:
                container.insert(key, draw(json_values))
        elif action == "retype":
            container[key] = _other_type(container[key])
        elif action == "text" and isinstance(container[key], str):
            container[key] = draw(mutated_text(container[key]))
        elif action == "edge":
            container[key] = simplejson.RawJSON(draw(edge_numbers))
        elif action == "nest":
            # written as text: nesting Python lists this deep would overflow the JSON encoder
            depth = draw(st.integers(min_value=1, max_value=1200))
            inner = simplejson.dumps(container[key], ensure_ascii=False)
            container[key] = simplejson.RawJSON("[" * depth + inner + "]" * depth)
    return doc


# --- mutations of text -------------------------------------------------------------------

_INSERTS = st.one_of(
    st.text(max_size=8),
    st.sampled_from(['"', "\\", "{", "}", "[", "]", ",", ":", "\\ud800", "\\u0000", "NaN", "1e999999999", "\n"]),
    edge_numbers,
)


@st.composite
def mutated_text(draw: st.DrawFn, text: str, *, max_mutations: int = 3) -> str:
    """``text`` cut, spliced and added to at random places."""
    for _ in range(draw(st.integers(min_value=1, max_value=max_mutations))):
        size = len(text)
        at = draw(st.integers(min_value=0, max_value=size))
        end = draw(st.integers(min_value=at, max_value=min(size, at + 40)))
        action = draw(st.sampled_from(["insert", "delete", "replace", "truncate", "duplicate", "repeat"]))
        if action == "insert":
            text = text[:at] + draw(_INSERTS) + text[at:]
        elif action == "delete":
            text = text[:at] + text[end:]
        elif action == "replace":
            text = text[:at] + draw(_INSERTS) + text[end:]
        elif action == "truncate":
            text = text[:at]
        elif action == "duplicate":
            text = text[:end] + text[at:end] + text[end:]
        else:
            text = text[:at] + text[at:end] * draw(st.integers(min_value=2, max_value=400)) + text[end:]
    return text


def dump(doc: Any) -> str:
    """JSON text for a (mutated) document; numbers from :data:`EDGE_NUMBERS` are written as they are."""
    return simplejson.dumps(doc, ensure_ascii=False)


# --- SQL ---------------------------------------------------------------------------------

_SQL_TOKEN = re.compile(
    r"'(?:[^']|'')*'|`[^`]*`|\"[^\"]*\"|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\w+|<=|>=|<>|!=|\|\||->|=>|\S"
)


def sql_tokens(text: str) -> list[str]:
    """A statement split into tokens (string literals and quoted names stay whole)."""
    return _SQL_TOKEN.findall(text)


@cache
def sql_vocabulary() -> tuple[str, ...]:
    """Every distinct token of the statements in ``cases/``, plus a few that they lack."""
    tokens = {token for script in case_scripts() for token in sql_tokens(script)}
    tokens |= {"(", ")", ",", ";", "'", "`", '"', "||", "OR", "AND", "NOT", "CASE", "WHEN", "END", "NULL"}
    tokens |= {"9" * 5000, "1E999999999", "-1E-999999999", "''", "``", "STRUCT<", "ARRAY<", "MAP<", ">"}
    return tuple(sorted(tokens))


@st.composite
def token_soup(draw: st.DrawFn) -> str:
    """Tokens of real statements in random order, ending with ``;`` most of the time."""
    tokens = draw(st.lists(st.sampled_from(sql_vocabulary()), min_size=1, max_size=40))
    return " ".join(tokens) + draw(st.sampled_from([";", ";", ""]))


# hypothesis favours small integers; sizes around the limits of item 4 of issue 9 are drawn as often
_SIZES = st.one_of(st.integers(min_value=1, max_value=20), st.integers(min_value=150, max_value=400))


def _grow(draw: st.DrawFn, tokens: list[str], at: int, shape: str) -> None:
    """Replace ``tokens[at]`` by a long expression around it: nested, chained or called."""
    size = draw(_SIZES)
    if shape == "nest":
        tokens[at : at + 1] = ["("] * size + [tokens[at]] + [")"] * size
    elif shape == "chain":
        # generated SQL chains hundreds of terms: a || b || ..., a OR b OR ...
        operator = draw(st.sampled_from(["||", "OR", "AND", "+", "*"]))
        tokens[at : at + 1] = [tokens[at], *[operator, tokens[at]] * size]
    else:
        function = draw(st.sampled_from(["ABS", "UCASE", "COALESCE", "CAST"]))
        tokens[at : at + 1] = [function, "("] * size + [tokens[at]] + [")"] * size


@st.composite
def long_expression(draw: st.DrawFn) -> str:
    """The statements of a case with one selected column grown into a long expression (see :func:`_grow`)."""
    tokens = sql_tokens(draw(one_of(case_scripts)))
    selected = [i + 1 for i, token in enumerate(tokens[:-1]) if token.upper() == "SELECT" and tokens[i + 1] != "*"]
    if selected:
        _grow(draw, tokens, draw(st.sampled_from(selected)), draw(st.sampled_from(["nest", "chain", "call"])))
    return " ".join(tokens)


@st.composite
def mutated_script(draw: st.DrawFn) -> str:
    """The statements of a case with some tokens dropped, repeated, swapped, replaced or grown."""
    tokens = sql_tokens(draw(one_of(case_scripts)))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        if not tokens:
            break
        at = draw(st.integers(min_value=0, max_value=len(tokens) - 1))
        action = draw(st.sampled_from(["drop", "repeat", "swap", "replace", "insert", "nest", "chain", "call"]))
        if action == "drop":
            del tokens[at]
        elif action == "repeat":
            end = draw(st.integers(min_value=at + 1, max_value=min(len(tokens), at + 6)))
            tokens[at:at] = tokens[at:end] * draw(_SIZES)
        elif action == "swap":
            other = draw(st.integers(min_value=0, max_value=len(tokens) - 1))
            tokens[at], tokens[other] = tokens[other], tokens[at]
        elif action == "replace":
            tokens[at] = draw(st.sampled_from(sql_vocabulary()))
        elif action == "insert":
            tokens.insert(at, draw(st.sampled_from(sql_vocabulary())))
        else:
            _grow(draw, tokens, at, action)
    return " ".join(tokens)


@cache
def historical_documents(name: str) -> tuple[Any, ...]:
    """The documents of :func:`historical_files`."""
    return tuple(json.loads(text) for text in historical_files(name))
