"""A map's entries in the order ksqlDB iterates them: ``java.util.HashMap``'s.

ksqlDB's REDUCE over a map folds ``map.entrySet()`` in order, and MAP_KEYS, MAP_VALUES and
ENTRIES (unsorted) list it in order, so their results depend on HashMap's iteration order: by
bucket (the key's ``hashCode()``, spread as ``h ^ (h >>> 16)``, masked by the table size), then
by insertion within a bucket (a resize keeps that order). The table size depends on how the map
was built: the JSON deserializer and a MAP constructor (``MapBuilder``) build
``new HashMap<>(size)``; ``Collectors.toMap`` (TRANSFORM, FILTER, SPLIT_TO_MAP) and
``new HashMap<>()`` (MAP_UNION, AS_MAP) the default table; all grow at a 0.75 load factor.
Java's hash codes are computed here in Spark: ``String`` over UTF-16 code units, ``Integer``
and ``Long`` from the value. Keys of other types keep Spark's (insertion) order.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from qtt import sqltypes as t
from qtt.plan.ir import expressions as e

_TWO_32 = 2**32

#: Functions whose map is a HashMap built with the default table (16 buckets).
_DEFAULT_TABLE_BUILDERS = frozenset(["TRANSFORM", "FILTER", "MAP_UNION", "AS_MAP", "SPLIT_TO_MAP"])


def _string_hash(key: Column) -> Column:
    # String.hashCode: h = 31 * h + c over UTF-16 code units, as an unsigned 32-bit value.
    # The units are an argument of the fold, never read inside its lambda: pyspark 4.2 cannot
    # evaluate, under a Python UDF, a lambda that reads a variable of an enclosing lambda.
    units = F.regexp_extract_all(F.hex(F.encode(key, "UTF-16BE")), F.lit("...."), 0)
    return F.aggregate(
        units,
        F.lit(0).cast("bigint"),
        lambda h, unit: F.pmod(h * 31 + F.conv(unit, 16, 10).cast("bigint"), F.lit(_TWO_32)),
    )


def _hash(key: Column, key_type: t.SqlType) -> Column | None:
    if key_type == t.STRING:
        return _string_hash(key)
    if key_type == t.INTEGER:
        return F.pmod(key.cast("bigint"), F.lit(_TWO_32))
    if key_type == t.BIGINT:
        folded = key.bitwiseXOR(F.shiftrightunsigned(key, 32))
        return F.pmod(folded, F.lit(_TWO_32))
    return None


def _capacity(size: Column, *, default_table: bool) -> Column:
    # The smallest power of two holding ``size`` entries at load factor 0.75.
    needed = F.pow(F.lit(2), F.ceil(F.log2(F.greatest(F.ceil(size * 4 / 3), F.lit(1))))).cast("bigint")
    return F.greatest(needed, F.lit(16 if default_table else 1).cast("bigint"))


def hashmap_entries(map_: Column, map_type: t.SqlType, *, default_table: bool = False) -> Column:
    """The entries (``key``, ``value`` structs) of ``map_`` in Java HashMap iteration order."""
    assert isinstance(map_type, t.Map)
    entries = F.map_entries(map_)
    if _hash(F.lit(None), map_type.key) is None:
        return entries
    mask = _capacity(F.size(map_), default_table=default_table) - 1

    def bucket(entry: Column) -> Column:
        h = _hash(entry.getField("key"), map_type.key)
        assert h is not None
        return h.bitwiseXOR(F.shiftright(h, 16)).bitwiseAND(mask)

    # Sorted by (bucket, position) in natural struct order, then looked up by position: an
    # array_sort with a comparator lambda fails on pyspark 4.2 where a Python UDF reads it.
    positions = F.transform(entries, lambda entry, i: F.struct(bucket(entry).alias("b"), i.alias("i")))
    return F.transform(F.array_sort(positions), lambda x: F.element_at(entries, x.getField("i") + 1))


def java_map_entries(map_: Column, source: e.Expression) -> Column:
    """The entries of ``map_``, the value of ``source``, in the order ksqlDB iterates them."""
    default_table = isinstance(source, e.Call) and source.name in _DEFAULT_TABLE_BUILDERS
    return hashmap_entries(map_, source.result_type, default_table=default_table)
