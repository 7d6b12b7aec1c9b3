"""SQL types <-> Spark types."""

from __future__ import annotations

from functools import singledispatch

from pyspark.sql import types as st

from qtt import sqltypes as t
from qtt.errors import RuntimeBuildError

_PRIMITIVES: dict[str, st.DataType] = {
    "BOOLEAN": st.BooleanType(),
    "INTEGER": st.IntegerType(),
    "BIGINT": st.LongType(),
    "DOUBLE": st.DoubleType(),
    "STRING": st.StringType(),
    "BYTES": st.BinaryType(),
    "DATE": st.DateType(),
    "TIME": st.TimeType(6),
    "TIMESTAMP": st.TimestampType(),
}


@singledispatch
def to_spark(type_: t.SqlType) -> st.DataType:
    """The Spark type that holds values of ``type_``."""
    msg = f"no Spark type for SQL type {type_} ({type(type_).__qualname__}); register one with @to_spark.register"
    raise RuntimeBuildError(msg)


@to_spark.register
def _to_spark_primitive(type_: t.Primitive) -> st.DataType:
    return _PRIMITIVES[type_.name]


@to_spark.register
def _to_spark_decimal(type_: t.Decimal) -> st.DataType:
    return st.DecimalType(type_.precision, type_.scale)


@to_spark.register
def _to_spark_array(type_: t.Array) -> st.DataType:
    return st.ArrayType(to_spark(type_.element), containsNull=True)


@to_spark.register
def _to_spark_map(type_: t.Map) -> st.DataType:
    return st.MapType(to_spark(type_.key), to_spark(type_.value), valueContainsNull=True)


@to_spark.register
def _to_spark_struct(type_: t.Struct) -> st.DataType:
    return st.StructType([st.StructField(f.name, to_spark(f.type), nullable=True) for f in type_.fields])


def from_spark(type_: st.DataType) -> t.SqlType:
    """The SQL type of a Spark column, so a built step's schema can be checked against its plan."""
    if isinstance(type_, st.DecimalType):
        return t.Decimal(type_.precision, type_.scale)
    if isinstance(type_, st.ArrayType):
        return t.Array(from_spark(type_.elementType))
    if isinstance(type_, st.MapType):
        return t.Map(from_spark(type_.keyType), from_spark(type_.valueType))
    if isinstance(type_, st.StructType):
        return t.Struct(tuple(t.Field(f.name, from_spark(f.dataType)) for f in type_.fields))
    if isinstance(type_, st.TimeType):
        return t.TIME
    for name, spark_type in _PRIMITIVES.items():
        if type(spark_type) is type(type_):
            return t.Primitive(name)
    msg = f"no SQL type for Spark type {type_.simpleString()}; qtt only reads the types to_spark() writes"
    raise RuntimeBuildError(msg)


def struct_of(columns: list[tuple[str, t.SqlType]]) -> st.StructType:
    """The Spark struct of named SQL-typed columns, every field nullable."""
    return st.StructType([st.StructField(name, to_spark(type_), nullable=True) for name, type_ in columns])
