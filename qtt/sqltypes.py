"""The dialect's SQL types: small frozen values with ksqlDB's spelling.

``str(t)`` gives ksqlDB's canonical form (``STRUCT<`A` INTEGER, `B` ARRAY<STRING>>``),
which is also how types are written in plan JSON. :mod:`qtt.plan.ir.type_text` reads it back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class SqlType:
    """Base class of every SQL type."""

    def __str__(self) -> str:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    @property
    def base(self) -> str:
        """The base type name: ``INTEGER``, ``DECIMAL``, ``ARRAY``, ``STRUCT`` ..."""
        raise NotImplementedError


@dataclass(frozen=True)
class Primitive(SqlType):
    """A type without parameters, such as ``INTEGER`` or ``STRING``."""

    name: str
    NAMES: ClassVar[tuple[str, ...]] = (
        "BOOLEAN",
        "INTEGER",
        "BIGINT",
        "DOUBLE",
        "STRING",
        "BYTES",
        "DATE",
        "TIME",
        "TIMESTAMP",
    )

    def __post_init__(self) -> None:
        if self.name not in self.NAMES:
            msg = f"unknown primitive type {self.name!r}; expected one of {', '.join(self.NAMES)}"
            raise ValueError(msg)

    def __str__(self) -> str:
        return self.name

    @property
    def base(self) -> str:
        return self.name


@dataclass(frozen=True)
class Decimal(SqlType):
    """``DECIMAL(precision, scale)``."""

    precision: int
    scale: int

    def __str__(self) -> str:
        return f"DECIMAL({self.precision}, {self.scale})"

    @property
    def base(self) -> str:
        return "DECIMAL"


@dataclass(frozen=True)
class Array(SqlType):
    """``ARRAY<element>``."""

    element: SqlType

    def __str__(self) -> str:
        return type_text(self)

    @property
    def base(self) -> str:
        return "ARRAY"


@dataclass(frozen=True)
class Map(SqlType):
    """``MAP<key, value>``."""

    key: SqlType
    value: SqlType

    def __str__(self) -> str:
        return type_text(self)

    @property
    def base(self) -> str:
        return "MAP"


@dataclass(frozen=True)
class Field:
    """One named field of a struct."""

    name: str
    type: SqlType

    def __str__(self) -> str:
        return f"{quote(self.name)} {self.type}"


#: how ksqlDB prints a struct without fields (``SqlStruct.EMPTY_STRUCT``), with or without quoting
EMPTY_STRUCT = "STRUCT< >"


@dataclass(frozen=True)
class Struct(SqlType):
    """``STRUCT<`name` type, ...>``; field names are case sensitive."""

    fields: tuple[Field, ...]

    def __str__(self) -> str:
        return type_text(self)

    @property
    def base(self) -> str:
        return "STRUCT"

    def field(self, name: str) -> Field | None:
        """The field called ``name``, or None."""
        return next((f for f in self.fields if f.name == name), None)


BOOLEAN = Primitive("BOOLEAN")
INTEGER = Primitive("INTEGER")
BIGINT = Primitive("BIGINT")
DOUBLE = Primitive("DOUBLE")
STRING = Primitive("STRING")
BYTES = Primitive("BYTES")
DATE = Primitive("DATE")
TIME = Primitive("TIME")
TIMESTAMP = Primitive("TIMESTAMP")

# ksqlDB accepts these spellings for primitive types.
TYPE_ALIASES: dict[str, SqlType] = {
    "BOOLEAN": BOOLEAN,
    "INT": INTEGER,
    "INTEGER": INTEGER,
    "BIGINT": BIGINT,
    "DOUBLE": DOUBLE,
    "STRING": STRING,
    "VARCHAR": STRING,
    "BYTES": BYTES,
    "DATE": DATE,
    "TIME": TIME,
    "TIMESTAMP": TIMESTAMP,
}

NUMERIC_BASES = ("INTEGER", "BIGINT", "DECIMAL", "DOUBLE")


def is_numeric(t: SqlType) -> bool:
    """True for INTEGER, BIGINT, DECIMAL and DOUBLE."""
    return t.base in NUMERIC_BASES


def quote(name: str) -> str:
    """Quote an identifier the way ksqlDB prints it: ``name`` in backticks."""
    return "`" + name.replace("`", "``") + "`"


def type_text(type_: SqlType, field_name: Callable[[str], str] = quote, leaf: Callable[[SqlType], str] = str) -> str:
    """``type_`` as ksqlDB prints it, each struct field's name through ``field_name`` and each
    type that holds no other through ``leaf``. The defaults give ``str(type_)``, the canonical
    form; ksqlDB's expressions quote a field name only where it needs it, and its function
    resolution messages never do (``FormatOptions.noEscape()``)."""
    if isinstance(type_, Array):
        return f"ARRAY<{type_text(type_.element, field_name, leaf)}>"
    if isinstance(type_, Map):
        return f"MAP<{type_text(type_.key, field_name, leaf)}, {type_text(type_.value, field_name, leaf)}>"
    if isinstance(type_, Struct):
        if not type_.fields:
            return EMPTY_STRUCT
        shown = (f"{field_name(f.name)} {type_text(f.type, field_name, leaf)}" for f in type_.fields)
        return f"STRUCT<{', '.join(shown)}>"
    return leaf(type_)


#: the most digits a Spark decimal holds (ksqlDB's go further)
SPARK_DECIMAL_DIGITS = 38


def wider_than_spark(t: SqlType) -> str | None:
    """Why Spark cannot hold values of ``t`` (a DECIMAL, maybe nested, of more than 38 digits),
    or None."""
    for inner in walk(t):
        if isinstance(inner, Decimal) and inner.precision > SPARK_DECIMAL_DIGITS:
            return f"{inner}: Spark's decimals hold at most {SPARK_DECIMAL_DIGITS} digits"
    return None


def walk(t: SqlType) -> list[SqlType]:
    """``t`` and every type inside it (elements, keys, values, fields), outermost first."""
    if isinstance(t, Array):
        return [t, *walk(t.element)]
    if isinstance(t, Map):
        return [t, *walk(t.key), *walk(t.value)]
    if isinstance(t, Struct):
        return [t, *[inner for f in t.fields for inner in walk(f.type)]]
    return [t]


#: the ranges of INTEGER and BIGINT: Java's int and long
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1


def is_structured(t: SqlType) -> bool:
    """Whether ``t`` is an ARRAY, MAP or STRUCT (Java compares those with ``equals``)."""
    return isinstance(t, Array | Map | Struct)


def contains_map(t: SqlType) -> bool:
    """True if ``t`` is a map or holds one at any depth."""
    if isinstance(t, Map):
        return True
    if isinstance(t, Array):
        return contains_map(t.element)
    if isinstance(t, Struct):
        return any(contains_map(f.type) for f in t.fields)
    return False
