"""A WITH clause checked as ksqlDB's parser checks it, before anything looks at the metastore.

ksqlDB reads a WITH clause into a Kafka ``ConfigDef`` (``CreateConfigs`` for CREATE STREAM|TABLE,
``CreateAsConfigs`` for C*AS, ``InsertIntoConfigs`` for INSERT INTO; ``PropertiesConfig``):

1. every property it defines, in definition order, is parsed as its type (``ConfigDef.parseType``:
   a string is trimmed, a number written as text is parsed) and checked by its validator; a
   required one that is missing (``KAFKA_TOPIC`` of a CREATE) is refused there too;
2. then every name it does not define is refused, all at once;
3. then the format properties are checked against each other, the ``TIMESTAMP_FORMAT`` pattern
   is compiled, and (CREATE) the window properties are checked against each other.

The words are ksqlDB's (a Kafka ``ConfigException``'s, with ``configuration`` read as
``property``), after ``Failed to prepare statement:`` as ksqlDB's parser prefixes them. The
window properties' errors are syntax errors, as ksqlDB's own tests expect them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Mapping, Sequence

from qtt.errors import StatementError, did_you_mean
from qtt.plan.ddl.java_patterns import pattern_problem
from qtt.plan.ddl.with_properties import delimiter_property
from qtt.sql.type_rules import PREPARE_PREFIX, PrepareError

STRING, INT, SHORT, LONG, BOOLEAN = "STRING", "INT", "SHORT", "LONG", "BOOLEAN"

#: ``CommonCreateConfigs``: the properties of CREATE and C*AS, in ksqlDB's definition order
COMMON_CONFIGS: tuple[tuple[str, str], ...] = (
    ("KAFKA_TOPIC", STRING),
    ("PARTITIONS", INT),
    ("REPLICAS", SHORT),
    ("RETENTION_MS", LONG),
    ("VALUE_FORMAT", STRING),
    ("TIMESTAMP", STRING),
    ("TIMESTAMP_FORMAT", STRING),
    ("WRAP_SINGLE_VALUE", BOOLEAN),
    ("KEY_PROTOBUF_NULLABLE_REPRESENTATION", STRING),
    ("VALUE_PROTOBUF_NULLABLE_REPRESENTATION", STRING),
    ("VALUE_AVRO_SCHEMA_FULL_NAME", STRING),
    ("KEY_SCHEMA_FULL_NAME", STRING),
    ("VALUE_SCHEMA_FULL_NAME", STRING),
    ("KEY_DELIMITER", STRING),
    ("VALUE_DELIMITER", STRING),
    ("KEY_FORMAT", STRING),
    ("FORMAT", STRING),
    ("KEY_SCHEMA_ID", INT),
    ("VALUE_SCHEMA_ID", INT),
    ("CLEANUP_POLICY", STRING),
)
#: ``CreateConfigs``: CREATE STREAM|TABLE's own properties come first
CREATE_CONFIGS = (
    ("WINDOW_TYPE", STRING),
    ("WINDOW_SIZE", STRING),
    ("SOURCE_CONNECTOR", STRING),
    ("SOURCED_BY_CONNECTOR", STRING),
    *COMMON_CONFIGS,
)
CREATE_AS_CONFIGS = COMMON_CONFIGS
INSERT_INTO_CONFIGS = (("QUERY_ID", STRING),)

WINDOW_TYPES = ("SESSION", "HOPPING", "TUMBLING")
#: the properties ``ConfigValidators.enumValues`` checks, with the enum's constants in order
ENUM_VALUES = {
    "WINDOW_TYPE": WINDOW_TYPES,
    "KEY_PROTOBUF_NULLABLE_REPRESENTATION": ("OPTIONAL", "WRAPPER"),
    "VALUE_PROTOBUF_NULLABLE_REPRESENTATION": ("OPTIONAL", "WRAPPER"),
}
WINDOW_PROPERTIES = frozenset(["WINDOW_TYPE", "WINDOW_SIZE"])

#: what reads a WINDOW_SIZE (``'30 SECONDS'``), raising ksqlDB's error for one that is no duration
DurationReader = Callable[[str], object]

INT_RANGES = {INT: 2**31, SHORT: 2**15, LONG: 2**63}
TYPE_WORDS = {INT: "a 32-bit integer", SHORT: "a 16-bit integer (short)", LONG: "a 64-bit integer (long)"}


def create_properties(properties: Mapping[str, object], *, window_size: DurationReader) -> dict[str, object]:
    """A CREATE STREAM|TABLE's WITH clause, checked (``CreateSourceProperties.from``)."""
    checked = _checked(properties, CREATE_CONFIGS, required="KAFKA_TOPIC", window_size=window_size)
    _check_formats(properties)
    _check_timestamp_format(properties)
    _check_window(checked)
    return checked


def create_as_properties(properties: Mapping[str, object]) -> dict[str, object]:
    """A C*AS statement's WITH clause, checked (``CreateSourceAsProperties.from``)."""
    checked = _checked(properties, CREATE_AS_CONFIGS)
    _check_formats(properties)
    _check_timestamp_format(properties)
    return checked


def insert_into_properties(properties: Mapping[str, object]) -> dict[str, object]:
    """An INSERT INTO's WITH clause, checked (``InsertIntoProperties.from``, which leaves Kafka's
    word ``configuration`` as it is)."""
    return _checked(properties, INSERT_INTO_CONFIGS, kafka_words=True)


#: ``QueryIdUtil.ReservedQueryIdsPrefixes``: the prefixes of the ids ksqlDB gives queries
RESERVED_QUERY_ID_PREFIXES = ("INSERTQUERY_", "CTAS_", "CSAS_", "CST_")


def insert_query_id(properties: Mapping[str, object], running: Container[str]) -> dict[str, object]:
    """An INSERT INTO's properties, with its ``QUERY_ID`` in upper case and checked as
    ``QueryIdUtil.validateWithQueryId`` checks it: the query then runs under that id."""
    checked = dict(properties)
    if checked.get("QUERY_ID") is None:
        return checked
    query_id = str(checked["QUERY_ID"]).upper()
    if query_id.startswith(RESERVED_QUERY_ID_PREFIXES):
        msg = (
            f"Query IDs must not start with a reserved query ID prefix ({', '.join(RESERVED_QUERY_ID_PREFIXES)}). "
            f"Got '{query_id}'."
        )
        raise StatementError(msg)
    if not re.fullmatch(r"[A-Za-z0-9_]+", query_id):
        raise StatementError(f"Query IDs may contain only alphanumeric characters and '_'. Got: '{query_id}'")
    if query_id in running:
        raise StatementError(f"Query ID '{query_id}' already exists.")  # EngineExecutor.planQuery
    checked["QUERY_ID"] = query_id
    return checked


def check_topic_properties(properties: Mapping[str, object], *, compacted: bool) -> None:
    """``TopicCreateInjector``: ksqlDB sets a topic's ``CLEANUP_POLICY`` itself, from the kind of
    source, and refuses one the statement sets; a ``compacted`` topic (a table's without
    windows) keeps no ``RETENTION_MS``."""
    if properties.get("CLEANUP_POLICY") is not None:
        msg = (
            "Invalid config variable in the WITH clause: CLEANUP_POLICY.\n"
            "The CLEANUP_POLICY config is automatically inferred based on the type of source (STREAM or TABLE).\n"
            "Users can't set the CLEANUP_POLICY config manually."
        )
        raise StatementError(msg)
    if compacted and properties.get("RETENTION_MS") is not None:
        msg = "Invalid config variable in the WITH clause: RETENTION_MS. Non-windowed tables do not support retention."
        raise StatementError(msg)


def _checked(
    properties: Mapping[str, object],
    configs: Sequence[tuple[str, str]],
    *,
    required: str | None = None,
    window_size: DurationReader | None = None,
    kafka_words: bool = False,
) -> dict[str, object]:
    """Each defined property parsed and validated in definition order, then the unknown names refused.

    The result holds the properties that are set (not NULL), with their parsed values.
    """
    checked: dict[str, object] = {}
    for name, kind in configs:
        if name not in properties:
            if name == required:
                raise StatementError(f'{PREPARE_PREFIX}Missing required property "{name}" which has no default value.')
            continue
        raw = properties[name]
        try:
            value = _parsed(name, raw, kind)
            _validate(name, value)
        except _ConfigError as error:
            message = str(error) if kafka_words else str(error).replace("configuration", "property")
            if name in WINDOW_PROPERTIES:
                raise PrepareError(PREPARE_PREFIX + message) from None
            raise StatementError(PREPARE_PREFIX + message) from None
        if name in ("KEY_DELIMITER", "VALUE_DELIMITER") and value is not None:
            delimiter_property(name, str(value))
        if name == "WINDOW_SIZE" and value is not None and window_size is not None:
            window_size(str(value))
        if value is not None:
            checked[name] = value
    defined = {name for name, _ in configs}
    unknown = [name for name in java_hash_set_order(list(properties)) if name not in defined]
    if unknown:
        msg = f"{PREPARE_PREFIX}Invalid config variable(s) in the WITH clause: {','.join(unknown)}"
        raise StatementError(msg, hint=did_you_mean(unknown[0], defined).strip() or None)
    return checked


class _ConfigError(Exception):
    """Kafka's ``ConfigException(name, value, message)``."""

    def __init__(self, name: str, value: object, message: str) -> None:
        super().__init__(f"Invalid value {java_text(value)} for configuration {name}: {message}")


def _parsed(name: str, value: object, kind: str) -> object:
    """Kafka's ``ConfigDef.parseType`` (ksqlDB first makes every number given for a SHORT a short)."""
    if value is None:
        return None
    if kind == SHORT and isinstance(value, int | float) and not isinstance(value, bool):
        return _wrapped(int(value), 16)
    if kind == BOOLEAN:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise _ConfigError(name, value, "Expected value to be either true or false")
    if kind == STRING:
        if isinstance(value, str):
            return value.strip()
        raise _ConfigError(name, value, f"Expected value to be a string, but it was a {java_class(value)}")
    if isinstance(value, str):
        parsed = _java_integer(value.strip(), INT_RANGES[kind])
        if parsed is None:
            raise _ConfigError(name, value, f"Not a number of type {kind}")
        return parsed
    if kind == INT and java_class(value) == "java.lang.Integer":
        return value
    if kind == LONG and java_class(value) in ("java.lang.Integer", "java.lang.Long"):
        return value
    raise _ConfigError(name, value, f"Expected value to be {TYPE_WORDS[kind]}, but it was a {java_class(value)}")


def _validate(name: str, value: object) -> None:
    """The validators ksqlDB defines: a non-empty topic name, and the values of an enum."""
    if name == "KAFKA_TOPIC" and value == "":
        raise _ConfigError(name, value, "String must be non-empty")
    allowed = ENUM_VALUES.get(name)
    if allowed is not None and value is not None and str(value).upper() not in allowed:
        raise _ConfigError(name, value, f"String must be one of: {', '.join(allowed)}, null")


def _check_formats(originals: Mapping[str, object]) -> None:
    """``CommonCreateConfigs.validateKeyValueFormats``: FORMAT beside KEY_FORMAT or VALUE_FORMAT,
    and both names of the value schema's full name."""
    if originals.get("FORMAT") is not None:
        for other in ("KEY_FORMAT", "VALUE_FORMAT"):
            if originals.get(other) is not None:
                msg = (
                    f"Cannot supply both '{other}' and 'FORMAT' properties, as 'FORMAT' sets both key and value "
                    "formats. Either use just 'FORMAT', or use 'KEY_FORMAT' and 'VALUE_FORMAT'."
                )
                raise StatementError(PREPARE_PREFIX + msg)
    if originals.get("VALUE_AVRO_SCHEMA_FULL_NAME") is not None and originals.get("VALUE_SCHEMA_FULL_NAME") is not None:
        msg = (
            "Cannot supply both 'VALUE_AVRO_SCHEMA_FULL_NAME' and 'VALUE_SCHEMA_FULL_NAME' properties. "
            "Please only set 'VALUE_SCHEMA_FULL_NAME'."
        )
        raise StatementError(PREPARE_PREFIX + msg)


def _check_timestamp_format(originals: Mapping[str, object]) -> None:
    """``PropertiesConfig.validateDateTimeFormat``: the pattern compiles as a java.time pattern."""
    pattern = originals.get("TIMESTAMP_FORMAT")
    if pattern is None:
        return
    problem = pattern_problem(java_text(pattern))
    if problem is not None:
        msg = f"Invalid datetime format for config:TIMESTAMP_FORMAT, reason:{problem}"
        raise StatementError(PREPARE_PREFIX + msg)


def _check_window(checked: Mapping[str, object]) -> None:
    """``CreateSourceProperties.validateWindowInfo``: a time window needs a size, no other does."""
    kind = checked.get("WINDOW_TYPE")
    window_type = None if kind is None else str(kind).upper()
    needs_size = window_type is not None and window_type != "SESSION"
    has_size = checked.get("WINDOW_SIZE") is not None
    if needs_size and not has_size:
        msg = (
            f"{window_type} windows require 'WINDOW_SIZE' to be provided in the WITH clause. "
            "For example: 'WINDOW_SIZE'='10 SECONDS'"
        )
        raise PrepareError(PREPARE_PREFIX + msg)
    if not needs_size and has_size:
        raise PrepareError(f"{PREPARE_PREFIX}'WINDOW_SIZE' should not be set for SESSION windows.")


def _java_integer(text: str, limit: int) -> int | None:
    """Java's ``Integer.parseInt`` (and its SHORT and LONG kin): None where it throws."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if -limit <= value < limit else None


def _wrapped(value: int, bits: int) -> int:
    """Java's narrowing of an integer to ``bits`` bits (``Number.shortValue``)."""
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def java_class(value: object) -> str:
    """The Java class of the value ksqlDB's parser gives a literal (a DECIMAL literal's BigDecimal)."""
    if isinstance(value, bool):
        return "java.lang.Boolean"
    if isinstance(value, int):
        return "java.lang.Integer" if -(2**31) <= value < 2**31 else "java.lang.Long"
    if isinstance(value, float):
        return "java.math.BigDecimal"
    return "java.lang.String"


def java_text(value: object) -> str:
    """A literal's value as Java prints it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def java_hash_set_order(names: Sequence[str]) -> list[str]:
    """``names`` in the order a Java ``HashSet`` built from them (in that order) iterates them:
    by bucket of ``String.hashCode``, then by insertion."""
    unique = list(dict.fromkeys(names))
    capacity = 16
    while len(unique) > capacity * 3 // 4:
        capacity *= 2
    return sorted(unique, key=lambda name: _bucket(name, capacity))


def _bucket(name: str, capacity: int) -> int:
    code = 0
    units = name.encode("utf-16-be")
    for i in range(0, len(units), 2):
        code = (31 * code + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return (code ^ (code >> 16)) & (capacity - 1)
