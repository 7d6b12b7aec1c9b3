"""WITH-clause properties: which are known, and the key and value formats they resolve to.

A CREATE statement's formats come from its WITH clause or ksqlDB's configured defaults; a C*AS
sink's from its WITH clause or its source. Every check reproduces ksqlDB's message.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from qtt import sqltypes as t
from qtt.errors import StatementError, UnsupportedFeatureError, did_you_mean
from qtt.plan.ddl.schema_inference import infers
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import Column, LogicalSchema
from qtt.plan.settings import enabled
from qtt.serde import SerdeColumn, get_format
from qtt.serde.delimited import parse_delimiter
from qtt.serde.formats import UNWRAP_SINGLE_VALUE, WRAP_SINGLE_VALUE
from qtt.serde.registry.avro_schema import key_schema_name

CONFIG_WRAP_SINGLE_VALUES = "ksql.persistence.wrap.single.values"
CONFIG_DEFAULT_KEY_FORMAT = "ksql.persistence.default.format.key"
CONFIG_DEFAULT_VALUE_FORMAT = "ksql.persistence.default.format.value"

# Properties ksqlDB accepts that need a feature qtt does not have yet.
UNSUPPORTED_PROPERTIES = {
    "SOURCE_CONNECTOR": "connectors",
}
SUPPORTED_FORMATS = frozenset(["KAFKA", "JSON", "DELIMITED", "NONE", "AVRO", "JSON_SR", "PROTOBUF", "PROTOBUF_NOSR"])
# Schema registry formats qtt does not run yet.
SCHEMA_REGISTRY_FORMATS = frozenset(["AVRO_NOSR"])
# ksqlDB's format properties (ConnectProperties) and the WITH-clause properties that set them.
FULL_SCHEMA_NAME = "fullSchemaName"
SCHEMA_ID = "schemaId"
# ksqlDB's Protobuf format properties and the values of its nullable representation properties.
UNWRAP_PRIMITIVES = "unwrapPrimitives"
NULLABLE_REPRESENTATION = "nullableRepresentation"
NULLABLE_REPRESENTATIONS = ("WRAPPER", "OPTIONAL")
# Format properties a C*AS sink takes over from its source when both use the same format
# (ksqlDB's Analyzer.buildFormatInfo with Format.getInheritableProperties: PROTOBUF's are
# ProtobufProperties.INHERITABLE_PROPERTIES, the full schema name only; PROTOBUF_NOSR keeps
# Format's default, all its supported properties; AVRO and JSON_SR inherit none).
INHERITABLE_FORMAT_PROPERTIES = {
    "DELIMITED": frozenset(["delimiter"]),
    "PROTOBUF": frozenset([FULL_SCHEMA_NAME]),
    "PROTOBUF_NOSR": frozenset([UNWRAP_PRIMITIVES, NULLABLE_REPRESENTATION]),
}


def check_supported(properties: Mapping[str, object]) -> None:
    """Refuse a property qtt does not support yet (the WITH clause is checked: :mod:`with_clause`)."""
    for name, feature in UNSUPPORTED_PROPERTIES.items():
        if properties.get(name) is not None:
            raise UnsupportedFeatureError(feature)


def format_name(properties: Mapping[str, object], which: str) -> str | None:
    """The ``KEY`` or ``VALUE`` format the WITH clause names (``FORMAT`` sets both), upper-cased.

    The WITH clause is checked first (:mod:`with_clause`): ``FORMAT`` never comes beside them."""
    name = properties.get(f"{which}_FORMAT", properties.get("FORMAT"))
    return None if name is None else str(name).upper()


def format_info(
    properties: Mapping[str, object],
    which: str,
    format_name: str,
    inherited: s.FormatInfo | None = None,
    *,
    source_name: str = "",
) -> s.FormatInfo:
    """The format and its properties: inheritable ones from ``inherited``, then explicit.

    An AVRO key's record is named after its source (``OUTPUT`` -> ``...OutputKey``), as
    ksqlDB's ``CreateSourceProperties.getKeyFormatProperties`` does.
    """
    props: dict[str, str] = {}
    if inherited is not None and inherited.format == format_name:
        inheritable = INHERITABLE_FORMAT_PROPERTIES.get(format_name, frozenset())
        props.update({k: v for k, v in inherited.properties.items() if k in inheritable})
    delimiter = properties.get(f"{which}_DELIMITER")
    if delimiter is not None:
        props["delimiter"] = delimiter_property(f"{which}_DELIMITER", str(delimiter))
    full_name = properties.get(f"{which}_SCHEMA_FULL_NAME")
    if which == "VALUE" and full_name is None:
        full_name = properties.get("VALUE_AVRO_SCHEMA_FULL_NAME")
    if full_name is not None:
        props[FULL_SCHEMA_NAME] = str(full_name)
    elif which == "KEY" and format_name == "AVRO" and source_name:
        props[FULL_SCHEMA_NAME] = key_schema_name(source_name)
    schema_id = int_property(properties, f"{which}_SCHEMA_ID")
    if schema_id is not None:
        props[SCHEMA_ID] = str(schema_id)
    props.update(protobuf_properties(properties, which, format_name))
    check_known_format(format_name)
    unsupported = (
        sorted(set(props) - get_format(format_name).supported_properties) if format_name in SUPPORTED_FORMATS else []
    )
    if unsupported:
        msg = f"{format_name} does not support the following configs: [{', '.join(unsupported)}]"
        raise StatementError(msg)
    return s.FormatInfo(format=format_name, properties=MappingProxyType(dict(sorted(props.items()))))


def protobuf_properties(properties: Mapping[str, object], which: str, format_name: str) -> dict[str, str]:
    """ksqlDB's Protobuf format properties: primitives unwrapped (as its ``SourcePropertyInjector``
    sets for every new PROTOBUF source), and the nullable representation."""
    props: dict[str, str] = {}
    if format_name == "PROTOBUF":
        props[UNWRAP_PRIMITIVES] = "true"
    name = f"{which}_PROTOBUF_NULLABLE_REPRESENTATION"
    nullable = properties.get(name)
    if nullable is None:
        return props
    if format_name not in ("PROTOBUF", "PROTOBUF_NOSR"):
        raise StatementError(f"Property {name} can only be enabled with protobuf format")
    shown = str(nullable)
    if shown not in NULLABLE_REPRESENTATIONS:
        # the WITH clause's validator ignores case, but ksqlDB then reads the text with the
        # enum's valueOf, which does not
        enum = "io.confluent.ksql.properties.with.CommonCreateConfigs.ProtobufNullableConfigValues"
        msg = f"No enum constant {enum}.{shown}"
        raise StatementError(msg)
    props[NULLABLE_REPRESENTATION] = shown.lower()
    return props


def source_format_infos(
    config: Mapping[str, object],
    properties: Mapping[str, object],
    *,
    source_name: str = "",
    declared: tuple[bool, bool] = (False, False),
) -> tuple[s.FormatInfo, s.FormatInfo]:
    """CREATE STREAM: the declared formats, or ksqlDB's configured defaults.

    ``declared`` says whether the statement declares key and value columns: a side whose schema
    id is set must declare none, and its format must infer its columns (``DefaultSchemaInjector``).
    """
    key_name = format_name(properties, "KEY")
    value_name = format_name(properties, "VALUE")
    if value_name is None:
        configured = config.get(CONFIG_DEFAULT_VALUE_FORMAT)
        if configured is None:  # DefaultFormatInjector: an empty setting is injected as VALUE_FORMAT=''
            msg = (
                "Statement is missing the 'VALUE_FORMAT' property from the WITH clause. "
                "Either provide one "
                "or set a default via the 'ksql.persistence.default.format.value' config."
            )
            raise StatementError(msg)
        value_name = str(configured).upper()
    if key_name is None:
        key_name = str(config.get(CONFIG_DEFAULT_KEY_FORMAT, "KAFKA")).upper()
    key_info = _inferring(properties, "KEY", key_name, declared[0], source_name=source_name)
    value_info = _inferring(properties, "VALUE", value_name, declared[1])
    return key_info, value_info


def _inferring(
    properties: Mapping[str, object], which: str, name: str, declared: bool, *, source_name: str = ""
) -> s.FormatInfo:
    """A CREATE's key or value format, refused as ``DefaultSchemaInjector.shouldInferSchema``
    refuses a schema id the format cannot read, or one beside declared columns."""
    schema_id = properties.get(f"{which}_SCHEMA_ID")
    cannot = (
        f"{which}_FORMAT should support schema inference when {which}_SCHEMA_ID is provided. Current format is {name}."
    )
    if schema_id is not None:
        if not infers(s.FormatInfo(format=name)):
            raise StatementError(cannot)
        if declared:
            raise StatementError(f"Table elements and {which}_SCHEMA_ID cannot both exist for create statement.")
    return format_info(properties, which, name, source_name=source_name)


def sink_format_infos(
    config: Mapping[str, object],
    properties: Mapping[str, object],
    source_formats: s.Formats,
    schema: LogicalSchema,
    *,
    partitioned_by_null: bool,
    sink_name: str = "",
) -> tuple[s.FormatInfo, s.FormatInfo]:
    """C*AS: the source's formats unless the WITH clause names others (ksqlDB's Analyzer)."""
    explicit_key = format_name(properties, "KEY")
    if partitioned_by_null:
        if explicit_key is not None and explicit_key != "NONE":
            msg = "Key format specified for stream without key columns."
            raise StatementError(msg)
        key_name = "NONE"
    else:
        key_name = explicit_key or source_formats.key_format.format
        # LogicalPlanner.getSinkKeyFormat: an inherited NONE gives way to the default
        # key format once the result has key columns.
        if explicit_key is None and key_name == "NONE" and schema.key:
            key_name = str(config.get(CONFIG_DEFAULT_KEY_FORMAT, "KAFKA")).upper()
    value_name = format_name(properties, "VALUE") or source_formats.value_format.format
    key_info = format_info(properties, "KEY", key_name, source_formats.key_format, source_name=sink_name)
    value_info = format_info(properties, "VALUE", value_name, source_formats.value_format)
    return key_info, value_info


def finish_formats(
    config: Mapping[str, object],
    key_info: s.FormatInfo,
    value_info: s.FormatInfo,
    properties: Mapping[str, object],
    schema: LogicalSchema,
) -> s.Formats:
    """The key and value formats with the value's serde features, validated against the schema."""
    features = value_features(config, properties, schema, value_info.format)
    validate_format(key_info, schema.key, is_key=True)
    validate_format(value_info, schema.value, is_key=False, features=features)
    return s.Formats(
        key_format=with_writer_version(key_info, schema.key),
        value_format=with_writer_version(value_info, schema.value),
        value_features=features,
    )


def with_writer_version(info: s.FormatInfo, columns: Sequence[Column]) -> s.FormatInfo:
    """``info`` with the version of qtt's writer a new plan takes for these columns."""
    if info.format not in SUPPORTED_FORMATS:
        return info
    version = get_format(info.format).writer_version_for([SerdeColumn(c.name, c.type) for c in columns])
    return dataclasses.replace(info, writer_version=version)


def value_features(
    config: Mapping[str, object], properties: Mapping[str, object], schema: LogicalSchema, value_format: str
) -> tuple[str, ...]:
    """ksqlDB's SerdeFeaturesFactory.buildValueFeatures: WRAP_SINGLE_VALUE, else the config."""
    wrap = properties.get("WRAP_SINGLE_VALUE")
    spec = get_format(value_format) if value_format in SUPPORTED_FORMATS else None
    if wrap is not None:
        wrap_bool = wrap if isinstance(wrap, bool) else str(wrap).lower() == "true"
        if spec is not None:
            if wrap_bool and not spec.supports_wrapping:
                msg = f"Format '{value_format}' does not support 'WRAP_SINGLE_VALUE' set to 'true'."
                raise StatementError(msg)
            if not wrap_bool and not spec.supports_unwrapping:
                msg = f"Format '{value_format}' does not support 'WRAP_SINGLE_VALUE' set to 'false'."
                raise StatementError(msg)
        if len(schema.value) != 1:
            msg = "'WRAP_SINGLE_VALUE' is only valid for single-field value schemas"
            raise StatementError(msg)
        return (WRAP_SINGLE_VALUE,) if wrap_bool else (UNWRAP_SINGLE_VALUE,)
    if len(schema.value) != 1 or spec is None:
        return ()
    configured = config.get(CONFIG_WRAP_SINGLE_VALUES)
    if configured is None:
        return ()
    wrap_bool = enabled(config, CONFIG_WRAP_SINGLE_VALUES, False)
    if wrap_bool and spec.supports_wrapping:
        return (WRAP_SINGLE_VALUE,)
    if not wrap_bool and spec.supports_unwrapping:
        return (UNWRAP_SINGLE_VALUE,)
    return ()


def check_known_format(name: str) -> None:
    """Reject a format qtt does not know, or knows but does not run."""
    if name in SCHEMA_REGISTRY_FORMATS:
        raise UnsupportedFeatureError(f"format {name} (schema registry formats)")
    if name not in SUPPORTED_FORMATS:
        known = ", ".join(sorted(SUPPORTED_FORMATS | SCHEMA_REGISTRY_FORMATS))
        msg = f"Unknown format: {name}.{did_you_mean(name, SUPPORTED_FORMATS)} Known formats: {known}"
        raise StatementError(msg)


def validate_format(
    info: s.FormatInfo, columns: Sequence[Column], *, is_key: bool, features: Sequence[str] = ()
) -> None:
    """Check that the format can hold ``columns`` (with the value's serde ``features``), with
    ksqlDB's message for a key format."""
    name = info.format
    check_known_format(name)
    spec = get_format(name)
    serde_columns = [SerdeColumn(c.name, c.type) for c in columns]
    try:
        spec.validate(serde_columns, is_key=is_key, properties=info.properties, features=frozenset(features))
    except StatementError as error:
        if not is_key or name == "NONE":
            raise
        shown = ", ".join(f"{t.quote(c.name)} {c.type} KEY" for c in columns)
        features = "UNWRAP_SINGLES" if len(columns) == 1 and spec.supports_wrapping and spec.supports_unwrapping else ""
        msg = (
            f"Key format does not support schema.\nformat: {name}\nschema: "
            f"Persistence{{columns=[{shown}], "
            f"features=[{features}]}}\nreason: {error.message}"
        )
        raise StatementError(msg) from None


def timestamp_column(properties: Mapping[str, object], schema: LogicalSchema) -> s.TimestampColumn | None:
    """The TIMESTAMP (and TIMESTAMP_FORMAT) property, checked against the schema as ksqlDB's
    ``TimestampExtractionPolicyFactory`` checks it. A TIMESTAMP_FORMAT without a TIMESTAMP is unused."""
    name = properties.get("TIMESTAMP")
    fmt = properties.get("TIMESTAMP_FORMAT")
    if name is None:
        return None
    column_name = identifier_from_property(str(name))
    column = schema.find(column_name)
    if column is None:
        msg = f"The TIMESTAMP column set in the WITH clause does not exist in the schema: '{column_name}'"
        raise StatementError(msg)
    base = column.type.base
    if base == "STRING" and fmt is None:
        raise StatementError("A String timestamp field has been specified without also specifying the timestamp_format")
    if base != "STRING" and fmt is not None:
        msg = "'TIMESTAMP_FORMAT' set in the WITH clause can only be used when the timestamp column is of type STRING."
        raise StatementError(msg)
    if base not in ("STRING", "BIGINT", "TIMESTAMP"):
        msg = (
            f"Timestamp column, {t.quote(column_name)}, should be LONG(INT64), TIMESTAMP, or "
            "a String with a "
            "timestamp_format specified."
        )
        raise StatementError(msg)
    return s.TimestampColumn(column=column_name, format=str(fmt) if fmt is not None else None)


def delimiter_property(name: str, value: str) -> str:
    """A checked delimiter property, kept as written (``TAB``, ``SPACE`` or one character)."""
    try:
        parse_delimiter(value)
        return value
    except ValueError as error:
        msg = f"Failed to prepare statement: Configuration {name} is invalid: {error}\nExample valid value: ';'"
        raise StatementError(msg) from None


def int_property(properties: Mapping[str, object], name: str) -> int | None:
    """An integer property (parsed by :mod:`with_clause`), or None when it is not set."""
    value = properties.get(name)
    return None if value is None else int(str(value))


#: one part of a column reference: a name in backticks or double quotes, or a bare one
_NAME_PART = r"`(?:[^`]|``)*`|\"(?:[^\"]|\"\")*\"|[^`\".\s]+"
_COLUMN_REFERENCE = re.compile(rf"(?:(?:{_NAME_PART})\.)?({_NAME_PART})")


def identifier_from_property(value: str) -> str:
    """A column name given as a property value, read as ksqlDB's ``ColumnReferenceParser`` reads it:
    a quoted name keeps its case, a bare one is upper-cased, and a source before a ``.`` is dropped."""
    match = _COLUMN_REFERENCE.fullmatch(value)
    name = match.group(1) if match else value
    if re.fullmatch(r"`.*`|\".*\"", name):
        return name[1:-1].replace(name[0] * 2, name[0])
    return name.upper()
