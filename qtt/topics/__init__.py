"""Topics: how records are routed to partitions, as Kafka's producer does it."""

from __future__ import annotations

from qtt.topics.partitioner import partition_for

__all__ = ["partition_for"]
