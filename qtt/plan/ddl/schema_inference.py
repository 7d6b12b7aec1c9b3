"""ksqlDB's schema inference: the columns of a CREATE statement that declares none, read from
the schema registered for its topic (``DefaultSchemaInjector``).

The planner never talks to a registry. It gets the schemas a case registers before its
statements run (its ``topics`` entries) as plain data, and the plan it writes holds the
inferred columns, so a historical replay needs no inference at all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qtt import sqltypes as t
from qtt.errors import QttError, StatementError
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import HEADER, HEADERS, KEY, VALUE, Column
from qtt.serde import get_format
from qtt.serde.interface import SerdeColumn
from qtt.serde.registry.protobuf_compile import parse
from qtt.serde.registry.registry_format import FULL_SCHEMA_NAME, SCHEMA_ID, IncompatibleSchema, RegistryFormat

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
    #: the registry's type of the schema (``AVRO``, ``PROTOBUF``, ``JSON``) when the case names its format
    schema_type: str | None = None


#: (topic, is_key) -> the schema registered for it before the statements run
TopicSchemas = Mapping[tuple[str, bool], TopicSchema]


def infers(info: s.FormatInfo) -> bool:
    """Whether the format reads its columns from the registry when none are declared."""
    format_ = get_format(info.format)
    return isinstance(format_, RegistryFormat) and format_.uses_registry


def _registered(topic: str | None, info: s.FormatInfo, schemas: TopicSchemas, *, is_key: bool) -> TopicSchema | None:
    """The schema a side reads: the one its ``schemaId`` property names, else its subject's."""
    wanted = info.properties.get(SCHEMA_ID)
    if wanted is not None:
        return next((found for found in schemas.values() if found.schema_id == int(wanted)), None)
    return None if topic is None else schemas.get((topic, is_key))


def _columns_of(
    topic: str | None, info: s.FormatInfo, found: TopicSchema, *, is_key: bool, unwrapped: bool
) -> tuple[str, list[tuple[str | None, t.SqlType]]]:
    """A registered schema's text, and the columns its format reads from it."""
    format_ = get_format(info.format)
    assert isinstance(format_, RegistryFormat)
    _check_schema_type(topic, info, found, is_key=is_key)
    text = format_.schema_text_of(found.document)
    try:
        columns = format_.infer_columns(
            text, is_key=is_key, unwrapped=unwrapped, properties=info.properties, references=found.references
        )
    except IncompatibleSchema as e:
        raise StatementError(_not_compatible(topic, info, e.message, text, is_key=is_key)) from None
    return text, columns


def _not_compatible(topic: str | None, info: s.FormatInfo, reason: str, text: str, *, is_key: bool) -> str:
    """``SchemaRegistryTopicSchemaSupplier.notCompatible``: a schema ksqlDB cannot translate."""
    schema_id = info.properties.get(SCHEMA_ID)
    return (
        f"Unable to verify if the {'key' if is_key else 'value'} schema for "
        f"{_source(topic, None if schema_id is None else int(schema_id))} is compatible with ksqlDB.\n"
        f"Reason: {reason}\n\n"
        "Please see https://github.com/confluentinc/ksql/issues/ to see if this particular reason is already "
        f"known.\nIf not, please log a new issue, including this full error message.\nSchema:{text}"
    )


def inferred_key(
    topic: str | None, info: s.FormatInfo, schemas: TopicSchemas, *, keyed: bool = False, definitions: bool = True
) -> list[Column]:
    """Key columns from the key subject's schema: one ``ROWKEY`` column.

    ``keyed``: another CREATE of the case declares key columns for the topic, whose key schema
    ksqlDB's test runner registers before the statements run; qtt does not infer from it and
    leaves the key out. ``definitions``: refuse a schema of several top-level types here (a
    CREATE checks them once both sides are read, :func:`inferred_columns`).

    Raises:
        StatementError: the format infers its key and nothing is registered under the subject
            (``DefaultSchemaInjector.getKeySchema``, ksqlDB's message).
    """
    found = _registered(topic, info, schemas, is_key=True)
    if found is None and SCHEMA_ID in info.properties:
        raise StatementError(not_found_message(topic, int(info.properties[SCHEMA_ID]), is_key=True))
    if not infers(info) or (found is None and keyed):
        return []
    if found is None:
        raise StatementError(not_found_message(topic, None, is_key=True))
    text, columns = _columns_of(topic, info, found, is_key=True, unwrapped=True)
    if len(columns) > 1:  # a Protobuf key message's fields
        schema_id = info.properties.get(SCHEMA_ID)
        msg = (
            f"The key schema for {_source(topic, None if schema_id is None else int(schema_id))} contains multiple "
            f"columns, which is not supported by ksqlDB at this time.\nSchema:{text}"
        )
        raise StatementError(msg)
    if definitions:
        _check_one_definition(info, found, is_key=True)
    return [Column(name or KEY_COLUMN, type_, namespace=KEY) for name, type_ in columns]


def inferred_value(
    topic: str | None, info: s.FormatInfo, schemas: TopicSchemas, *, unwrapped: bool, definitions: bool = True
) -> list[Column]:
    """Value columns from the value subject's schema (``definitions`` as for :func:`inferred_key`).

    Raises:
        StatementError: nothing is registered under the subject (ksqlDB's message).
    """
    found = _registered(topic, info, schemas, is_key=False)
    if found is None:
        schema_id = info.properties.get(SCHEMA_ID)
        raise StatementError(not_found_message(topic, None if schema_id is None else int(schema_id), is_key=False))
    text, columns = _columns_of(topic, info, found, is_key=False, unwrapped=unwrapped)
    if not unwrapped and [name for name, _ in columns] == [None] and not isinstance(columns[0][1], t.Struct):
        # ConnectFormatSchemaTranslator: only WRAP_SINGLE_VALUE=false reads a schema that is no record
        reason = (
            "Schema returned from schema registry is anonymous type. To use this schema with ksqlDB, set "
            "'WRAP_SINGLE_VALUE=false' in the WITH clause properties."
        )
        raise StatementError(_not_compatible(topic, info, reason, text, is_key=False))
    if definitions:
        _check_one_definition(info, found, is_key=False)
    return [Column(name or VALUE_COLUMN, type_, namespace=VALUE) for name, type_ in columns]


def inferred_columns(
    columns: list[Column],
    topic: str,
    key_info: s.FormatInfo,
    value_info: s.FormatInfo,
    properties: Mapping[str, object],
    schemas: TopicSchemas,
    *,
    keyed: bool,
) -> list[Column]:
    """A CREATE's declared columns, plus the key and value columns inferred where none are declared.

    Read and checked in ``DefaultSchemaInjector``'s order: the key schema, then the value schema,
    and only then each for several top-level types (``addSchemaFields``), so a missing value
    subject is reported before a key schema that needs a ``KEY_SCHEMA_FULL_NAME``.
    """
    key: list[Column] = []
    if not any(c.namespace == KEY for c in columns):
        key = inferred_key(topic, key_info, schemas, keyed=keyed, definitions=False)
    value: list[Column] = []
    if not any(c.namespace == VALUE for c in columns) and infers(value_info):
        wrap = properties.get("WRAP_SINGLE_VALUE")
        unwrapped = wrap is not None and str(wrap).lower() == "false"
        value = inferred_value(topic, value_info, schemas, unwrapped=unwrapped, definitions=False)
    combined = with_inferred(columns, key, value)
    if key or value:
        _check_unique_names(combined)
    for info, side, is_key in ((key_info, key, True), (value_info, value, False)):
        found = _registered(topic, info, schemas, is_key=is_key) if side else None
        if found is not None:
            _check_one_definition(info, found, is_key=is_key)
    return combined


def _check_unique_names(columns: Sequence[Column]) -> None:
    """Refuse a declared key column that an inferred value schema repeats (or the reverse):
    ``DefaultSchemaInjector.buildElements`` rebuilds the elements as ``TableElements``, which
    throws ``Duplicate column names: `X` `` before any schema's definitions are checked."""
    names = [c.name for c in columns if c.namespace in (KEY, VALUE)]
    duplicates = list(dict.fromkeys(name for name in names if names.count(name) > 1))
    if duplicates:
        shown = ", ".join(f"`{name}`" for name in duplicates)
        raise StatementError(f"Duplicate column names: {shown}")


def with_declared_schemas(
    schemas: TopicSchemas, topic: str, declared: Sequence[Column], formats: s.Formats, *, sink: bool = False
) -> TopicSchemas:
    """The schemas a later CREATE infers from, with those a statement registers for its columns:
    a registry format's key and value schemas. A CREATE's declared columns register them unless
    the case (or an earlier statement) registered one under the subject, as ksqlDB's test runner
    registers them before the statements run (``TestCaseBuilderUtil.getAllTopics``); a C*AS
    (``sink``) always registers its sink's (``SchemaRegisterInjector.registerForCreateAs``)."""
    found = dict(schemas)
    for is_key, info, features in (
        (True, formats.key_format, formats.key_features),
        (False, formats.value_format, formats.value_features),
    ):
        format_ = get_format(info.format)
        columns = [SerdeColumn(c.name, c.type) for c in declared if c.namespace == (KEY if is_key else VALUE)]
        if not infers(info) or not columns or SCHEMA_ID in info.properties or (not sink and (topic, is_key) in found):
            continue
        assert isinstance(format_, RegistryFormat)
        try:
            text = format_.registered_schema_text(
                columns,
                is_key=is_key,
                properties=info.properties,
                features=features,
                writer_version=info.writer_version,
            )
        except QttError:  # the runner registers nothing it cannot build; the CREATE itself says why
            continue
        document = text if format_.schema_type == "PROTOBUF" else json.loads(text)
        found[(topic, is_key)] = TopicSchema(document=document, schema_type=format_.schema_type)
    return found


def with_inferred(declared: list[Column], key: list[Column], value: list[Column]) -> list[Column]:
    """The declared columns with the inferred ones, ordered as ``DefaultSchemaInjector`` rebuilds
    the statement when it infers any: header columns, then key columns, then value columns."""
    if not key and not value:
        return declared
    headers = [c for c in declared if c.namespace in (HEADERS, HEADER)]
    keys = key or [c for c in declared if c.namespace == KEY]
    values = value or [c for c in declared if c.namespace == VALUE]
    return headers + keys + values


#: the Schema Registry documentation ksqlDB's messages point to (``DocumentationLinks``)
_SR_DOCS = "https://docs.confluent.io/current/schema-registry/docs/"


def not_found_message(topic: str | None, schema_id: int | None, *, is_key: bool) -> str:
    """ksqlDB's message for a subject with no schema, or a schema id the registry does not hold
    (``SchemaRegistryTopicSchemaSupplier.notFound``; a C*AS that names no topic names no subject)."""
    side = "keys" if is_key else "values"
    shown_id = "" if schema_id is None else f"Schema Id: {schema_id}\n"
    if topic is None:
        return (
            f"Schema for message {side} on schema id'{schema_id} does not exist in the Schema Registry.\n"
            f"{shown_id}Possible causes include:\n- Schema Id Optional[{schema_id}]\n{_CAUSES}"
        )
    subject = f"{topic}-{'key' if is_key else 'value'}"
    return (
        f"Schema for message {side} on topic '{topic}' does not exist in the Schema Registry.\n"
        f"Subject: {subject}\n"
        f"{shown_id}"
        "Possible causes include:\n"
        "- The topic itself does not exist\n"
        "\t-> Use SHOW TOPICS; to check\n"
        "- Messages on the topic are not serialized using a format Schema Registry supports\n"
        f"\t-> Use PRINT '{topic}' FROM BEGINNING; to verify\n{_CAUSES}"
    )


#: the causes every ``notFound`` message ends with
_CAUSES = (
    "- Messages on the topic have not been serialized using a Confluent Schema Registry supported serializer\n"
    f"\t-> See {_SR_DOCS}serializer-formatter.html\n"
    "- The schema is registered on a different instance of the Schema Registry\n"
    f"\t-> Use the REST API to list available subjects\t{_SR_DOCS}api.html#get--subjects\n"
    "- You do not have permissions to access the Schema Registry.\n"
    f"\t-> See {_SR_DOCS}security.html"
)


def _source(topic: str | None, schema_id: int | None) -> str:
    """``SchemaRegistryTopicSchemaSupplier.sourceMsg``: the topic and schema id a schema came from."""
    shown = [] if topic is None else [f"topic: {topic}"]
    if schema_id is not None:
        shown.append(f"schema id: {schema_id}")
    return ", ".join(shown)


#: the registry's schema type each format reads (its schema translator's name)
_SCHEMA_TYPES = {"AVRO": "AVRO", "PROTOBUF": "PROTOBUF", "JSON_SR": "JSON"}


def _check_schema_type(topic: str | None, info: s.FormatInfo, found: TopicSchema, *, is_key: bool) -> None:
    """Refuse a registered schema of another type than the format reads
    (``SchemaRegistryTopicSchemaSupplier.incorrectFormat``)."""
    expected = _SCHEMA_TYPES.get(info.format)
    if found.schema_type is None or expected is None or found.schema_type == expected:
        return
    side, config = ("Key", "KEY_FORMAT") if is_key else ("Value", "VALUE_FORMAT")
    schema_id = info.properties.get(SCHEMA_ID)
    msg = (
        f"{side} schema is not in the expected format. You may want to set {config} to '{found.schema_type}'.\n"
        f"{_source(topic, None if schema_id is None else int(schema_id))}\n"
        f"expected format: {expected}\nactual format from Schema Registry: {found.schema_type}"
    )
    raise StatementError(msg)


def _check_one_definition(info: s.FormatInfo, found: TopicSchema, *, is_key: bool) -> None:
    """Refuse a Protobuf schema that defines several top-level types when no full schema name
    chooses one (``DefaultSchemaInjector.throwOnMultiSchemaDefinitions``)."""
    if info.format != "PROTOBUF" or str(info.properties.get(FULL_SCHEMA_NAME, "")).strip():
        return
    format_ = get_format(info.format)
    assert isinstance(format_, RegistryFormat)
    main = parse(format_.schema_text_of(found.document), found.references).main
    names = [f"{main.package}.{d.name}" if main.package else d.name for d in (*main.message_type, *main.enum_type)]
    if len(names) > 1:
        side, config = ("Key", "KEY_SCHEMA_FULL_NAME") if is_key else ("Value", "VALUE_SCHEMA_FULL_NAME")
        shown = "\n".join(f"- {name}" for name in names)
        msg = (
            f"{side} schema has multiple schema definitions. \n\n{shown}\n\n"
            f"Please specify a schema full name in the WITH clause using {config}"
        )
        raise StatementError(msg)
