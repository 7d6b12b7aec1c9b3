"""ksqlDB's settings (a case's ``properties``, a SQL test's ``SET``) as its ``KsqlConfig`` reads them.

A ``KsqlConfig`` parses every ``ksql.*`` setting its ``ConfigDef`` defines by the setting's type
(Kafka's ``ConfigDef.parseType``): a value its type cannot read is a ``ConfigException``
(:class:`~qtt.errors.ConfigError`), which :func:`check_settings` raises with Kafka's words.
ksqlDB's test runner builds one from a case's properties as it builds the test (so such a case
is an invalid test), and from a ``SET`` as the next statement runs. A setting ksqlDB does not
define is ignored, as ksqlDB ignores it. :func:`enabled` reads a boolean setting as Kafka does:
trimmed, in any case.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Mapping

from qtt import sqltypes as t
from qtt.errors import ConfigError
from qtt.plan.ir.schema import PSEUDO_COLUMNS, ROWTIME

CREATE_OR_REPLACE_ENABLED = "ksql.create.or.replace.enabled"
SUPPRESS_ENABLED = "ksql.suppress.enabled"
#: off: ROWPARTITION and ROWOFFSET are no pseudo columns (ksqlDB's pseudo column version 0)
ROWPARTITION_ROWOFFSET_ENABLED = "ksql.rowpartition.rowoffset.enabled"
#: off: an array item, map entry, struct field or function argument that fails nulls the whole
#: expression, not just itself
NESTED_ERROR_SET_NULL = "ksql.nested.error.set.null"
#: qtt's own: a plan that records it nulls a whole expression where a part of it fails, as
#: ksqlDB does; without it only the failing part is null (the planner records it where the two
#: differ, :mod:`qtt.plan.analysis.expression_errors`). Its values, oldest first:
#: :data:`WHOLE_EXPRESSION` (Java's own failures: arithmetic, unboxing, a DECIMAL that must
#: round) and :data:`WHOLE_EXPRESSION_FUNCTIONS` (those, and a function that throws on its input)
EXPRESSION_ERROR_SCOPE = "qtt.expression.error.scope"
WHOLE_EXPRESSION = "expression"
WHOLE_EXPRESSION_FUNCTIONS = "expression+functions"

_BOOLEAN, _SHORT, _INT, _LONG, _STRING = "BOOLEAN", "SHORT", "INT", "LONG", "STRING"

#: the ``ksql.*`` settings of ksqlDB's ``KsqlConfig`` and their ``ConfigDef`` types, in the order
#: it defines them (Kafka parses them in that order, so the first bad one is reported)
TYPES: dict[str, str] = {
    "ksql.service.id": _STRING,
    "ksql.transient.prefix": _STRING,
    "ksql.output.topic.name.prefix": _STRING,
    "ksql.sink.window.change.log.additional.retention": _LONG,
    "ksql.schema.registry.url": _STRING,
    "ksql.connect.basic.auth.credentials.reload": _BOOLEAN,
    "ksql.connect.request.timeout.ms": _LONG,
    "ksql.udfs.enabled": _BOOLEAN,
    "ksql.udf.collect.metrics": _BOOLEAN,
    "ksql.extension.dir": _STRING,
    "ksql.internal.topic.replicas": _SHORT,
    "ksql.internal.topic.min.insync.replicas": _SHORT,
    "ksql.udf.enable.security.manager": _BOOLEAN,
    "ksql.insert.into.values.enabled": _BOOLEAN,
    "ksql.persistence.default.format.key": _STRING,
    "ksql.persistence.default.format.value": _STRING,
    "ksql.persistence.wrap.single.values": _BOOLEAN,
    "ksql.queryanonymizer.logs_enabled": _BOOLEAN,
    "ksql.pull.queries.enable": _BOOLEAN,
    "ksql.query.pull.enable.standby.reads": _BOOLEAN,
    "ksql.query.pull.max.allowed.offset.lag": _LONG,
    "ksql.persistent.prefix": _STRING,
    "ksql.query.persistent.active.limit": _INT,
    "ksql.streams.shutdown.timeout.ms": _LONG,
    "ksql.authorization.cache.expiry.time.secs": _LONG,
    "ksql.authorization.cache.max.entries": _LONG,
    "ksql.timestamp.throw.on.invalid": _BOOLEAN,
    "ksql.query.pull.metrics.enabled": _BOOLEAN,
    "ksql.query.pull.max.qps": _INT,
    "ksql.query.pull.max.concurrent.requests": _INT,
    "ksql.query.pull.max.hourly.bandwidth.megabytes": _INT,
    "ksql.query.push.v2.max.hourly.bandwidth.megabytes": _INT,
    "ksql.query.pull.thread.pool.size": _INT,
    "ksql.query.pull.router.thread.pool.size": _INT,
    "ksql.query.pull.table.scan.enabled": _BOOLEAN,
    "ksql.query.pull.stream.enabled": _BOOLEAN,
    "ksql.query.pull.range.scan.enabled": _BOOLEAN,
    "ksql.query.pull.interpreter.enabled": _BOOLEAN,
    "ksql.query.pull.limit.clause.enabled": _BOOLEAN,
    "ksql.query.pull.forwarding.timeout.ms": _LONG,
    "ksql.query.push.v2.enabled": _BOOLEAN,
    "ksql.query.push.v2.registry.installed": _BOOLEAN,
    "ksql.query.push.v2.alos.enabled": _BOOLEAN,
    "ksql.query.push.v2.interpreter.enabled": _BOOLEAN,
    "ksql.query.push.v2.new.latest.delay.ms": _LONG,
    "ksql.query.push.v2.latest.reset.age.ms": _LONG,
    "ksql.query.push.v2.continuation.tokens.enabled": _BOOLEAN,
    "ksql.query.push.v2.max.catchup.consumers": _INT,
    "ksql.query.push.v2.catchup.consumer.msg.window": _LONG,
    "ksql.query.push.v2.metrics.enabled": _BOOLEAN,
    "ksql.error.classifier.regex": _STRING,
    CREATE_OR_REPLACE_ENABLED: _BOOLEAN,
    "ksql.metastore.backup.location": _STRING,
    SUPPRESS_ENABLED: _BOOLEAN,
    "ksql.query.retry.backoff.initial.ms": _LONG,
    "ksql.query.retry.backoff.max.ms": _LONG,
    "ksql.query.error.max.queue.size": _INT,
    "ksql.suppress.buffer.size.bytes": _LONG,
    "ksql.query.status.running.threshold.seconds": _INT,
    "ksql.variable.substitution.enable": _BOOLEAN,
    "ksql.query.persistent.max.bytes.buffering.total": _LONG,
    "ksql.query.transient.max.bytes.buffering.total": _LONG,
    "ksql.lambdas.enabled": _BOOLEAN,
    "ksql.runtime.feature.shared.enabled": _BOOLEAN,
    "ksql.shared.runtimes.count": _INT,
    "ksql.source.table.materialization.enabled": _BOOLEAN,
    "ksql.new.query.planner.enabled": _BOOLEAN,
    "ksql.query.cleanup.shutdown.timeout.ms": _LONG,
    "ksql.headers.columns.enabled": _BOOLEAN,
    ROWPARTITION_ROWOFFSET_ENABLED: _BOOLEAN,
    "ksql.endpoint.migrate.query": _BOOLEAN,
    "ksql.transient.query.cleanup.service.enable": _BOOLEAN,
    "ksql.transient.query.cleanup.service.initial.delay.seconds": _INT,
    "ksql.transient.query.cleanup.service.period.seconds": _INT,
    "ksql.assert.topic.default.timeout.ms": _INT,
    "ksql.assert.schema.default.timeout.ms": _INT,
    "ksql.websocket.connection.max.timeout.ms": _LONG,
    "ksql.json_sr.converter.deserializer.enabled": _BOOLEAN,
    "ksql.client.ip_port.configuration.enabled": _BOOLEAN,
    "ksql.fetch.remote.hosts.max.timeout.seconds": _LONG,
    # the compatibility-breaking settings, defined last
    "ksql.cast.strings.preserve.nulls": _BOOLEAN,
    "ksql.nested.error.set.null": _BOOLEAN,
}

#: Java's bounds of each integer type, and its words for a value of another class
_BITS = {_SHORT: 16, _INT: 32, _LONG: 64}
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")


def check_settings(settings: Mapping[str, object]) -> None:
    """Refuse the first setting whose value its ``ConfigDef`` type cannot read, as ksqlDB does.

    Raises:
        ConfigError: Kafka's ``Invalid value V for configuration N: ...``.
    """
    for name, type_ in TYPES.items():
        if settings.get(name) is not None and (problem := _problem(type_, settings[name])) is not None:
            msg = f"Invalid value {_java_text(settings[name])} for configuration {name}: {problem}"
            raise ConfigError(msg)


def trimmed(settings: Mapping[str, object]) -> dict[str, object]:
    """The settings with each STRING setting's text trimmed, as Kafka's ``ConfigDef`` reads it
    (``" team- "`` prefixes topics with ``team-``)."""
    return {k: v.strip() if isinstance(v, str) and TYPES.get(k) == _STRING else v for k, v in settings.items()}


def enabled(settings: Mapping[str, object], name: str, default: bool) -> bool:
    """A boolean setting as Kafka reads it (``" FALSE "`` is false); ``default`` when unset."""
    value = settings.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() == "true"


def pseudo_columns(settings: Mapping[str, object]) -> dict[str, t.SqlType]:
    """The pseudo columns a query may read: ROWTIME alone while ROWPARTITION and ROWOFFSET are
    switched off (ksqlDB's ``SystemColumns`` at pseudo column version 0). ksqlDB's
    ``EngineExecutor`` reads a case's value untrimmed (``"true".equalsIgnoreCase``)."""
    value = settings.get(ROWPARTITION_ROWOFFSET_ENABLED)
    if value is None or str(value).lower() == "true":
        return dict(PSEUDO_COLUMNS)
    return {ROWTIME: PSEUDO_COLUMNS[ROWTIME]}


def _problem(type_: str, value: object) -> str | None:
    """Kafka's ``ConfigDef.parseType`` complaint about ``value`` as a ``type_``, or None."""
    if type_ == _BOOLEAN:
        if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in ("true", "false")):
            return None
        return "Expected value to be either true or false"
    if type_ == _STRING:
        return None if isinstance(value, str) else f"Expected value to be a string, but it was a {_java_class(value)}"
    bits = _BITS[type_]
    if isinstance(value, str):
        text = value.strip()
        fits = _INTEGER_TEXT.fullmatch(text) is not None and -(2 ** (bits - 1)) <= int(text) < 2 ** (bits - 1)
        return None if fits else f"Not a number of type {type_}"
    # a JSON number is an Integer (a Long past 32 bits); only a LONG takes both, a SHORT neither
    taken = {_INT: ("java.lang.Integer",), _LONG: ("java.lang.Integer", "java.lang.Long")}.get(type_, ())
    if _java_class(value) in taken:
        return None
    return f"Expected value to be a {bits}-bit integer, but it was a {_java_class(value)}"


def _java_class(value: object) -> str:
    """The Java class Jackson reads a JSON value into."""
    if isinstance(value, bool):
        return "java.lang.Boolean"
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return "java.lang.Integer"
        return "java.lang.Long" if -(2**63) <= value < 2**63 else "java.math.BigInteger"
    if isinstance(value, float | decimal.Decimal):  # Jackson reads a fraction as a Double
        return "java.lang.Double"
    if isinstance(value, str):
        return "java.lang.String"
    if isinstance(value, list):
        return "java.util.ArrayList"
    return "java.util.LinkedHashMap"


def _java_text(value: object) -> str:
    """``String.valueOf`` of the Java value Jackson reads a JSON value into."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float | decimal.Decimal):  # Java's Double.toString, for the usual values
        number = float(value)
        return f"{number:.1f}" if number.is_integer() and abs(number) < 1e7 else repr(number)
    if isinstance(value, list):
        return "[" + ", ".join(_java_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_java_text(v)}" for k, v in value.items()) + "}"
    return "null" if value is None else str(value)
