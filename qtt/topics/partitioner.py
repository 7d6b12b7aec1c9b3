"""Kafka's default partitioner: ``toPositive(murmur2(keyBytes)) % numPartitions``.

Pure Python, so that the harness and the Spark runtime route a key to the same partition
that a Kafka producer would.
"""

from __future__ import annotations

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's 32-bit murmur2 hash (``org.apache.kafka.common.utils.Utils.murmur2``), signed."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = (h * _M) & _MASK
        h ^= k
    tail = length % 4
    if tail == 3:
        h ^= data[whole + 2] << 16
    if tail >= 2:
        h ^= data[whole + 1] << 8
    if tail >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(key: bytes | None, partitions: int, *, fallback: int = 0) -> int:
    """The partition Kafka's default partitioner picks for ``key``.

    A null key has no hash: Kafka spreads such records over partitions as it sees fit, so
    qtt keeps them deterministic by using ``fallback`` (the input record's partition).
    """
    if partitions <= 1:
        return 0
    if key is None:
        return fallback % partitions
    return (murmur2(key) & 0x7FFFFFFF) % partitions
