"""ksqlDB's schema inference: the columns of a CREATE statement that declares none, read from
the schema registered for its topic (``DefaultSchemaInjector``).

The planner never talks to a registry. It gets the schemas a case registers before its
statements run (its ``topics`` entries) as plain data, and the plan it writes holds the
inferred columns, so a historical replay needs no inference at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qtt.errors import StatementError
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import KEY, VALUE, Column
from qtt.serde import get_format
from qtt.serde.registry.registry_format import SCHEMA_ID, RegistryFormat

#: the column a schema gets when it is not a record of fields, as ksqlDB names it
KEY_COLUMN, VALUE_COLUMN = "ROWKEY", "ROWVAL"


@dataclass(frozen=True, kw_only=True)
class TopicSchema:
    """A schema a case registers under a topic's key or value subject, as the case file writes it
    (Avro and JSON schemas as JSON, Protobuf schemas as text)."""

    document: Any
    #: the id the case asks the registry to give it (``keySchemaId`` / ``valueSchemaId``)
    schema_id: int | None = None
    #: the schemas it imports, as (import name, schema text)
    references: tuple[tuple[str, str], ...] = ()


#: (topic, is_key) -> the schema registered for it before the statements run
TopicSchemas = Mapping[tuple[str, bool], TopicSchema]


def infers(info: s.FormatInfo) -> bool:
    """Whether the format reads its columns from the registry when none are declared."""
    format_ = get_format(info.format)
    return isinstance(format_, RegistryFormat) and format_.uses_registry


def _registered(topic: str, info: s.FormatInfo, schemas: TopicSchemas, *, is_key: bool) -> TopicSchema | None:
    """The schema a side reads: the one its ``schemaId`` property names, else its subject's."""
    wanted = info.properties.get(SCHEMA_ID)
    if wanted is not None:
        return next((found for found in schemas.values() if found.schema_id == int(wanted)), None)
    return schemas.get((topic, is_key))


def inferred_key(topic: str, info: s.FormatInfo, schemas: TopicSchemas) -> list[Column]:
    """Key columns from the key subject's schema: one ``ROWKEY`` column, or none if nothing is registered."""
    found = _registered(topic, info, schemas, is_key=True)
    if found is None or not infers(info):
        return []
    format_ = get_format(info.format)
    assert isinstance(format_, RegistryFormat)
    columns = format_.infer_columns(
        format_.schema_text_of(found.document),
        is_key=True,
        unwrapped=True,
        properties=info.properties,
        references=found.references,
    )
    return [Column(name or KEY_COLUMN, type_, namespace=KEY) for name, type_ in columns]


def inferred_value(topic: str, info: s.FormatInfo, schemas: TopicSchemas, *, unwrapped: bool) -> list[Column]:
    """Value columns from the value subject's schema.

    Raises:
        StatementError: nothing is registered under the subject (ksqlDB's message).
    """
    found = _registered(topic, info, schemas, is_key=False)
    if found is None and SCHEMA_ID in info.properties:
        msg = f"Schema with id {info.properties[SCHEMA_ID]} does not exist in the Schema Registry."
        raise StatementError(msg)
    if found is None:
        subject = f"{topic}-value"
        msg = f"Schema for message values on topic '{topic}' does not exist in the Schema Registry.\nSubject: {subject}"
        raise StatementError(msg)
    format_ = get_format(info.format)
    assert isinstance(format_, RegistryFormat)
    return [
        Column(name or VALUE_COLUMN, type_, namespace=VALUE)
        for name, type_ in format_.infer_columns(
            format_.schema_text_of(found.document),
            is_key=False,
            unwrapped=unwrapped,
            properties=info.properties,
            references=found.references,
        )
    ]
