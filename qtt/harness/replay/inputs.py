"""A replay's input records as bytes: a case's inputs and ``INSERT INTO ... VALUES`` rows, each
written with the formats of the first source declared over its topic."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass

from qtt.errors import CaseFileError, SerdeError
from qtt.harness.cases.model import Record
from qtt.harness.replay.topic_serdes import TopicSerde, topic_serdes
from qtt.plan.inserts import Insert
from qtt.plan.ir import steps as s
from qtt.plan.ir.depth import deep_call
from qtt.runtime.jobs import Headers
from qtt.serde.excerpt import json_value
from qtt.serde.registry.schema_registry import RegistrySnapshot


@dataclass(frozen=True)
class InputRecord:
    """An input record as bytes, ready to replay. ``new_batch`` is the case's ``qttBatch``."""

    topic: str
    timestamp: int
    key: bytes | None
    value: bytes | None
    partition: int = 0
    headers: Headers = ()
    new_batch: bool = False


def encode_inputs(
    plan: s.Plan,
    inputs: Sequence[Record],
    *,
    where: str = "$.inputs",
    registry: RegistrySnapshot | None = None,
    inserts: Sequence[Insert] = (),
) -> list[InputRecord]:
    """Input records as bytes, with the formats of the first source declared over each topic,
    then the ``inserts`` (a case's ``INSERT INTO ... VALUES`` rows) that :func:`piped_inserts`
    keeps.

    Runs on the large stack of :func:`~qtt.plan.ir.depth.deep_call`: a record's value may nest
    as deep as a case file may (:data:`~qtt.plan.ir.depth.MAX_JSON_DEPTH`), and writing it out
    (as JSON text, or into a STRING field) recurses once per level.

    Raises:
        CaseFileError: a record names an unknown topic or does not fit its format, with its path.
    """
    serdes = {topic: serde.with_registry(registry) for topic, serde in topic_serdes(plan.ddl_commands()).items()}

    def encode() -> list[InputRecord]:
        pending = []
        for position, record in enumerate(inputs):
            serde = serdes.get(record.topic)
            path = f"{where}[{position}]"
            if serde is None:
                known = ", ".join(sorted(serdes)) or "none"
                msg = f"input record for topic {record.topic!r}, which no stream or table reads; known topics: {known}"
                raise CaseFileError(msg, path=path)
            try:
                key = serde.encode_key(record.key, record.window)
            except (SerdeError, ValueError, TypeError, ArithmeticError) as e:
                msg = f"cannot write key {json_value(record.key)} as {serde.formats.key_format.format}: {e}"
                raise CaseFileError(msg, path=f"{path}.key") from None
            try:
                value = serde.encode_value(record.value)
            except (SerdeError, ValueError, TypeError, ArithmeticError) as e:
                msg = f"cannot write value as {serde.formats.value_format.format}: {e}"
                raise CaseFileError(msg, path=f"{path}.value") from None
            headers = tuple(
                (h.KEY, None if h.VALUE is None else base64.b64decode(h.VALUE)) for h in record.headers or ()
            )
            pending.append(InputRecord(record.topic, record.timestamp or 0, key, value, 0, headers, record.qtt_batch))
        pending += [encode_insert(insert, serdes[insert.source.topic]) for insert in piped_inserts(inputs, inserts)]
        return pending

    return deep_call(encode)


def piped_inserts(records: Sequence[Record], inserts: Sequence[Insert]) -> list[Insert]:
    """The inserted rows a case's queries read: those into topics its input records do not name
    (ksqlDB's test driver pipes a topic's provided inputs, or else what was written to it)."""
    named = {record.topic for record in records}
    return [insert for insert in inserts if insert.source.topic not in named]


def encode_insert(insert: Insert, serde: TopicSerde) -> InputRecord:
    """An inserted row as the bytes its topic's formats (with their registry) write."""
    has_key = any(value is not None for value in insert.key)
    key = serde.write_row(insert.key, is_key=True) if has_key else None
    value = serde.write_row(insert.value, is_key=False)
    return InputRecord(insert.source.topic, insert.timestamp, key, value)
