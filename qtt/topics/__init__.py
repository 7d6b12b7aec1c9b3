"""Topics: how records are routed to partitions, as Kafka's producer does it."""

from __future__ import annotations
