"""Topic serde views for the harness: case-file JSON <-> bytes, per topic, from a plan.

Everything here is derived from the plan's DDL commands, so a historical plan decodes its
topics exactly as it did when it was persisted, even after its case file changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from qtt.plan import steps as s
from qtt.plan.schema import LogicalSchema
from qtt.serde import Format, SerdeColumn, get_format


@dataclass(frozen=True)
class TopicSerde:
    """How one topic's keys and values are written, and which columns they hold."""

    topic: str
    schema: LogicalSchema
    formats: s.Formats

    @property
    def key_columns(self) -> list[SerdeColumn]:
        return [SerdeColumn(c.name, c.type) for c in self.schema.key]

    @property
    def value_columns(self) -> list[SerdeColumn]:
        return [SerdeColumn(c.name, c.type) for c in self.schema.value]

    def _key_format(self) -> Format:
        return get_format(self.formats.key_format.format)

    def _value_format(self) -> Format:
        return get_format(self.formats.value_format.format)

    def encode_key(self, document: Any) -> bytes | None:
        return self._key_format().from_document(
            document, self.key_columns, is_key=True, properties=self.formats.key_format.properties
        )

    def encode_value(self, document: Any) -> bytes | None:
        return self._value_format().from_document(
            document,
            self.value_columns,
            is_key=False,
            properties=self.formats.value_format.properties,
        )

    def decode_key(self, data: bytes | None) -> Any:
        return self._key_format().to_document(
            data, self.key_columns, is_key=True, properties=self.formats.key_format.properties
        )

    def decode_value(self, data: bytes | None) -> Any:
        return self._value_format().to_document(
            data, self.value_columns, is_key=False, properties=self.formats.value_format.properties
        )


def topic_serdes(commands: Iterable[s.DdlCommand]) -> dict[str, TopicSerde]:
    """Topic -> serde view; the first stream or table declared over a topic defines it."""
    out: dict[str, TopicSerde] = {}
    for command in commands:
        if isinstance(command, s.CreateSourceCommand):
            topic = command.topic
            if topic not in out:
                out[topic] = TopicSerde(topic, command.schema, command.formats)
    return out


def sink_serdes(plan: s.Plan) -> dict[str, TopicSerde]:
    """Sink topic -> the serde of the source that the writing query declared."""
    by_name = {c.source_name: c for c in plan.ddl_commands() if hasattr(c, "topic")}
    out: dict[str, TopicSerde] = {}
    for query in plan.queries():
        command = by_name.get(query.sink)
        sink = query.physical_plan
        if command is not None and hasattr(sink, "topic"):
            out.setdefault(sink.topic, TopicSerde(sink.topic, command.schema, sink.formats))  # type: ignore[attr-defined]
    return out
