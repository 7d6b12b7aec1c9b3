"""Which schemas a replay registers, in which order, as ksqlDB and its test runner do.

1. The case file's ``topics`` entries with a ``keySchema`` / ``valueSchema``, in file order,
   before any statement runs (ksqlDB's runner registers them first). A historical replay
   registers the same schemas from its ``spec.json`` instead.
2. Each CREATE statement, in order, as ksqlDB's ``SchemaRegisterInjector`` does: a CREATE
   STREAM/TABLE registers its key and value schemas when the subject does not exist yet; a
   C*AS always registers its sink's. A ``KEY_SCHEMA_ID`` / ``VALUE_SCHEMA_ID`` property
   writes with that schema instead of registering one.

With the embedded registry, the same case therefore always gets the same ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from qtt.errors import CaseFileError
from qtt.harness.cases.model import TopicSpec
from qtt.plan.ddl.schema_inference import TopicSchema
from qtt.plan.ir import steps as s
from qtt.serde import get_format
from qtt.serde.interface import SerdeColumn
from qtt.serde.registry.registry_format import SCHEMA_ID, RegistryFormat
from qtt.serde.registry.schema_registry import RegisteredSchema, Registry, SchemaReference, subject_for

#: a case file's topic format -> the registry's schema type
_SCHEMA_TYPES = {"AVRO": "AVRO", "PROTOBUF": "PROTOBUF", "JSON_SR": "JSON", "JSON": "JSON"}


def topic_schemas(topics: Sequence[TopicSpec]) -> dict[tuple[str, bool], TopicSchema]:
    """The schemas a case's ``topics`` register, for the planner's schema inference.

    Each gets the id the embedded registry gives it (:func:`registry_for_case` registers them
    in this order, before any statement), or the one the case asks for, so that a
    ``VALUE_SCHEMA_ID`` in a statement finds the schema it names.
    """
    found: dict[tuple[str, bool], TopicSchema] = {}
    last_id = 0
    for topic in topics:
        for is_key, schema, asked in (
            (True, topic.key_schema, topic.key_schema_id),
            (False, _value_schema(topic), topic.value_schema_id),
        ):
            if schema is None:
                continue
            references = _references(topic.key_schema_references if is_key else topic.value_schema_references)
            schema_id = asked if asked is not None else last_id + 1
            # the registry numbers on from the highest id it holds; each reference takes one too
            last_id = max(last_id, schema_id) + len(references)
            found[(topic.name, is_key)] = TopicSchema(
                document=schema,
                schema_id=schema_id,
                references=tuple((name, text) for name, text, _ in references),
                schema_type=_named_schema_type(topic, is_key=is_key),
            )
    return found


def _references(declared: Any) -> list[tuple[str, str, str]]:
    """A case topic's ``keySchemaReferences`` / ``valueSchemaReferences`` as (name, schema text, schema type)."""
    found = []
    for reference in declared or ():
        if not isinstance(reference, dict) or "name" not in reference or "schema" not in reference:
            continue
        schema_type = _SCHEMA_TYPES.get(str(reference.get("format") or "PROTOBUF").upper(), "PROTOBUF")
        schema = reference["schema"]
        text = schema if isinstance(schema, str) and schema_type == "PROTOBUF" else json.dumps(schema)
        found.append((str(reference["name"]), text, schema_type))
    return found


def uses_registry(plan: s.Plan) -> bool:
    """Whether any topic of the plan is written or read in a registry format."""
    for command in plan.ddl_commands():
        if isinstance(command, s.CreateSourceCommand):
            for info in (command.formats.key_format, command.formats.value_format):
                if isinstance(get_format(info.format), RegistryFormat):
                    return True
    return False


def registry_for_case(plan: s.Plan, topics: Sequence[TopicSpec], *, where: str = "$.topics") -> Registry | None:
    """A fresh registry holding the case's topic schemas, then the statements' own."""
    declared = [topic for topic in topics if topic.key_schema is not None or _value_schema(topic) is not None]
    if not declared and not uses_registry(plan):
        return None
    registry = Registry()
    formats = _topic_formats(plan)
    for index, topic in enumerate(topics):
        for is_key, schema in ((True, topic.key_schema), (False, _value_schema(topic))):
            if schema is None:
                continue
            schema_type = _schema_type(topic, is_key=is_key, plan_format=formats.get((topic.name, is_key)))
            if schema_type is None:
                continue
            text = schema if schema_type == "PROTOBUF" and isinstance(schema, str) else json.dumps(schema)
            try:
                _register_with_references(
                    registry,
                    subject_for(topic.name, is_key=is_key),
                    schema_type,
                    text,
                    _references(topic.key_schema_references if is_key else topic.value_schema_references),
                    schema_id=topic.key_schema_id if is_key else topic.value_schema_id,
                )
            except Exception as e:
                field = "keySchema" if is_key else "valueSchema"
                msg = f"the schema registry refused the topic's {field}: {e}"
                raise CaseFileError(msg, path=f"{where}[{index}].{field}") from None
    register_statement_schemas(registry, plan)
    return registry


def _register_with_references(
    registry: Registry,
    subject: str,
    schema_type: str,
    text: str,
    references: list[tuple[str, str, str]],
    *,
    schema_id: int | None,
) -> None:
    """Register a case schema and its references, each reference under a subject named after it.

    ksqlDB's runner registers the schema before its references, so with the embedded registry
    a schema without an id of its own takes the first free id (cases name it). A real registry
    needs the references first, and so does a schema with its own id, whose references must not
    take an id that a later case schema names.
    """
    if not references:
        registry.register(subject, schema_type, text, origin="case", schema_id=schema_id)
        return
    if not registry.embedded or schema_id is not None:
        found = tuple(_register_reference(registry, name, body, kind) for name, body, kind in references)
        registry.register(subject, schema_type, text, found, origin="case", schema_id=schema_id)
        return
    planned = tuple(
        SchemaReference(name=name, subject=name, version=_version_for(registry, name, body))
        for name, body, _ in references
    )
    registry.register(subject, schema_type, text, planned, origin="case", schema_id=schema_id)
    for name, body, kind in references:
        _register_reference(registry, name, body, kind)


def _register_reference(registry: Registry, name: str, text: str, schema_type: str) -> SchemaReference:
    registered = registry.register(name, schema_type, text, origin="case")
    return SchemaReference(name=name, subject=registered.subject, version=registered.version)


def _version_for(registry: Registry, subject: str, text: str) -> int:
    """The version ``text`` has, or will get when registered, under ``subject``."""
    latest = registry.latest(subject)
    if latest is None:
        return 1
    return latest.version if latest.schema == text else latest.version + 1


def registry_for_recorded(plan: s.Plan, recorded: Iterable[RegisteredSchema]) -> Registry | None:
    """A fresh registry holding what a historical replay's case registered, then the statements'."""
    from_case = [schema for schema in recorded if schema.origin == "case"]
    if not from_case and not uses_registry(plan):
        return None
    registry = Registry()
    for schema in from_case:
        registry.register(
            schema.subject,
            schema.schema_type,
            schema.schema,
            schema.references,
            origin="case",
            schema_id=schema.schema_id,
        )
    register_statement_schemas(registry, plan)
    return registry


def register_statement_schemas(registry: Registry, plan: s.Plan) -> None:
    """Register what each CREATE statement of the plan registers in ksqlDB, in statement order."""
    sinks = {query.sink for query in plan.queries()}
    for command in plan.ddl_commands():
        if not isinstance(command, s.CreateSourceCommand):
            continue
        always = command.source_name in sinks
        for is_key, info, columns, features in (
            (True, command.formats.key_format, command.schema.key, command.formats.key_features),
            (False, command.formats.value_format, command.schema.value, command.formats.value_features),
        ):
            format_ = get_format(info.format)
            if not isinstance(format_, RegistryFormat) or not format_.uses_registry or not columns:
                continue
            if SCHEMA_ID in info.properties:
                continue
            subject = subject_for(command.topic, is_key=is_key)
            if not always and registry.latest(subject) is not None:
                continue
            text = format_.registered_schema_text(
                [SerdeColumn(c.name, c.type) for c in columns],
                is_key=is_key,
                properties=info.properties,
                features=features,
                writer_version=info.writer_version,
            )
            registry.register(subject, format_.schema_type, text)


def _topic_formats(plan: s.Plan) -> dict[tuple[str, bool], str]:
    """(topic, is_key) -> the format the first source over the topic declares."""
    found: dict[tuple[str, bool], str] = {}
    for command in plan.ddl_commands():
        if isinstance(command, s.CreateSourceCommand):
            found.setdefault((command.topic, True), command.formats.key_format.format)
            found.setdefault((command.topic, False), command.formats.value_format.format)
    return found


def _schema_type(topic: TopicSpec, *, is_key: bool, plan_format: str | None) -> str | None:
    """The registry schema type of a case topic's schema: its format, else its reader's."""
    named: Any = (topic.key_format if is_key else topic.value_format) or topic.format
    if isinstance(named, dict):
        named = named.get("format")
    if named:
        return _SCHEMA_TYPES.get(str(named).upper())
    # ksqlDB's runner reads a schema without a format as its reader's format, else as Avro
    return _SCHEMA_TYPES.get(plan_format or "", "AVRO")


def _named_schema_type(topic: TopicSpec, *, is_key: bool) -> str | None:
    """The registry schema type of a case topic's schema when the case names its format."""
    named: Any = (topic.key_format if is_key else topic.value_format) or topic.format
    if isinstance(named, dict):
        named = named.get("format")
    return _SCHEMA_TYPES.get(str(named).upper()) if named else None


def _value_schema(topic: TopicSpec) -> Any:
    """The topic's value schema: ``valueSchema``, else ksqlDB's older name for it, ``schema``."""
    return topic.value_schema if topic.value_schema is not None else topic.schema
