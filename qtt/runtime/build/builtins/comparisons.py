"""Comparisons with Java's semantics: ``=``, ``<`` ... and IS DISTINCT FROM.

ksqlDB compares with Java's ``equals``/``compareTo``: a null operand makes the comparison
false, NaN compares false with everything, strings order by UTF-16 code units and bytes as
signed values, and maps compare by content, whatever their entry order. A DECIMAL compared with
a DOUBLE reads the double as ``BigDecimal.valueOf``, which throws for NaN and the infinities:
that comparison is null (a failed expression); so is one of text with a TIME, TIMESTAMP or
DATE where ksqlDB's parser cannot read the text.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.runtime.build.builtins.casts import parse_temporal

# Java orders two kinds of values differently from Spark. ByteBuffer.compareTo compares bytes
# as signed values, Spark compares BINARY as unsigned ones: read as ISO-8859-1 text (a character
# per byte) with each byte's top bit flipped, a BYTES value becomes a string Spark orders as Java
# orders the bytes. String.compareTo compares UTF-16 code units, Spark compares code points: a
# string's UTF-16BE bytes, compared unsigned, are in Java's order. (The aggregates, which run on
# Python values, order them by the same rules: qtt.runtime.aggregates.java_semantics.sort_key.)
_EVERY_BYTE = "".join(chr(b) for b in range(256))
_TOP_BIT_FLIPPED = "".join(chr(b ^ 0x80) for b in range(256))


def java_order(value: Column, type_: t.SqlType) -> Column:
    """A value that Spark orders as Java's ``compareTo`` orders ``value``: a key for BYTES and
    STRING, ``value`` itself for the other types."""
    if type_.base == "BYTES":
        return F.translate(F.decode(value, "ISO-8859-1"), _EVERY_BYTE, _TOP_BIT_FLIPPED)
    if type_.base == "STRING":
        return F.encode(value, "UTF-16BE")
    return value


def has_java_order(type_: t.SqlType) -> bool:
    """Whether Spark orders values of ``type_`` differently from Java (see :func:`java_order`)."""
    return type_.base in ("BYTES", "STRING")


def keyed(value: Column, type_: t.SqlType) -> Column:
    """``value`` as a struct (its Java order, itself) that Spark orders as Java orders
    ``value``; null stays null."""
    return F.when(value.isNull(), F.lit(None)).otherwise(
        F.struct(java_order(value, type_).alias("k"), value.alias("v"))
    )


def comparable(value: Column, type_: t.SqlType, *, java_doubles: bool = False) -> Column:
    """``value`` in a form Spark can compare for equality as Java's ``equals`` would.

    Spark cannot compare maps; Java's ``Map.equals`` ignores entry order. A map becomes its
    entries sorted by key, recursively through arrays, maps and structs. With ``java_doubles``
    every DOUBLE inside becomes :func:`double_equality_key` too (a List, Map or Struct compares
    its DOUBLEs with ``Double.equals``, where Spark's ``=`` takes -0.0 for 0.0).
    """
    if java_doubles and type_ == t.DOUBLE:
        return double_equality_key(value)
    if not (t.contains_map(type_) or (java_doubles and t.DOUBLE in t.walk(type_))):
        return value
    if isinstance(type_, t.Map):
        key_type, value_type = type_.key, type_.value
        entries = F.transform(
            F.map_entries(value),
            lambda entry: F.struct(
                comparable(entry["key"], key_type, java_doubles=java_doubles).alias("k"),
                comparable(entry["value"], value_type, java_doubles=java_doubles).alias("v"),
            ),
        )
        return F.array_sort(entries)
    if isinstance(type_, t.Array):
        element = type_.element
        return F.transform(value, lambda x: comparable(x, element, java_doubles=java_doubles))
    assert isinstance(type_, t.Struct)
    fields = [comparable(value.getField(f.name), f.type, java_doubles=java_doubles).alias(f.name) for f in type_.fields]
    return F.when(value.isNull(), F.lit(None)).otherwise(F.struct(*fields))


_OPERATORS: dict[str, Callable[[Column, Column], Column]] = {
    "=": Column.__eq__,
    "<>": Column.__ne__,
    "<": Column.__lt__,
    "<=": Column.__le__,
    ">": Column.__gt__,
    ">=": Column.__ge__,
}


def _is_nan(value: Column, type_: t.SqlType) -> Column | None:
    return F.isnan(value) if type_.base == "DOUBLE" else None


def _no_big_decimal(value: Column, type_: t.SqlType, other: t.SqlType) -> Column | None:
    """Where ``BigDecimal.valueOf`` of a DOUBLE compared with a DECIMAL throws: NaN, +/-Infinity."""
    if type_.base == "DOUBLE" and other.base == "DECIMAL":
        return F.isnan(value) | (F.abs(value) == F.lit(float("inf")))
    return None


def _text_read_as(left_type: t.SqlType, right_type: t.SqlType) -> t.SqlType | None:
    """The type ksqlDB's generated code parses a STRING operand as when the other is a TIME,
    TIMESTAMP or DATE (``SqlToJavaVisitor.visitTimeComparisonExpression``), else None."""
    bases = {left_type.base, right_type.base}
    if "STRING" not in bases:
        return None
    return next((temporal for temporal in (t.TIME, t.TIMESTAMP, t.DATE) if temporal.base in bases), None)


def compare(op: str, left: Column, right: Column, left_type: t.SqlType, right_type: t.SqlType) -> Column:
    """``left op right`` as ksqlDB evaluates it: false when an operand is null; null only where
    Java throws (a NaN or infinite DOUBLE compared with a DECIMAL, text compared with a TIME,
    TIMESTAMP or DATE that does not parse as one)."""
    fails = _no_big_decimal(left, left_type, right_type)
    if fails is None:
        fails = _no_big_decimal(right, right_type, left_type)
    read_as = _text_read_as(left_type, right_type)
    if read_as is not None:
        # SqlTimeTypes parses the text, untrimmed, once neither operand is null; it throws
        # for text that does not parse.
        text, other = (left, right) if left_type == t.STRING else (right, left)
        parsed = parse_temporal(text, read_as)
        fails = text.isNotNull() & other.isNotNull() & parsed.isNull()
        if left_type == t.STRING:
            left, left_type = parsed, read_as
        else:
            right, right_type = parsed, read_as
    if op not in ("=", "<>") and left_type.base == right_type.base and has_java_order(left_type):
        left, right = java_order(left, left_type), java_order(right, right_type)
    # Two arrays, maps or structs compare with List/Map/Struct.equals, so their DOUBLEs compare
    # as Double.equals (-0.0 is not 0.0); a bare DOUBLE compares as a Java primitive.
    inside = t.is_structured(left_type)
    left = comparable(left, left_type, java_doubles=inside)
    right = comparable(right, right_type, java_doubles=inside)
    result = _OPERATORS[op](left, right)
    # Java's primitive comparisons are false for NaN (Spark orders NaN above everything).
    for nan in (_is_nan(left, left_type), _is_nan(right, right_type)):
        if nan is not None:
            result = result & ~nan
    result = F.coalesce(result, F.lit(False))
    return result if fails is None else F.when(fails, F.lit(None).cast("boolean")).otherwise(result)


def mixed_equality(op: str, left: Column, right: Column, left_type: t.SqlType, right_type: t.SqlType) -> Column:
    """``left op right`` (``=`` or ``<>``) of two ARRAYs, MAPs or STRUCTs of different types, as
    ksqlDB's generated ``equals`` compares them; false when an operand is null."""
    same = _java_equals(left, right, left_type, right_type)
    result = same if op == "=" else ~same
    return F.when(left.isNull() | right.isNull(), F.lit(False)).otherwise(result)


def _java_equals(left: Column, right: Column, left_type: t.SqlType, right_type: t.SqlType) -> Column:
    """Java's ``equals`` of two values whose Java classes follow their SQL types (never null:
    two nulls are equal). Values of different classes are never equal: ``Integer`` and ``Long``,
    two Connect ``Struct``s of different schemas; two BigDecimals only at the same scale."""
    if left_type == right_type:
        same = comparable(left, left_type, java_doubles=True) == comparable(right, right_type, java_doubles=True)
    elif isinstance(left_type, t.Array) and isinstance(right_type, t.Array):
        lt, rt = left_type.element, right_type.element
        pairs = F.zip_with(left, right, lambda a, b: _java_equals(a, b, lt, rt))
        same = (F.size(left) == F.size(right)) & F.forall(pairs, lambda ok: ok)
    elif isinstance(left_type, t.Map) and isinstance(right_type, t.Map):
        if left_type.key != right_type.key:
            # AbstractMap.equals looks each key up in the other map: a key of another class is never there.
            same = (F.size(left) == 0) & (F.size(right) == 0)
        else:
            lv, rv = left_type.value, right_type.value
            found = F.forall(
                F.map_entries(left),
                lambda entry: (
                    F.array_contains(F.map_keys(right), entry["key"])
                    & _java_equals(entry["value"], F.try_element_at(right, entry["key"]), lv, rv)
                ),
            )
            same = (F.size(left) == F.size(right)) & found
    elif isinstance(left_type, t.Decimal) and isinstance(right_type, t.Decimal) and left_type.scale == right_type.scale:
        same = left == right
    else:
        same = F.lit(False)
    both_null = left.isNull() & right.isNull()
    return (
        F.when(both_null, F.lit(True))
        .when(left.isNull() | right.isNull(), F.lit(False))
        .otherwise(F.coalesce(same, F.lit(False)))
    )


def distinct(left: Column, right: Column, left_type: t.SqlType, right_type: t.SqlType) -> Column:
    """``left IS DISTINCT FROM right``: nulls are equal to each other only. Two ARRAYs, MAPs or
    STRUCTs of different types are distinct unless Java's ``equals`` holds (ksqlDB's
    ``SqlToJavaVisitor`` generates ``!left.equals(right)`` for them, as for ``<>``)."""
    if left_type != right_type and t.is_structured(left_type):
        return ~_java_equals(left, right, left_type, right_type)
    either_null = left.isNull() | right.isNull()
    both_null = left.isNull() & right.isNull()
    return F.when(either_null, ~both_null).otherwise(compare("<>", left, right, left_type, right_type))


def double_equality_key(value: Column) -> Column:
    """A DOUBLE as a value whose equality is Java's ``Double.equals`` (NaN equals NaN, ``-0.0``
    does not equal ``0.0``: Spark's ``=`` says the opposite of both): its text."""
    return value.cast("double").cast("string")


def holds_null(value: Column, type_: t.SqlType) -> Column | None:
    """Whether an array, map or struct holds a null anywhere inside it (an element, a map
    value, a field, at any depth); None for the other types.

    ksqlDB's ``InListEvaluator`` matches such values element by element, and a null never
    matches: ``ARRAY[1, NULL] IN (ARRAY[1, NULL])`` is false, where Spark's ``isin`` says true.
    """
    if isinstance(type_, t.Array):
        element = type_.element
        return F.exists(value, lambda x: _null_or_holds(x, element))
    if isinstance(type_, t.Map):
        map_value = type_.value
        return F.exists(F.map_values(value), lambda x: _null_or_holds(x, map_value))
    if isinstance(type_, t.Struct):
        held = F.lit(False)
        for f in type_.fields:
            held = held | _null_or_holds(value.getField(f.name), f.type)
        return held
    return None


def _null_or_holds(value: Column, type_: t.SqlType) -> Column:
    inner = holds_null(value, type_)
    return value.isNull() if inner is None else value.isNull() | inner


def structured_match(required: Column, possible: Column, type_: t.SqlType) -> Column:
    """Whether ``possible`` matches ``required`` as ksqlDB's ``InListEvaluator.isMatch`` has it
    (never null): a null never matches; arrays, maps and structs match element by element, where
    two nulls in one place match; a DOUBLE matches as ``Double.equals``.

    A map matches one of its size whose ``get`` of each of its keys matches its value, so a
    key that holds null matches a key the other map lacks (``MAP('a' := NULL)`` matches
    ``MAP('b' := 5)``), which comparing the entries would not say.
    """
    either_null = required.isNull() | possible.isNull()
    if isinstance(type_, t.Array):
        element = type_.element
        pairs = F.zip_with(required, possible, lambda r, p: _nested_match(r, p, element))
        same = (F.size(required) == F.size(possible)) & F.forall(pairs, lambda ok: ok)
    elif isinstance(type_, t.Map):
        map_value = type_.value
        entries = F.map_entries(required)
        gets = F.forall(entries, lambda e: _nested_match(e["value"], F.try_element_at(possible, e["key"]), map_value))
        same = (F.size(required) == F.size(possible)) & gets
    elif isinstance(type_, t.Struct):
        same = F.lit(True)
        for f in type_.fields:
            same = same & _nested_match(required.getField(f.name), possible.getField(f.name), f.type)
    elif type_ == t.DOUBLE:
        same = double_equality_key(required) == double_equality_key(possible)
    else:
        same = required == possible
    return F.when(either_null, F.lit(False)).otherwise(F.coalesce(same, F.lit(False)))


def _nested_match(required: Column, possible: Column, type_: t.SqlType) -> Column:
    """``InListEvaluator.isStructuredMatch``: two nulls match inside an array, map or struct."""
    return F.when(required.isNull() & possible.isNull(), F.lit(True)).otherwise(
        structured_match(required, possible, type_)
    )
