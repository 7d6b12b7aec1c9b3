"""Spark's own upgrade operations, each a scenario of the restored replay.

An operator who upgrades Spark under a running query often changes a Spark setting in the same
step: more shuffle partitions for a bigger cluster, the other state store provider, the newer
checkpoint format, changelog checkpointing off. Each operation here restores every stored
checkpoint on a session of today's Spark with that setting changed, and the result must be
the plain restored replay's: the recorded outputs, internal topics and processing log from the
restore point on. Where Spark refuses the path, the result names Spark's error class, and is a
failure unless :mod:`~qtt.harness.historical.refusals` holds a dated entry for it.

What Spark documents for each: a query restarted from a checkpoint keeps the shuffle partitions
and the state store provider its offset log pinned; the checkpoint format version may move
from 1 to 2 on a running query; the state data source reads a change feed only from change logs,
so without them the state can be resumed but not read back as internal topics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from qtt.runtime.spark.session import HDFS_PROVIDER


@dataclass(frozen=True)
class SparkOperation:
    """A change of Spark settings at the restore, run as scenario ``scenario``."""

    scenario: str
    #: what the operator did, as results name it: ``with 4 shuffle partitions``
    title: str
    settings: Mapping[str, str] = field(default_factory=dict)


OPERATIONS: dict[str, SparkOperation] = {
    op.scenario: op
    for op in (
        SparkOperation(
            "restored-partitions", "with 4 shuffle partitions instead of 1", {"spark.sql.shuffle.partitions": "4"}
        ),
        SparkOperation(
            "restored-hdfs",
            "with the HDFS-backed state store provider as the default",
            {"spark.sql.streaming.stateStore.providerClass": HDFS_PROVIDER},
        ),
        SparkOperation(
            "restored-format2",
            "with checkpoint format version 2",
            {"spark.sql.streaming.stateStore.checkpointFormatVersion": "2"},
        ),
        SparkOperation(
            "restored-no-changelog",
            "with RocksDB changelog checkpointing off",
            {"spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "false"},
        ),
    )
}
