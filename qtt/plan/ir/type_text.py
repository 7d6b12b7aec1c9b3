"""The plan's own reader for the type and schema strings that its codec writes.

A persisted ``plan.json`` spells SQL types as ``str(SqlType)`` (``DECIMAL(4, 2)``,
``STRUCT<`A` INTEGER>``) and schemas as ``str(LogicalSchema)`` (`` `K` STRING KEY, `V` INTEGER``).
Reading them back with the dialect's grammar would make the SQL parser part of the persisted
contract: a grammar change could break a plan written years ago. This grammar accepts exactly
the written form, and nothing in it may change once a plan has been persisted with it.
"""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

from lark import Lark, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedInput, UnexpectedToken

from qtt import sqltypes as t


class ColumnText(NamedTuple):
    """One column as written: its name, type, and ``KEY``/``HEADERS``/``HEADER`` or None."""

    name: str
    type: t.SqlType
    constraint: str | None
    header_key: str | None


# Frozen: the form that str(SqlType) and str(Column) have written since qtt 0.1.0.
_GRAMMAR = r"""
    ?start_type: type
    start_schema: [column ("," column)*]

    ?type: PRIMITIVE                                  -> primitive
         | "DECIMAL" "(" INT "," INT ")"              -> decimal
         | "ARRAY" "<" type ">"                       -> array
         | "MAP" "<" type "," type ">"                -> map
         | "STRUCT" "<" [field ("," field)*] ">"      -> struct
    field: NAME type
    column: NAME type [namespace]
    ?namespace: "KEY"                                 -> key
              | "HEADERS"                             -> headers
              | "HEADER" "(" HEADER_KEY ")"           -> header

    PRIMITIVE.2: "BOOLEAN" | "INTEGER" | "BIGINT" | "DOUBLE" | "STRING" | "BYTES"
               | "DATE" | "TIMESTAMP" | "TIME"
    NAME: /`([^`]|``)*`/
    HEADER_KEY: /'([^']|'')*'/
    INT: /[0-9]+/

    %import common.WS
    %ignore WS
"""


@v_args(inline=True)
class _Build(Transformer[Any, Any]):
    def primitive(self, token: Any) -> t.SqlType:
        return t.Primitive(str(token))

    def decimal(self, precision: Any, scale: Any) -> t.SqlType:
        return t.Decimal(int(precision), int(scale))

    def array(self, element: t.SqlType) -> t.SqlType:
        return t.Array(element)

    def map(self, key: t.SqlType, value: t.SqlType) -> t.SqlType:
        return t.Map(key, value)

    def struct(self, *fields: t.Field | None) -> t.SqlType:
        return t.Struct(tuple(f for f in fields if f is not None))

    def field(self, name: Any, type_: t.SqlType) -> t.Field:
        return t.Field(_unquote(str(name), "`"), type_)

    def key(self) -> tuple[str, None]:
        return ("KEY", None)

    def headers(self) -> tuple[str, None]:
        return ("HEADERS", None)

    def header(self, key: Any) -> tuple[str, str]:
        return ("HEADER", _unquote(str(key), "'"))

    def column(self, name: Any, type_: t.SqlType, namespace: tuple[str, str | None] | None) -> ColumnText:
        constraint, header_key = namespace or (None, None)
        return ColumnText(_unquote(str(name), "`"), type_, constraint, header_key)

    def start_schema(self, *columns: ColumnText | None) -> tuple[ColumnText, ...]:
        return tuple(c for c in columns if c is not None)


def _unquote(text: str, quote: str) -> str:
    return text[1:-1].replace(quote * 2, quote)


@cache
def _parser(start: str) -> Lark:
    return Lark(_GRAMMAR, start=start, parser="lalr", transformer=_Build())


def read_type(text: str) -> t.SqlType:
    """The SQL type that ``str(sql_type)`` printed as ``text``.

    Raises:
        ValueError: ``text`` is not in the written form; the message gives the column.
    """
    return _read("start_type", text)


def read_columns(text: str) -> tuple[ColumnText, ...]:
    """The columns that ``str(LogicalSchema)`` printed as ``text``.

    Raises:
        ValueError: ``text`` is not in the written form; the message gives the column.
    """
    return _read("start_schema", text)


def _describe(start: str, terminal: str) -> str:
    if terminal == "$END":
        return "the end of the text"
    pattern = _parser(start).get_terminal(terminal).pattern
    return repr(pattern.value) if pattern.type == "str" else terminal


def _read(start: str, text: str) -> Any:
    try:
        return _parser(start).parse(text)
    except UnexpectedToken as e:
        expected = ", ".join(sorted(_describe(start, name) for name in e.expected))
        if e.token.type == "$END":
            msg = f"the text ends early; expected one of: {expected}"
        else:
            msg = f"unexpected {str(e.token)!r} at column {e.column}; expected one of: {expected}"
        raise ValueError(msg) from None
    except UnexpectedInput as e:
        msg = f"unexpected text at column {e.column}: {text[e.pos_in_stream or 0 :][:20]!r}"
        raise ValueError(msg) from None
    except (LarkError, ValueError) as e:
        raise ValueError(str(e).splitlines()[0]) from None
