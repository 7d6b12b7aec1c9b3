"""Topic serde views for the harness: case-file JSON <-> bytes, per topic, from a plan.

Everything here is derived from the plan's DDL commands, so a historical plan decodes its
topics exactly as it did when it was persisted, even after its case file changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from qtt.errors import SerdeError
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import LogicalSchema
from qtt.serde import Format, SerdeColumn, get_format, windowed
from qtt.serde.registry.schema_registry import RegistrySnapshot, subject_for


@dataclass(frozen=True)
class TopicSerde:
    """How one topic's keys and values are written, and which columns they hold."""

    topic: str
    schema: LogicalSchema
    formats: s.Formats
    #: the replay's registry, for the registry formats (set by :meth:`with_registry`)
    registry: RegistrySnapshot | None = None

    def with_registry(self, registry: RegistrySnapshot | None) -> TopicSerde:
        return replace(self, registry=registry)

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

    def _side(self, is_key: bool) -> dict[str, Any]:
        info = self.formats.key_format if is_key else self.formats.value_format
        features = self.formats.key_features if is_key else self.formats.value_features
        return {
            "is_key": is_key,
            "properties": info.properties,
            "features": frozenset(features),
            "topic": self.topic,
            "registry": self.registry,
            "subject": subject_for(self.topic, is_key=is_key),
        }

    def encode_key(self, document: Any, window: Any = None) -> bytes | None:
        """The key's bytes; a windowed topic's key also carries ``window`` (start, end, type).

        Raises:
            SerdeError: the document does not fit the key format, or a windowed topic's record
                has no window.
        """
        inner = self._key_format().from_document(document, self.key_columns, **self._side(True))
        info = self.formats.window
        if info is None:
            return inner
        if window is None:
            msg = f"a record of {self.topic} needs a window (start, end, type): its keys are {info.type}-windowed"
            raise SerdeError(msg)
        return windowed.wrap(inner, window.start, window.end, info.type)

    def encode_value(self, document: Any) -> bytes | None:
        return self._value_format().from_document(document, self.value_columns, **self._side(False))

    def decode_key(self, data: bytes | None) -> Any:
        window = self.formats.window
        if window is not None and data is not None:
            data = windowed.unwrap(data, window.type, window.size_ms)[0]
        return self._key_format().to_document(data, self.key_columns, **self._side(True))

    def decode_window(self, data: bytes | None) -> windowed.WindowBounds | None:
        """The window of a windowed key; None for a topic without windowed keys."""
        window = self.formats.window
        if window is None or data is None:
            return None
        return windowed.unwrap(data, window.type, window.size_ms)[1]

    def write_row(self, row: tuple[Any, ...] | None, *, is_key: bool) -> bytes | None:
        """The bytes of a row of typed column values (a key or a value); None for a null row."""
        fmt = self._key_format() if is_key else self._value_format()
        columns = self.key_columns if is_key else self.value_columns
        return fmt.serializer(columns, **self._side(is_key))(row)

    def read_row(self, data: bytes | None, *, is_key: bool) -> tuple[Any, ...] | None:
        """A key's or a value's typed column values; a windowed key without its window."""
        window = self.formats.window
        if is_key and window is not None and data is not None:
            data = windowed.unwrap(data, window.type, window.size_ms)[0]
        fmt = self._key_format() if is_key else self._value_format()
        columns = self.key_columns if is_key else self.value_columns
        return fmt.deserializer(columns, **self._side(is_key))(data)

    def decode_value(self, data: bytes | None) -> Any:
        return self._value_format().to_document(data, self.value_columns, **self._side(False))


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
