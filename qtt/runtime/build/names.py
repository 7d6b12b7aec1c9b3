"""Column names the runtime adds to stream DataFrames, next to the key and value columns.

Every internal column name is spelled here once; the rest of the runtime uses these
constants. ksqlDB's pseudo columns (``ROWTIME`` ...) are the plan's
(:mod:`qtt.plan.ir.schema`), re-exported here so runtime code finds every name in one place.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from qtt.plan.ir.gate_steps import CONTROL_HEADER
from qtt.plan.ir.schema import PSEUDO_COLUMNS, ROWOFFSET, ROWPARTITION, ROWTIME
from qtt.runtime.spark.jvm_functions import per_session

__all__ = [
    "DECODED",
    "HAD_PREVIOUS",
    "JOIN_SIDE",
    "NULL_KEY",
    "OP",
    "ORDER",
    "PSEUDO_COLUMNS",
    "ROWOFFSET",
    "ROWPARTITION",
    "ROWTIME",
    "SEQ",
    "STREAM_TIME",
    "SYSTEM_COLUMNS",
    "TOMBSTONE",
    "WINDOW_END",
    "WINDOW_START",
    "argument_column",
    "col",
    "control_header",
    "data_col",
    "group_column",
    "is_control",
    "is_data",
    "is_stored",
    "previous_name",
    "stored",
]

_PREFIX = "__qtt_"  # keeps the runtime's columns apart from the query's own

SEQ = _PREFIX + "seq"  # the input record's position in the case: orders all outputs
TOMBSTONE = _PREFIX + "tombstone"  # the record's value was null (a "null row" in ksqlDB)
# The record's key was null, which ksqlDB keeps apart from a key whose columns are all null:
# a sink writes a null key for it, whatever the key format.
NULL_KEY = _PREFIX + "null_key"
SYSTEM_COLUMNS = (*PSEUDO_COLUMNS, SEQ, TOMBSTONE, NULL_KEY)

DECODED = _PREFIX + "decoded"  # a source record's decoded key, value and error, before it is split
ORDER = _PREFIX + "order"  # position among the outputs of one input record
HAD_PREVIOUS = _PREFIX + "had_previous"  # whether the group had a result before this one
OP = _PREFIX + "op"  # +1 adds a row to its group, -1 retracts it (table aggregation)
STREAM_TIME = _PREFIX + "stream_time"  # the newest timestamp the row's source partition has shown
# A windowed row's window, kept next to the system columns through every later step (the sink
# writes it into the key); WINDOWSTART and WINDOWEND are the same values as the query sees them.
WINDOW_START = _PREFIX + "window_start"
WINDOW_END = _PREFIX + "window_end"
WINDOW_SUFFIX = _PREFIX + "window_suffix"  # a windowed key's bytes after the key's own (sink_builder)
WINDOW_POSITION = _PREFIX + "window_position"  # a row's window among those it joins, by start
INNER_KEY = _PREFIX + "inner_key"  # a windowed key's own bytes, which route it to a partition
JOIN_SIDE = _PREFIX + "join_side"  # which input of a join a row comes from: 0 left, 1 right
KEY_BYTES = _PREFIX + "key_bytes"  # a final window's key in its store's key format (emit order)
# What a change of a left row asks of a foreign-key join (qtt.runtime.operators.fk_joins).
INSTRUCTION = _PREFIX + "instruction"
# Whether a foreign-key join's subscription still holds its left row as it is.
CURRENT = _PREFIX + "current"
# A staged replay (qtt.runtime.execute.staged): which operator slot of a stage a row belongs to.
SLOT = _PREFIX + "slot"
# A wide operator's record of one state write, in write order: the state variable's position,
# the unit that wrote it, and whether it was a delete (qtt.runtime.operators.wide).
WRITE_STATE = _PREFIX + "write_state"
WRITE_UNIT = _PREFIX + "write_unit"
WRITE_DELETE = _PREFIX + "write_delete"


def wide_column(pool: str, index: int) -> str:
    """Column ``index`` of a wide operator's ``pool`` (``key``, ``value``, ``output``, or a state
    variable's fields, ``state<n>``): slots whose columns have one data type share that type's
    columns (:class:`qtt.runtime.operators.wide.WideLayout`)."""
    return f"{_PREFIX}{pool}_{index}"


def sink_field(part: str, index: int) -> str:
    """Column ``index`` of a sink's key (``part`` ``k``) or value (``v``), typed, for the driver to
    encode (:class:`qtt.runtime.build.sink_builder.SinkEncoding`)."""
    return f"{_PREFIX}sink_{part}{index}"


#: a group's source: the source steps whose records could not be decoded ahead, per record
UNDECODED = _PREFIX + "undecoded"


def pooled_state(position: int) -> str:
    """The wide operator's state variable holding the ``position``-th state variable of every
    slot (:mod:`qtt.runtime.operators.wide`): slots keep their rows apart by the slot column of the key,
    and their fields apart by column, as their inputs."""
    return f"{_PREFIX}state{position}"


def previous_name(alias: str) -> str:
    """The column holding a group's previous result of aggregate ``alias``."""
    return f"{_PREFIX}previous_{alias}"


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def spark_safe(name: str) -> str:
    """``name``, or a stand-in unless it is a plain identifier: PySpark's ``transformWithState``
    looks its input columns up by unquoted name (``df[name]``, which splits ``a.b`` in two), and
    its state schemas take Avro's names only (``[A-Za-z_][A-Za-z0-9_]*``)."""
    return name if _IDENTIFIER.fullmatch(name) else f"{_PREFIX}quoted_{name.encode().hex()}"


def group_column(name: str) -> str:
    """The stand-in column grouping by ``name`` (its value as JSON text, which Spark can key on)."""
    return f"{_PREFIX}group_{name}"


def argument_column(call: int, argument: int) -> str:
    """The column holding argument ``argument`` of aggregate call ``call``."""
    return f"{_PREFIX}arg_{call}_{argument}"


@per_session(maxsize=8192)
def col(name: str) -> Column:
    """A column by exact name, whatever characters the name holds."""
    return F.col("`" + name.replace("`", "``") + "`")


def stored(name: str) -> str:
    """The DataFrame column holding data column ``name``.

    A key column named like a pseudo column (``PARTITION BY ROWTIME``) is not the pseudo column:
    a null row's new key is null while its ``ROWTIME`` is not, so it lives under its own name.
    """
    return f"{_PREFIX}data_{name}" if name in PSEUDO_COLUMNS else name


def is_stored(df: DataFrame, name: str) -> bool:
    """Whether ``df`` holds data column ``name`` under its :func:`stored` name."""
    return stored(name) != name and stored(name) in df.columns


def data_col(df: DataFrame, name: str, *, named: bool = True) -> Column:
    """Data column ``name`` of ``df``, wherever it lives; ``named`` gives it its own name."""
    if not is_stored(df, name):
        return col(name)
    return col(stored(name)).alias(name) if named else col(stored(name))


def control_header(header: Column) -> Column:
    """Whether one header (a ``key``, ``value`` struct) marks a control event."""
    return header.getField("key") == F.lit(CONTROL_HEADER)


def is_control(headers: Column) -> Column:
    """Whether a replay source record (its ``headers`` column) is a control event of a
    swap-in-place upgrade (:mod:`qtt.plan.ir.gate_steps`), which no step decodes as data."""
    return F.exists(headers, control_header)


@per_session(maxsize=1)
def is_data() -> Column:
    """Whether a replay source record is data: not a control event (:func:`is_control`)."""
    return ~is_control(F.col("headers"))
