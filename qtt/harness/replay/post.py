"""Check a case's ``post`` conditions: the sources and topics that exist after its statements."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from qtt.errors import QttError
from qtt.harness.cases.model import PostConditions, PostSource, PostTopic
from qtt.harness.replay.join_topics import JoinTopic
from qtt.plan.ddl.metastore import DataSource
from qtt.plan.ddl.sql_schema import schema_from_sql
from qtt.plan.ir.schema import LogicalSchema
from qtt.plan.ir.steps import FormatInfo, Formats, WindowInfo
from qtt.serde.formats import UNWRAP_SINGLE_VALUE, WRAP_SINGLE_VALUE
from qtt.serde.interface import UNWRAPPED_KEY_FORMATS
from qtt.serde.registry.avro_connect import as_connect_registers
from qtt.serde.registry.protobuf_compile import parse
from qtt.serde.registry.protobuf_format import parsed_registered
from qtt.serde.registry.protobuf_schema import schema_full_name
from qtt.serde.registry.registry_format import FULL_SCHEMA_NAME
from qtt.serde.registry.schema_registry import RegisteredSchema, RegistrySnapshot, subject_for


def _format_name(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        name = value.get("format")
        return str(name).upper() if name is not None else None
    return str(value).upper()


def _format_problems(label: str, expected: Any, actual: FormatInfo, window: WindowInfo | None = None) -> Iterable[str]:
    """A key or value format as ksqlDB's post-conditions give it: a name, or an object with
    ``format``, ``properties`` and (for keys) ``windowType`` / ``windowSize`` (``window`` is
    the key's actual window)."""
    want = _format_name(expected)
    if want is not None and want != actual.format:
        yield f"expected {label} {want}, got {actual.format}"
    if not isinstance(expected, Mapping):
        return
    want_window = expected.get("windowType")
    if want_window is not None:
        if window is None:
            yield f"expected a {want_window}-windowed {label}, got a non-windowed one"
        elif str(want_window).upper() != window.type:
            yield f"expected a {want_window}-windowed {label}, got a {window.type}-windowed one"
    want_size = expected.get("windowSize")
    if want_size is not None and window is not None and want_size != window.size_ms:
        yield f"expected {label} windows of {want_size} ms, got {window.size_ms}"
    # ksqlDB's KeyFormatNode has no ``properties`` (its mapper ignores unknown fields), so its
    # runner never compares them: expected properties must hold, others may be there too
    properties = expected.get("properties")
    if properties is not None and any(actual.properties.get(k) != v for k, v in dict(properties).items()):
        yield f"expected {label} properties {dict(properties)}, got {dict(actual.properties)}"


def ksql_features(formats: Formats, schema: LogicalSchema, *, key: bool) -> list[str]:
    """The serde features ksqlDB reports for a source (``UNWRAP_SINGLES``, ``WRAP_SINGLES``).

    A single key column is unwrapped in JSON, AVRO, JSON_SR and PROTOBUF_NOSR; ksqlDB reports none for a
    PROTOBUF key, whose single column it writes as a message of one field.
    """
    if key:
        fmt = formats.key_format.format
        return ["UNWRAP_SINGLES"] if len(schema.key) == 1 and fmt in UNWRAPPED_KEY_FORMATS else []
    if WRAP_SINGLE_VALUE in formats.value_features:
        return ["WRAP_SINGLES"]
    if UNWRAP_SINGLE_VALUE in formats.value_features:
        return ["UNWRAP_SINGLES"]
    return []


def check(
    post: PostConditions,
    sources: Mapping[str, DataSource],
    topics: Mapping[str, tuple[Formats, int]],
) -> list[str]:
    """Every unmet condition, as a line of text (empty when all hold)."""
    problems: list[str] = []
    for expected in post.sources:
        problems.extend(_check_source(expected, sources))
    if post.topics is not None:
        if post.topics.blacklist:
            pattern = re.compile(post.topics.blacklist)
            for name in sorted(topics):
                # ksqlDB filters with Pattern.asPredicate(), which finds the pattern anywhere
                # in the name (Matcher.find), not only as the whole name
                if pattern.search(name):
                    problems.append(f"topic {name!r} exists but matches the blacklist {post.topics.blacklist!r}")
        for topic in post.topics.topics:
            problems.extend(_check_topic(topic, topics))
    return problems


def _check_source(expected: PostSource, sources: Mapping[str, DataSource]) -> Iterable[str]:
    actual = sources.get(expected.name)
    if actual is None:
        yield (f"source {expected.name!r} does not exist; sources: {', '.join(sorted(sources)) or 'none'}")
        return
    if expected.type is not None and expected.type.upper() != actual.kind:
        yield f"source {expected.name}: expected type {expected.type.upper()}, got {actual.kind}"
    if expected.schema is not None:
        wanted = schema_from_sql(expected.schema)
        if wanted != actual.schema:
            yield f"source {expected.name}: expected schema {wanted}, got {actual.schema}"
    for label, want, got, window in (
        ("key format", expected.key_format, actual.formats.key_format, actual.formats.window),
        ("value format", expected.value_format, actual.formats.value_format, None),
    ):
        for problem in _format_problems(label, want, got, window):
            yield f"source {expected.name}: {problem}"
    for label, want_features, key in (
        ("key", expected.key_features, True),
        ("value", expected.value_features, False),
    ):
        if want_features is not None:
            got_features = ksql_features(actual.formats, actual.schema, key=key)
            if sorted(want_features) != sorted(got_features):
                yield (f"source {expected.name}: expected {label} features {list(want_features)}, got {got_features}")
    if expected.is_source is not None and expected.is_source != actual.is_source:
        yield (f"source {expected.name}: expected isSource {expected.is_source}, got {actual.is_source}")


def check_schemas(
    post: PostConditions,
    schemas: Sequence[RegisteredSchema],
    internal: Iterable[JoinTopic] = (),
    produced: Collection[str] = (),
    formats: Mapping[str, Formats] | None = None,
) -> list[str]:
    """Post-conditions on the schemas registered for topics (``keySchema`` / ``valueSchema``, as JSON).

    An Avro or JSON schema compares as JSON with Kafka Connect's ``connect.*`` annotations left
    out (which ksqlDB versions add differently); a Protobuf schema compares as text. The key
    schema of a join's internal topic (``internal``) is the one ksqlDB's key serializer would
    register for it. A schema the case declared for a topic it writes records to (``produced``)
    is the one ksqlDB's driver registers as it writes them: an Avro one after Kafka Connect's
    round trip (:func:`~qtt.serde.registry.avro_connect.as_connect_registers`); a Protobuf one
    whose topic's format names a message (``*_SCHEMA_FULL_NAME``, in ``formats``) holds that
    message and the types it uses alone, compared by content
    (:meth:`~qtt.serde.registry.protobuf_compile.ParsedSchema.alone`).
    """
    problems: list[str] = []
    if post.topics is None:
        return problems
    join_keys = {subject_for(topic.name, is_key=True): topic for topic in internal}
    for topic in post.topics.topics:
        for is_key, expected in ((True, topic.key_schema), (False, topic.value_schema)):
            if expected is None:
                continue
            subject = subject_for(topic.name, is_key=is_key)
            found = [s for s in schemas if s.subject == subject]
            key = join_keys[subject].key_schema() if not found and subject in join_keys else None
            if found:
                held: RegisteredSchema | None = found[-1]
                schema_type, text, origin = found[-1].schema_type, found[-1].schema, found[-1].origin
            elif key is not None:  # not registered: what ksqlDB's key serializer would register
                held, (schema_type, text), origin = None, key, "statement"
            else:
                problems.append(f"topic {topic.name}: expected a schema under subject {subject}, found none")
                continue
            written = origin == "case" and topic.name in produced
            message = _named_message(formats, topic.name, is_key) if written and schema_type == "PROTOBUF" else None
            if message is not None and held is not None:
                if not _same_message(expected, RegistrySnapshot(tuple(schemas)), held, message):
                    holds = f"subject {subject} holds {text} (its message {message} compared, alone)"
                    problems.append(f"topic {topic.name}: {holds}, expected {json.dumps(expected)}")
                continue
            registered = text if schema_type == "PROTOBUF" else json.loads(text)
            if schema_type == "AVRO" and written:
                registered = as_connect_registers(registered)
            if _schema_form(expected, schema_type) != _schema_form(registered, schema_type):
                problems.append(f"topic {topic.name}: subject {subject} holds {text}, expected {json.dumps(expected)}")
    return problems


def _named_message(formats: Mapping[str, Formats] | None, topic: str, is_key: bool) -> str | None:
    """The message a Protobuf topic's format names (``*_SCHEMA_FULL_NAME``), if any."""
    found = (formats or {}).get(topic)
    if found is None:
        return None
    info = found.key_format if is_key else found.value_format
    return schema_full_name(info.properties.get(FULL_SCHEMA_NAME)) if info.format == "PROTOBUF" else None


def _same_message(expected: Any, registry: RegistrySnapshot, registered: RegisteredSchema, message: str) -> bool:
    """Whether ``expected`` (``.proto`` text) holds what ``registered`` holds for ``message`` alone."""
    if not isinstance(expected, str):
        return False
    try:
        want = parse(expected).content()
        have = parsed_registered(registry, registered).alone(message)
    except QttError:
        return False
    return bool(want == have)


def _schema_form(schema: Any, schema_type: str) -> Any:
    if schema_type == "PROTOBUF":
        text = schema if isinstance(schema, str) else json.dumps(schema)
        return " ".join(text.split())
    if isinstance(schema, str):
        schema = {"type": schema}  # a bare Avro primitive, in its object form
    return _without_connect(schema)


def _without_connect(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_connect(v) for k, v in value.items() if not str(k).startswith("connect.")}
    if isinstance(value, list):
        return [_without_connect(v) for v in value]
    return value


def _check_topic(expected: PostTopic, topics: Mapping[str, tuple[Formats, int]]) -> Iterable[str]:
    actual = topics.get(expected.name)
    if actual is None:
        yield (f"topic {expected.name!r} does not exist; topics: {', '.join(sorted(topics)) or 'none'}")
        return
    formats, partitions = actual
    for label, want, got, window in (
        ("key format", expected.key_format, formats.key_format, formats.window),
        ("value format", expected.value_format, formats.value_format, None),
    ):
        for problem in _format_problems(label, want, got, window):
            yield f"topic {expected.name}: {problem}"
    if expected.partitions is not None and expected.partitions != partitions:
        yield f"topic {expected.name}: expected {expected.partitions} partitions, got {partitions}"
