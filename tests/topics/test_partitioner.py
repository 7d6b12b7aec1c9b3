"""Kafka's default partitioner, checked against Kafka's own test vectors."""

from __future__ import annotations

import pytest

from qtt.topics.partitioner import murmur2, partition_for

# org.apache.kafka.common.utils.UtilsTest#testMurmur2
KAFKA_VECTORS = {
    "21": -973932308,
    "foobar": -790332482,
    "a-little-bit-long-string": -985981536,
    "a-little-bit-longer-string": -1486304829,
    "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    "abc": 479470107,
}


@pytest.mark.parametrize(("text", "expected"), KAFKA_VECTORS.items())
def test_murmur2_matches_kafka(text: str, expected: int) -> None:
    assert murmur2(text.encode("utf-8")) == expected


def test_partition_is_positive_hash_modulo_partitions() -> None:
    assert partition_for(b"foobar", 4) == (-790332482 & 0x7FFFFFFF) % 4
    assert {partition_for(bytes([i]), 3) for i in range(50)} == {0, 1, 2}


def test_single_partition_and_null_keys() -> None:
    assert partition_for(b"anything", 1) == 0
    assert partition_for(None, 4, fallback=6) == 2
