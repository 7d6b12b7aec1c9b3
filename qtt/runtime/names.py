"""Column names the runtime adds to every stream DataFrame, next to the key and value columns."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

ROWTIME = "ROWTIME"
ROWPARTITION = "ROWPARTITION"
ROWOFFSET = "ROWOFFSET"
SEQ = "__qtt_seq"  # the input record's position in the case: orders all outputs
TOMBSTONE = "__qtt_tombstone"  # the record's value was null (a "null row" in ksqlDB)
# The record's key was null, which ksqlDB keeps apart from a key whose columns are all null:
# a sink writes a null key for it, whatever the key format.
NULL_KEY = "__qtt_null_key"
SYSTEM_COLUMNS = (ROWTIME, ROWPARTITION, ROWOFFSET, SEQ, TOMBSTONE, NULL_KEY)


def col(name: str) -> Column:
    """A column by exact name, whatever characters the name holds."""
    return F.col("`" + name.replace("`", "``") + "`")
