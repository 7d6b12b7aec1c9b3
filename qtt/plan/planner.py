"""Plan statements: AST -> :class:`~qtt.plan.steps.Plan`.

The planner keeps a metastore of the streams (and later tables) the statements create, plans
every persistent query into a tree of steps, and validates what ksqlDB validates, with
ksqlDB's messages. It never imports Spark.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import singledispatchmethod
from types import MappingProxyType

from qtt import sqltypes as t
from qtt.errors import QttError, SqlError, StatementError, UnsupportedFeatureError, did_you_mean
from qtt.plan import expressions as e
from qtt.plan import steps as s
from qtt.plan.analyzer import Analyzer, Scope, ScopeColumn, is_null_literal, reject_untyped_null
from qtt.plan.schema import (
    KEY,
    PSEUDO_COLUMNS,
    RESERVED_NAMES,
    VALUE,
    Column,
    LogicalSchema,
)
from qtt.serde import SerdeColumn, get_format
from qtt.serde.delimited import parse_delimiter
from qtt.serde.formats import UNWRAP_SINGLE_VALUE, WRAP_SINGLE_VALUE
from qtt.sql import ast
from qtt.sql.formatter import format_expr

STREAM, TABLE = "STREAM", "TABLE"

CONFIG_WRAP_SINGLE_VALUES = "ksql.persistence.wrap.single.values"
CONFIG_DEFAULT_KEY_FORMAT = "ksql.persistence.default.format.key"
CONFIG_DEFAULT_VALUE_FORMAT = "ksql.persistence.default.format.value"
CONFIG_TOPIC_PREFIX = "ksql.output.topic.name.prefix"

# WITH-clause properties the planner understands.
SOURCE_PROPERTIES = frozenset(
    [
        "KAFKA_TOPIC",
        "VALUE_FORMAT",
        "KEY_FORMAT",
        "FORMAT",
        "PARTITIONS",
        "REPLICAS",
        "TIMESTAMP",
        "TIMESTAMP_FORMAT",
        "VALUE_DELIMITER",
        "KEY_DELIMITER",
        "WRAP_SINGLE_VALUE",
        "RETENTION_MS",
    ]
)
# Properties ksqlDB accepts that need a feature qtt does not have yet.
UNSUPPORTED_PROPERTIES = {
    "WINDOW_TYPE": "windowed sources (WINDOW_TYPE)",
    "WINDOW_SIZE": "windowed sources (WINDOW_SIZE)",
    "KEY_SCHEMA_ID": "schema registry schema ids (KEY_SCHEMA_ID)",
    "VALUE_SCHEMA_ID": "schema registry schema ids (VALUE_SCHEMA_ID)",
    "KEY_SCHEMA_FULL_NAME": "schema full names (KEY_SCHEMA_FULL_NAME)",
    "VALUE_SCHEMA_FULL_NAME": "schema full names (VALUE_SCHEMA_FULL_NAME)",
    "VALUE_AVRO_SCHEMA_FULL_NAME": "schema full names (VALUE_AVRO_SCHEMA_FULL_NAME)",
    "KEY_PROTOBUF_NULLABLE_REPRESENTATION": "PROTOBUF nullable representation",
    "VALUE_PROTOBUF_NULLABLE_REPRESENTATION": "PROTOBUF nullable representation",
    "SOURCE_CONNECTOR": "connectors",
}
SUPPORTED_FORMATS = frozenset(["KAFKA", "JSON", "DELIMITED", "NONE"])
SCHEMA_REGISTRY_FORMATS = frozenset(["AVRO", "PROTOBUF", "PROTOBUF_NOSR", "JSON_SR", "AVRO_NOSR"])
# Format properties a C*AS sink takes over from its source when both use the same format.
INHERITABLE_FORMAT_PROPERTIES = frozenset(["delimiter"])
CONFIG_NEW_QUERY_PLANNER = "ksql.new.query.planner.enabled"


@dataclass(frozen=True)
class DataSource:
    """A stream or table in the metastore."""

    name: str
    kind: str
    schema: LogicalSchema
    topic: str
    formats: s.Formats
    timestamp_column: s.TimestampColumn | None = None
    is_source: bool = False
    partitions: int | None = None
    sql: str = ""


@dataclass
class PlannedCase:
    """The result of planning a case's statements."""

    plan: s.Plan
    sources: dict[str, DataSource]
    topic_partitions: dict[str, int] = field(default_factory=dict)


def plan_statements(statements: Sequence[ast.Statement], properties: Mapping[str, object] | None = None) -> PlannedCase:
    """Plan every statement in order.

    Raises:
        SqlError: a statement is invalid (subclasses name the reason).
        UnsupportedFeatureError: a statement needs a feature qtt does not support yet.
    """
    planner = Planner(properties or {})
    planned = [planner.plan(statement) for statement in statements]
    config = MappingProxyType({k: (properties or {})[k] for k in sorted(properties or {})})
    plan = s.Plan(config=config, statements=tuple(p for p in planned if p is not None))
    return PlannedCase(plan=plan, sources=dict(planner.sources), topic_partitions=planner.topic_partitions)


class Planner:
    """Stateful planner over one case's statements: one method per statement type."""

    def __init__(self, properties: Mapping[str, object]) -> None:
        self.config: dict[str, object] = dict(properties)
        self.sources: dict[str, DataSource] = {}
        self.topic_partitions: dict[str, int] = {}
        self.query_count = 0

    def plan(self, statement: ast.Statement) -> s.StatementPlan | None:
        try:
            return self._plan(statement)
        except QttError as error:
            if statement.pos is not None and error.line is None:
                error.at(line=statement.pos.line, column=statement.pos.column)
            raise

    @singledispatchmethod
    def _plan(self, statement: ast.Statement) -> s.StatementPlan | None:
        raise UnsupportedFeatureError(f"statement {type(statement).__name__}")

    # ------------------------------------------------------------------ DDL

    @_plan.register
    def _(self, statement: ast.CreateSource) -> s.StatementPlan | None:
        kind = statement.kind
        existing = self.sources.get(statement.name)
        if statement.or_replace and (statement.is_source or (existing is not None and existing.is_source)):
            msg = (
                f"Cannot add {kind.lower()} '{statement.name}': CREATE OR REPLACE is not "
                f"supported on source {kind.lower()}s."
            )
            raise SqlError(msg)
        if existing is not None and not statement.or_replace:
            if statement.if_not_exists:
                return None
            msg = (
                f"Cannot add {kind.lower()} '{statement.name}': A {existing.kind.lower()} with "
                "the same name already exists"
            )
            raise StatementError(msg)
        properties = self._check_properties(statement.properties)
        topic = properties.get("KAFKA_TOPIC")
        if topic is None:
            msg = 'Missing required property "KAFKA_TOPIC" which has no default value.'
            raise StatementError(msg)
        # ksqlDB checks the WITH clause while it parses, before it looks at the columns.
        key_info, value_info = self._source_format_infos(properties)
        schema = self._declared_schema(statement)
        formats = self._finish_formats(key_info, value_info, properties, schema)
        timestamp = self._timestamp_column(properties, schema)
        partitions = _int_property(properties, "PARTITIONS")
        self.topic_partitions.setdefault(str(topic), partitions or 1)
        source = DataSource(
            name=statement.name,
            kind=kind,
            schema=schema,
            topic=str(topic),
            formats=formats,
            timestamp_column=timestamp,
            is_source=statement.is_source,
            partitions=partitions,
            sql=statement.text,
        )
        self.sources[statement.name] = source
        create = s.CreateTableV1 if kind == TABLE else s.CreateStreamV1
        command = create(
            source_name=statement.name,
            schema=schema,
            topic=str(topic),
            formats=formats,
            timestamp_column=timestamp,
            is_source=statement.is_source,
            or_replace=statement.or_replace,
        )
        return s.KsqlPlanV1(statement_text=statement.text, ddl_command=command)

    def _declared_schema(self, statement: ast.CreateSource) -> LogicalSchema:
        columns: list[Column] = []
        seen: set[str] = set()
        for element in statement.elements:
            if element.name in RESERVED_NAMES:
                msg = f"'{element.name}' is a reserved column name. You cannot use it as a name for a column."
                raise StatementError(msg)
            if element.name in seen:
                msg = f"Duplicate column names: {element.name}"
                raise StatementError(msg)
            seen.add(element.name)
            constraint = element.constraint
            if constraint == "PRIMARY KEY" and statement.kind == STREAM:
                msg = (
                    f"Column {t.quote(element.name)} is a 'PRIMARY KEY' column: please use 'KEY' "
                    "for streams."
                    "\nTables have PRIMARY KEYs, which are unique and NON NULL."
                    "\nStreams have KEYs, which have no uniqueness or NON NULL constraints."
                )
                raise StatementError(msg)
            if constraint == "KEY" and statement.kind == TABLE:
                msg = (
                    f"Column {t.quote(element.name)} is a 'KEY' column: please use 'PRIMARY KEY' for tables."
                    "\nTables have PRIMARY KEYs, which are unique and NON NULL."
                    "\nStreams have KEYs, which have no uniqueness or NON NULL constraints."
                )
                raise StatementError(msg)
            if constraint in ("HEADERS", "HEADER"):
                raise UnsupportedFeatureError("header columns (HEADERS / HEADER)")
            namespace = KEY if constraint in ("KEY", "PRIMARY KEY") else VALUE
            columns.append(Column(element.name, element.type, namespace))
        if not columns:
            msg = "The statement does not define any columns."
            raise StatementError(msg)
        schema = LogicalSchema(tuple(columns))
        _check_no_map_keys(schema.key)
        if statement.kind == TABLE and not schema.key:
            msg = "Tables require a PRIMARY KEY. Please define the PRIMARY KEY."
            raise StatementError(msg)
        return schema

    def _check_properties(self, properties: Mapping[str, object]) -> dict[str, object]:
        checked: dict[str, object] = {}
        for name, value in properties.items():
            if name in UNSUPPORTED_PROPERTIES:
                raise UnsupportedFeatureError(UNSUPPORTED_PROPERTIES[name])
            if name not in SOURCE_PROPERTIES:
                msg = f"Invalid config variable(s) in the WITH clause: {name}.{did_you_mean(name, SOURCE_PROPERTIES)}"
                raise StatementError(msg)
            checked[name] = value
        return checked

    def _format_name(self, properties: Mapping[str, object], which: str) -> str | None:
        fmt = properties.get("FORMAT")
        prop = f"{which}_FORMAT"
        if fmt is not None and prop in properties:
            msg = f"Cannot supply both '{prop}' and 'FORMAT' properties, as 'FORMAT' sets both key and value formats."
            raise StatementError(msg)
        name = properties.get(prop, fmt)
        return None if name is None else str(name).upper()

    def _format_properties(
        self,
        properties: Mapping[str, object],
        which: str,
        format_name: str,
        inherited: s.FormatInfo | None = None,
    ) -> s.FormatInfo:
        """The format and its properties: inheritable ones from ``inherited``, then explicit."""
        props: dict[str, str] = {}
        if inherited is not None and inherited.format == format_name:
            props.update({k: v for k, v in inherited.properties.items() if k in INHERITABLE_FORMAT_PROPERTIES})
        delimiter = properties.get(f"{which}_DELIMITER")
        if delimiter is not None:
            props["delimiter"] = _delimiter_property(f"{which}_DELIMITER", str(delimiter))
        self._check_known_format(format_name)
        unsupported = (
            sorted(set(props) - get_format(format_name).supported_properties)
            if format_name in SUPPORTED_FORMATS
            else []
        )
        if unsupported:
            msg = f"{format_name} does not support the following configs: [{', '.join(unsupported)}]"
            raise StatementError(msg)
        return s.FormatInfo(format=format_name, properties=MappingProxyType(dict(sorted(props.items()))))

    def _source_format_infos(self, properties: Mapping[str, object]) -> tuple[s.FormatInfo, s.FormatInfo]:
        """CREATE STREAM: the declared formats, or ksqlDB's configured defaults."""
        value_name = self._format_name(properties, "VALUE")
        key_name = self._format_name(properties, "KEY")
        if value_name is None:
            configured = self.config.get(CONFIG_DEFAULT_VALUE_FORMAT)
            if not configured:
                msg = (
                    "Statement is missing the 'VALUE_FORMAT' property from the WITH clause. "
                    "Either provide one "
                    "or set a default via the 'ksql.persistence.default.format.value' config."
                )
                raise StatementError(msg)
            value_name = str(configured).upper()
        if key_name is None:
            key_name = str(self.config.get(CONFIG_DEFAULT_KEY_FORMAT, "KAFKA")).upper()
        key_info = self._format_properties(properties, "KEY", key_name)
        value_info = self._format_properties(properties, "VALUE", value_name)
        return key_info, value_info

    def _sink_format_infos(
        self,
        properties: Mapping[str, object],
        source: DataSource,
        schema: LogicalSchema,
        *,
        partitioned_by_null: bool,
    ) -> tuple[s.FormatInfo, s.FormatInfo]:
        """C*AS: the source's formats unless the WITH clause names others (ksqlDB's Analyzer)."""
        explicit_key = self._format_name(properties, "KEY")
        if partitioned_by_null:
            if explicit_key is not None and explicit_key != "NONE":
                msg = "Key format specified for stream without key columns."
                raise StatementError(msg)
            key_name = "NONE"
        else:
            key_name = explicit_key or source.formats.key_format.format
            # LogicalPlanner.getSinkKeyFormat: an inherited NONE gives way to the default
            # key format once the result has key columns.
            if explicit_key is None and key_name == "NONE" and schema.key:
                key_name = str(self.config.get(CONFIG_DEFAULT_KEY_FORMAT, "KAFKA")).upper()
        value_name = self._format_name(properties, "VALUE") or source.formats.value_format.format
        key_info = self._format_properties(properties, "KEY", key_name, source.formats.key_format)
        value_info = self._format_properties(properties, "VALUE", value_name, source.formats.value_format)
        return key_info, value_info

    def _finish_formats(
        self,
        key_info: s.FormatInfo,
        value_info: s.FormatInfo,
        properties: Mapping[str, object],
        schema: LogicalSchema,
    ) -> s.Formats:
        value_features = self._value_features(properties, schema, value_info.format)
        self._validate_format(key_info, schema.key, is_key=True)
        self._validate_format(value_info, schema.value, is_key=False)
        return s.Formats(key_format=key_info, value_format=value_info, value_features=value_features)

    def _value_features(
        self, properties: Mapping[str, object], schema: LogicalSchema, value_format: str
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
        configured = self.config.get(CONFIG_WRAP_SINGLE_VALUES)
        if configured is None:
            return ()
        wrap_bool = configured if isinstance(configured, bool) else str(configured).lower() == "true"
        if wrap_bool and spec.supports_wrapping:
            return (WRAP_SINGLE_VALUE,)
        if not wrap_bool and spec.supports_unwrapping:
            return (UNWRAP_SINGLE_VALUE,)
        return ()

    def _check_known_format(self, name: str) -> None:
        if name in SCHEMA_REGISTRY_FORMATS:
            raise UnsupportedFeatureError(f"format {name} (schema registry formats)")
        if name not in SUPPORTED_FORMATS:
            known = ", ".join(sorted(SUPPORTED_FORMATS | SCHEMA_REGISTRY_FORMATS))
            msg = f"Unknown format: {name}.{did_you_mean(name, SUPPORTED_FORMATS)} Known formats: {known}"
            raise StatementError(msg)

    def _validate_format(self, info: s.FormatInfo, columns: Sequence[Column], *, is_key: bool) -> None:
        name = info.format
        self._check_known_format(name)
        spec = get_format(name)
        serde_columns = [SerdeColumn(c.name, c.type) for c in columns]
        try:
            spec.validate(serde_columns, is_key=is_key, properties=info.properties)
        except StatementError as error:
            if not is_key or name == "NONE":
                raise
            shown = ", ".join(f"{t.quote(c.name)} {c.type} KEY" for c in columns)
            features = (
                "UNWRAP_SINGLES" if len(columns) == 1 and spec.supports_wrapping and spec.supports_unwrapping else ""
            )
            msg = (
                f"Key format does not support schema.\nformat: {name}\nschema: "
                f"Persistence{{columns=[{shown}], "
                f"features=[{features}]}}\nreason: {error.message}"
            )
            raise StatementError(msg) from None

    def _timestamp_column(self, properties: Mapping[str, object], schema: LogicalSchema) -> s.TimestampColumn | None:
        name = properties.get("TIMESTAMP")
        fmt = properties.get("TIMESTAMP_FORMAT")
        if name is None:
            if fmt is not None:
                msg = "Cannot use TIMESTAMP_FORMAT without TIMESTAMP"
                raise StatementError(msg)
            return None
        column_name = _identifier_from_property(str(name))
        column = schema.find(column_name)
        if column is None:
            msg = f"The TIMESTAMP column set in the WITH clause does not exist in the schema: '{column_name}'"
            raise StatementError(msg)
        if fmt is None and column.type.base not in ("BIGINT", "TIMESTAMP"):
            msg = (
                f"Timestamp column, {t.quote(column_name)}, should be LONG(INT64), TIMESTAMP, or "
                "a String with a "
                "timestamp_format specified."
            )
            raise StatementError(msg)
        if fmt is not None and column.type.base != "STRING":
            msg = f"Timestamp column, {t.quote(column_name)}, should be a String when TIMESTAMP_FORMAT is specified."
            raise StatementError(msg)
        return s.TimestampColumn(column=column_name, format=str(fmt) if fmt is not None else None)

    @_plan.register
    def _(self, statement: ast.DropSource) -> s.StatementPlan | None:
        existing = self.sources.get(statement.name)
        if existing is None:
            if statement.if_exists:
                return None
            msg = f"Source {statement.name} does not exist."
            raise StatementError(msg)
        if statement.delete_topic and existing.is_source:
            msg = f"Cannot delete topic for read-only source: {statement.name}"
            raise SqlError(msg)
        del self.sources[statement.name]
        return s.KsqlPlanV1(statement_text=statement.text, ddl_command=s.DropSourceV1(source_name=statement.name))

    @_plan.register
    def _(self, statement: ast.AlterSource) -> s.StatementPlan | None:
        existing = self.sources.get(statement.name)
        if existing is not None and existing.is_source:
            kind = existing.kind.lower()
            msg = f"Cannot alter {kind} '{statement.name}': ALTER operations are not supported on source {kind}s."
            raise SqlError(msg)
        raise UnsupportedFeatureError("ALTER STREAM/TABLE")

    @_plan.register
    def _(self, statement: ast.SetProperty) -> s.StatementPlan | None:
        self.config[statement.name] = statement.value
        return None

    @_plan.register
    def _(self, statement: ast.UnsetProperty) -> s.StatementPlan | None:
        self.config.pop(statement.name, None)
        return None

    @_plan.register
    def _(self, statement: ast.InsertValues) -> s.StatementPlan | None:
        target = self._insert_target(statement)
        if target.is_source:
            msg = f"Cannot insert values into read-only {target.kind.lower()}: {target.name}"
            raise SqlError(msg)
        raise UnsupportedFeatureError("INSERT INTO ... VALUES")

    def _insert_target(self, statement: ast.InsertInto | ast.InsertValues) -> DataSource:
        name = statement.target
        target = self.sources.get(name)
        if target is not None:
            return target
        if isinstance(statement, ast.InsertValues):
            msg = f"Cannot insert values into an unknown stream/table: {t.quote(name)}"
            alternative = next((n for n in self.sources if n.upper() == name.upper()), None)
            if alternative is not None and alternative != name:
                if name == name.upper():
                    msg += (
                        f'\nDid you mean "{alternative}"? Hint: wrap the source name in double '
                        "quotes to make "
                        "it case-sensitive."
                    )
                else:
                    msg += f"\nDid you mean {alternative}? Hint: try removing double quotes from the source name."
            raise SqlError(msg)
        # ksqlDB's AstSanitizer reports the target at the statement's position plus "INSERT INTO".
        prefix = ""
        if statement.pos is not None:
            prefix = f"Line: {statement.pos.line}, Col: {statement.pos.column + len('INSERT INTO ')}: "
        msg = f"{prefix}Source {t.quote(name)} does not exist."
        raise SqlError(msg)

    # ------------------------------------------------------------------ persistent queries

    @_plan.register
    def _(self, statement: ast.CreateAsSelect) -> s.StatementPlan | None:
        existing = self.sources.get(statement.name)
        if existing is not None and not statement.or_replace:
            if statement.if_not_exists:
                return None
            msg = (
                f"Cannot add {statement.kind.lower()} '{statement.name}': A "
                f"{existing.kind.lower()} with the same name already exists"
            )
            raise StatementError(msg)
        properties = self._check_properties(statement.properties)
        planned = self._plan_query(statement.query, sink_name=statement.name, sink_kind=statement.kind)
        produced = TABLE if planned.is_table else STREAM
        if produced != statement.kind:
            msg = (
                f"Invalid result type. Your SELECT query produces a {produced}. Please use CREATE "
                f"{produced} AS SELECT statement instead."
            )
            raise StatementError(msg)
        schema = planned.schema
        key_info, value_info = self._sink_format_infos(
            properties, planned.source, schema, partitioned_by_null=planned.partitioned_by_null
        )
        formats = self._finish_formats(key_info, value_info, properties, schema)
        timestamp = self._timestamp_column(properties, schema)
        prefix = str(self.config.get(CONFIG_TOPIC_PREFIX, ""))
        topic = str(properties.get("KAFKA_TOPIC", prefix + statement.name))
        partitions = _int_property(properties, "PARTITIONS") or planned.source.partitions
        self.topic_partitions.setdefault(topic, partitions or self.topic_partitions.get(planned.source.topic, 1))
        query_id = f"{'CTAS' if planned.is_table else 'CSAS'}_{statement.name}_{self.query_count}"
        self.query_count += 1
        sink_step = s.TableSinkV1 if planned.is_table else s.StreamSinkV2
        sink = sink_step(
            context="KsqlTopic/Sink",
            source=planned.step,
            topic=topic,
            formats=formats,
            timestamp_column=timestamp,
            partitions=self.topic_partitions[topic],
        )
        self.sources[statement.name] = DataSource(
            name=statement.name,
            kind=produced,
            schema=schema,
            topic=topic,
            formats=formats,
            timestamp_column=timestamp,
            partitions=partitions,
            sql=statement.text,
        )
        create = s.CreateTableV1 if planned.is_table else s.CreateStreamV1
        command = create(
            source_name=statement.name,
            schema=schema,
            topic=topic,
            formats=formats,
            timestamp_column=timestamp,
            or_replace=statement.or_replace,
        )
        query = s.QueryPlan(
            query_id=query_id,
            sources=(planned.source.name,),
            sink=statement.name,
            physical_plan=sink,
        )
        return s.KsqlPlanV1(statement_text=statement.text, ddl_command=command, query_plan=query)

    @_plan.register
    def _(self, statement: ast.InsertInto) -> s.StatementPlan | None:
        target = self._insert_target(statement)
        if target.kind != STREAM:
            msg = f"INSERT INTO can only be used to insert into a stream. {target.name} is a table."
            raise StatementError(msg)
        if target.is_source:
            msg = f"Cannot insert into read-only {target.kind.lower()}: {target.name}"
            raise SqlError(msg)
        if statement.properties:
            self._check_properties(statement.properties)
        planned = self._plan_query(statement.query, sink_name=target.name)
        if planned.schema != target.schema:
            msg = (
                f"Incompatible schema between results and sink.\nResult schema is {planned.schema}"
                f"\nSink schema is {target.schema}"
            )
            raise StatementError(msg)
        query_id = f"INSERTQUERY_{self.query_count}"
        self.query_count += 1
        sink = s.StreamSinkV2(
            context="KsqlTopic/Sink",
            source=planned.step,
            topic=target.topic,
            formats=target.formats,
            timestamp_column=target.timestamp_column,
            partitions=self.topic_partitions.get(target.topic, 1),
        )
        query = s.QueryPlan(query_id=query_id, sources=(planned.source.name,), sink=target.name, physical_plan=sink)
        return s.KsqlPlanV1(statement_text=statement.text, query_plan=query)

    def _plan_query(self, query: ast.Query, *, sink_name: str, sink_kind: str = STREAM) -> PlannedQuery:
        new_planner = str(self.config.get(CONFIG_NEW_QUERY_PLANNER, "false")).lower() == "true"
        if new_planner and query.partition_by is not None:
            raise UnsupportedFeatureError(f"PARTITION BY with the new query planner ({CONFIG_NEW_QUERY_PLANNER})")
        if isinstance(query.from_, ast.Join):
            raise UnsupportedFeatureError("joins")
        if query.window is not None:
            raise UnsupportedFeatureError(f"windowed aggregation (WINDOW {query.window.kind})")
        if query.having is not None and query.group_by is None:
            msg = "HAVING requires GROUP BY."
            raise StatementError(msg)
        relation = query.from_
        assert isinstance(relation, ast.Table)
        source = self.sources.get(relation.name)
        if source is None:
            msg = f"{relation.name} does not exist."
            raise SqlError(msg)
        if source.kind == TABLE and query.partition_by is not None:
            raise UnsupportedFeatureError("PARTITION BY on a table")
        if query.limit is not None:
            msg = "CREATE STREAM AS SELECT statements don't support LIMIT clause."
            raise StatementError(msg)
        if query.emit == "FINAL":
            msg = "EMIT FINAL is only supported for windowed aggregations."
            raise StatementError(msg)
        if query.group_by is None:
            _reject_aggregates(query, sink_kind)
        return QueryPlanner(self, source, relation.alias, sink_name, new_planner=new_planner).plan(query)


@dataclass
class PlannedQuery:
    step: s.ExecutionStep
    schema: LogicalSchema
    source: DataSource
    partitioned_by_null: bool = False
    is_table: bool = False


@dataclass(frozen=True)
class SelectItem:
    """One output column of a projection: its alias and its typed expression."""

    alias: str
    expression: e.Expression


@dataclass(frozen=True)
class _Parent:
    """What the projection reads: ksqlDB's processing schema of the node below it.

    ``value`` lists the processing value columns in order: the value columns, the pseudo
    columns, then copies of the key columns (and, after PARTITION BY, the new key columns
    computed from expressions). ``select *`` expands over it the way ksqlDB does.
    """

    key: tuple[Column, ...]
    value: tuple[Column, ...]

    def star(self) -> list[Column]:
        """ksqlDB's ``orderColumns``: key columns first, then values without pseudo columns."""
        by_name = {c.name: c for c in self.value}
        key_names = {c.name for c in self.key}
        keys = [by_name[k.name] for k in self.key if k.name in by_name]
        values, seen = [], set()
        for column in self.value:
            if column.name in PSEUDO_COLUMNS or column.name in key_names or column.name in seen:
                continue
            seen.add(column.name)
            values.append(column)
        return [Column(c.name, c.type, KEY if c.name in key_names else VALUE) for c in keys + values]


@dataclass(frozen=True)
class _PartitionColumn:
    node: ast.Expr
    expression: e.Expression
    name: str


class ColumnAliasGenerator:
    """ksqlDB's generated column names: ``KSQL_COL_n``, or a struct field's name.

    Names never clash with the columns of the given schemas: a name ``X_n`` (or ``X``, read as
    ``X_0``) in a schema uses up number ``n`` of prefix ``X``.
    """

    PREFIX = "KSQL_COL"

    def __init__(self, schemas: Iterable[Iterable[str]]) -> None:
        self._used: dict[str, set[int]] = {}
        for names in schemas:
            for name in names:
                prefix, number = _split_numbered(name)
                self._used.setdefault(prefix, set()).add(number)
        self._next: dict[str, int] = {}

    def _take(self, prefix: str) -> int:
        used = self._used.get(prefix, set())
        n = self._next.get(prefix, 0)
        while n in used:
            n += 1
        self._next[prefix] = n + 1
        return n

    def next_ksql_col(self) -> str:
        return f"{self.PREFIX}_{self._take(self.PREFIX)}"

    def unique_alias_for(self, node: ast.Expr) -> str:
        if isinstance(node, ast.Dereference):
            prefix, _ = _split_numbered(node.field)
            n = self._take(prefix)
            return prefix if n == 0 else f"{prefix}_{n}"
        return self.next_ksql_col()


def _split_numbered(name: str) -> tuple[str, int]:
    match = re.fullmatch(r"(.*?)(?:_(\d+))?", name)
    assert match is not None
    return match.group(1), int(match.group(2)) if match.group(2) is not None else 0


class QueryPlanner:
    """Plans one stateless stream query: source, filter, PARTITION BY, projection.

    The rules are ksqlDB's (LogicalPlanner, PartitionByParamsFactory, FinalProjectNode):
    PARTITION BY names its key columns after the column it reads, a struct field, or a
    generated ``KSQL_COL_n``; the projection keeps the key columns in the order of the node
    below it and must select every one of them.
    """

    def __init__(
        self,
        planner: Planner,
        source: DataSource,
        alias: str | None,
        sink_name: str,
        *,
        new_planner: bool = False,
    ) -> None:
        self.planner = planner
        self.source = source
        self.alias = alias
        self.sink_name = sink_name
        self.new_planner = new_planner
        self.qualifiers = frozenset([source.name] + ([alias] if alias else []))

    def _source_scope(self) -> Scope:
        columns = [ScopeColumn(c.name, c.type, self.qualifiers) for c in self.source.schema.columns]
        columns += [ScopeColumn(name, type_, self.qualifiers) for name, type_ in PSEUDO_COLUMNS.items()]
        return Scope(columns, self.qualifiers)

    def _source_parent(self) -> _Parent:
        schema = self.source.schema
        pseudo = [Column(name, type_, VALUE) for name, type_ in PSEUDO_COLUMNS.items()]
        value = list(schema.value) + pseudo + [Column(c.name, c.type, VALUE) for c in schema.key]
        return _Parent(key=schema.key, value=tuple(value))

    def plan(self, query: ast.Query) -> PlannedQuery:
        source = self.source
        table = source.kind == TABLE
        step: s.ExecutionStep = (s.TableSourceV1 if table else s.StreamSourceV1)(
            context="KsqlTopic/Source",
            topic=source.topic,
            source_name=source.name,
            source_schema=source.schema,
            formats=source.formats,
            timestamp_column=source.timestamp_column,
        )
        scope = self._source_scope()
        if query.where is not None:
            predicate = Analyzer(scope, "WHERE").boolean(query.where)
            filter_step = s.TableFilterV1 if table else s.StreamFilterV1
            step = filter_step(context="WhereFilter", source=step, filter_expression=predicate)

        named = self._alias_select_items(query.select)
        if query.group_by is not None:
            from qtt.plan.aggregate_planner import AggregationPlanner

            return AggregationPlanner(self, scope).plan(query, step, named)
        parent = self._source_parent()
        partition: list[_PartitionColumn] | None = None
        by_null = False
        if query.partition_by is not None:
            partition, by_null = self._partition_columns(query.partition_by, scope)
            step, parent = self._repartition(step, parent, partition)

        select = self._resolve_select(named, scope, parent, partition or [])
        planned = self._project(step, parent, select, named, partition, by_null)
        if table:
            select_step = planned.step
            assert isinstance(select_step, s.SelectStep)
            planned.step = s.TableSelectV1(**{f.name: getattr(select_step, f.name) for f in fields(select_step)})
            planned.is_table = True
        return planned

    # ------------------------------------------------------------------ select items

    def _alias_select_items(self, items: Sequence[ast.SelectItem]) -> list[ast.SelectItem]:
        """Give every single-column item an alias, as ksqlDB's AstSanitizer does."""
        generator = ColumnAliasGenerator([self.source.schema.names()])
        out: list[ast.SelectItem] = []
        for item in items:
            if isinstance(item, ast.SingleColumn) and item.alias is None:
                node = item.expr
                alias = node.name if isinstance(node, ast.ColumnRef) else generator.unique_alias_for(node)
                item = replace(item, alias=alias)
            if isinstance(item, ast.SingleColumn):
                _check_reserved_alias(item)
            out.append(item)
        return out

    def _resolve_select(
        self,
        items: Sequence[ast.SelectItem],
        scope: Scope,
        parent: _Parent,
        partition: Sequence[_PartitionColumn],
    ) -> list[SelectItem]:
        analyzer = Analyzer(scope, "SELECT")
        keys = {c.name: c for c in parent.key}

        def resolve(expr: e.Expression) -> e.Expression:
            # UserRepartitionNode.resolveSelect: a select of a PARTITION BY expression reads the
            # new key column instead.
            for column in partition:
                if column.expression == expr:
                    return e.ColumnRef(name=column.name, sql_type=keys[column.name].type)
            return expr

        out: list[SelectItem] = []
        for item in items:
            if isinstance(item, ast.AllColumns):
                if item.source is not None and item.source not in self.qualifiers:
                    msg = f"Invalid table reference: {item.source}"
                    raise StatementError(msg)
                for column in parent.star():
                    out.append(SelectItem(column.name, e.ColumnRef(name=column.name, sql_type=column.type)))
            elif isinstance(item, ast.StructAll):
                base = resolve(analyzer.typed(item.base))
                type_ = base.result_type
                if not isinstance(type_, t.Struct):
                    msg = f"Expected STRUCT type for '{format_expr(item.base)}->*' but got {type_}"
                    raise StatementError(msg)
                for f in type_.fields:
                    out.append(SelectItem(f.name, e.FieldRef(base=base, name=f.name, sql_type=f.type)))
            else:
                assert isinstance(item, ast.SingleColumn) and item.alias is not None
                expr = reject_untyped_null(analyzer(item.expr))
                out.append(SelectItem(item.alias, resolve(expr)))
        seen: set[str] = set()
        for selected in out:
            if selected.alias in seen:
                msg = f"Duplicate value columns found in schema: `{selected.alias}`"
                raise StatementError(msg)
            seen.add(selected.alias)
        return out

    # ------------------------------------------------------------------ projection

    def _project(
        self,
        step: s.ExecutionStep,
        parent: _Parent,
        select: Sequence[SelectItem],
        items: Sequence[ast.SelectItem],
        partition: Sequence[_PartitionColumn] | None,
        by_null: bool,
    ) -> PlannedQuery:
        key_names = [c.name for c in parent.key]
        aliases: dict[str, list[str]] = {}
        values: list[SelectItem] = []
        for item in select:
            expr = item.expression
            if isinstance(expr, e.ColumnRef) and expr.name in key_names:
                aliases.setdefault(expr.name, []).append(item.alias)
            else:
                values.append(item)
        for key, names in aliases.items():
            if len(names) > 1:
                msg = (
                    f"The projection contains a key column ({t.quote(key)}) more than once, "
                    "aliased as: "
                    f"{_and_join(sorted(names))}.\nEach key column must only be in the projection "
                    "once. "
                    "If you intended to copy the key into the value, then consider using the "
                    "AS_VALUE "
                    "function to indicate which key reference should be copied."
                )
                raise StatementError(msg)
        if not values:
            msg = "The projection contains no value columns."
            raise StatementError(msg)
        if self.new_planner:
            selected = [k.name for k in parent.key if k.name in aliases]
            in_projection = [
                i.expression.name
                for i in select
                if isinstance(i.expression, e.ColumnRef) and i.expression.name in aliases
            ]
            if len(selected) != len(parent.key) or selected != in_projection:
                # ksqlDB's experimental planner keeps the projection's key order and lets keys
                # go; qtt plans only what both planners plan alike.
                msg = f"a projection that drops or reorders key columns with {CONFIG_NEW_QUERY_PLANNER}=true"
                raise UnsupportedFeatureError(msg)
        self._validate_key_present(parent, items, select, partition, by_null)

        key_columns = [Column(aliases[k.name][0], k.type, KEY) for k in parent.key if k.name in aliases]
        value_columns = [Column(v.alias, v.expression.result_type, VALUE) for v in values]
        for column in key_columns + value_columns:
            if column.name in PSEUDO_COLUMNS:
                raise UnsupportedFeatureError(f"output columns named like pseudo columns ({column.name})")
        out_schema = LogicalSchema(tuple(key_columns + value_columns))
        _check_no_map_keys(out_schema.key)
        expressions = [
            s.SelectExpression(alias=aliases[k.name][0], expression=e.ColumnRef(name=k.name, sql_type=k.type))
            for k in parent.key
            if k.name in aliases
        ]
        expressions += [s.SelectExpression(alias=v.alias, expression=v.expression) for v in values]
        step = s.StreamSelectV1(
            context="Project",
            source=step,
            key_column_names=tuple(c.name for c in key_columns),
            select_expressions=tuple(expressions),
        )
        return PlannedQuery(step=step, schema=out_schema, source=self.source, partitioned_by_null=by_null)

    def _validate_key_present(
        self,
        parent: _Parent,
        items: Sequence[ast.SelectItem],
        select: Sequence[SelectItem],
        partition: Sequence[_PartitionColumn] | None,
        by_null: bool,
    ) -> None:
        # ksqlDB's Projection.containsExpression: an unqualified * contains everything, a
        # qualified * every column reference, otherwise an item must match exactly.
        all_columns = any(isinstance(i, ast.AllColumns) and i.source is None for i in items)
        qualified_all = any(isinstance(i, ast.AllColumns) and i.source is not None for i in items)
        scope = self._source_scope()
        singles = [Analyzer(scope, "SELECT")(i.expr) for i in items if isinstance(i, ast.SingleColumn)]

        def contains(expr: e.Expression) -> bool:
            if all_columns or (qualified_all and isinstance(expr, e.ColumnRef)):
                return True
            return expr in singles

        sink = t.quote(self.sink_name)
        if partition is not None:
            if by_null or all(contains(c.expression) for c in partition):
                return
            shown = [self._qualified(c.node) for c in partition]
            noun = "partitioning expression" if len(shown) == 1 else "partitioning expressions"
        else:
            if not parent.key or all(contains(e.ColumnRef(name=k.name, sql_type=k.type)) for k in parent.key):
                return
            shown = [_format_name(k.name) for k in parent.key]
            noun = "key column" if len(shown) == 1 else "key columns"
        plural = "s" if len(shown) > 1 else ""
        msg = (
            f"Key{plural} missing from projection (ie, SELECT). \nThe query used to build {sink} "
            "must include "
            f"the {noun} {_and_join(shown)} in its projection (eg, SELECT {', '.join(shown)}...)."
        )
        raise StatementError(msg)

    def _qualified(self, node: ast.Expr) -> str:
        return format_expr(_qualify(node, self.alias or self.source.name))

    # ------------------------------------------------------------------ PARTITION BY

    def _partition_columns(self, exprs: Sequence[ast.Expr], scope: Scope) -> tuple[list[_PartitionColumn], bool]:
        if not exprs:
            msg = "PARTITION BY requires at least one expression"
            raise StatementError(msg)
        analyzer = Analyzer(scope, "PARTITION BY")
        typed: list[tuple[ast.Expr, e.Expression]] = []
        for node in exprs:
            try:
                expr = analyzer(node)
            except StatementError as error:
                match = re.match(r"PARTITION BY column '([^']*)' cannot be resolved", error.message)
                if match:
                    name = match.group(1)
                    msg = (
                        f"PARTITION BY column '{name}' cannot be resolved. '{name}' must be a "
                        "column in the "
                        "source schema since PARTITION BY is applied on the input."
                    )
                    raise StatementError(msg, line=error.line, column=error.column) from None
                raise
            typed.append((node, expr))
        nulls = [x for _, x in typed if is_null_literal(x)]
        if nulls:
            if len(typed) > 1:
                msg = "Cannot PARTITION BY multiple columns including NULL"
                raise StatementError(msg)
            return [], True
        # PartitionByParamsFactory names generated keys against the processing schema.
        generator = ColumnAliasGenerator([self._source_parent_names()])
        columns = []
        for node, expr in typed:
            name = expr.name if isinstance(expr, e.ColumnRef) else generator.unique_alias_for(node)
            columns.append(_PartitionColumn(node=node, expression=expr, name=name))
        return columns, False

    def _source_parent_names(self) -> list[str]:
        return [c.name for c in self.source.schema.columns] + list(PSEUDO_COLUMNS)

    def _repartition(
        self, step: s.ExecutionStep, parent: _Parent, partition: Sequence[_PartitionColumn]
    ) -> tuple[s.ExecutionStep, _Parent]:
        keys = [Column(c.name, c.expression.result_type, KEY) for c in partition]
        appended = [
            Column(c.name, c.expression.result_type, VALUE)
            for c in partition
            if not isinstance(c.expression, e.ColumnRef)
        ]
        new_parent = _Parent(key=tuple(keys), value=parent.value + tuple(appended))
        for column in keys:
            if column.name in PSEUDO_COLUMNS:
                raise UnsupportedFeatureError(f"PARTITION BY a pseudo column ({column.name})")
        _check_no_map_keys(keys)
        step = s.StreamSelectKeyV1(
            context="PartitionBy",
            source=step,
            key_expressions=tuple(s.SelectExpression(alias=c.name, expression=c.expression) for c in partition),
        )
        return step, new_parent


def _check_reserved_alias(item: ast.SingleColumn) -> None:
    """ksqlDB's Analyzer.checkForReservedToken, for persistent queries."""
    assert item.alias is not None
    reserved = next((name for name in RESERVED_NAMES if name == item.alias.upper()), None)
    if reserved is None:
        return
    if isinstance(item.expr, ast.ColumnRef) and item.expr.name.upper() == reserved:
        msg = f"Reserved column name in select: `{reserved}`. Please remove or alias the column."
    else:
        msg = f"`{reserved}` is a reserved column name. You cannot use it as an alias for a column."
    raise StatementError(msg)


def _and_join(items: Sequence[str]) -> str:
    """ksqlDB's GrammaticalJoiner.and(): ``A``, ``A and B``, ``A, B and C``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _format_name(name: str) -> str:
    return format_expr(ast.ColumnRef(name=name, source=None))


def _qualify(node: ast.Expr, source: str) -> ast.Expr:
    """Qualify bare column references with ``source``, as ksqlDB prints them in messages."""
    if isinstance(node, ast.ColumnRef):
        return replace(node, source=node.source or source)
    changes: dict[str, object] = {}
    for name in getattr(node, "__dataclass_fields__", {}):
        if name == "pos":
            continue
        value = getattr(node, name)
        if isinstance(value, ast.Expr):
            changes[name] = _qualify(value, source)
        elif isinstance(value, tuple) and value and all(isinstance(v, ast.Expr) for v in value):
            changes[name] = tuple(_qualify(v, source) for v in value)
    return replace(node, **changes) if changes else node  # type: ignore[arg-type]


def _reject_aggregates(query: ast.Query, sink_kind: str) -> None:
    """An aggregate function without GROUP BY: ksqlDB's message depends on the statement."""
    from qtt.plan.analyzer import AGGREGATE_FUNCTIONS
    from qtt.sql.formatter import format_expr
    from qtt.sql.parser import iter_nodes

    calls = [n for n in iter_nodes(query.select) if isinstance(n, ast.FunctionCall) and n.name in AGGREGATE_FUNCTIONS]
    if not calls:
        return
    if sink_kind != TABLE:
        msg = f"Use of aggregate function {calls[0].name} requires a GROUP BY clause."
        raise StatementError(msg)
    outside = [
        format_expr(item.expr)
        for item in query.select
        if isinstance(item, ast.SingleColumn) and _has_column_outside_aggregates(item.expr)
    ]
    if outside:
        msg = (
            f"Non-aggregate SELECT expression(s) not part of GROUP BY: {', '.join(outside)}\n"
            "Either add the column(s) to the GROUP BY or remove them from the SELECT."
        )
        raise StatementError(msg)
    # ksqlDB counts rows as COUNT(ROWTIME), and names it so in this message
    shown = [f"{c.name}(ROWTIME)" if c.star or (c.name == "COUNT" and not c.args) else format_expr(c) for c in calls]
    msg = (
        f"CREATE TABLE AS SELECT statement does not support aggregate function [{', '.join(shown)}] "
        "without a GROUP BY clause."
    )
    raise StatementError(msg)


def _has_column_outside_aggregates(node: object) -> bool:
    from dataclasses import fields, is_dataclass

    from qtt.plan.analyzer import AGGREGATE_FUNCTIONS

    if isinstance(node, ast.FunctionCall) and node.name in AGGREGATE_FUNCTIONS:
        return False
    if isinstance(node, ast.ColumnRef):
        return True
    if is_dataclass(node) and not isinstance(node, type):
        return any(_has_column_outside_aggregates(getattr(node, f.name)) for f in fields(node) if f.name != "pos")
    if isinstance(node, tuple | list):
        return any(_has_column_outside_aggregates(item) for item in node)
    return False


def _check_no_map_keys(columns: Iterable[Column]) -> None:
    for column in columns:
        if t.contains_map(column.type):
            msg = (
                "Map keys, including types that contain maps, are not supported as they may lead "
                "to unexpected "
                "behavior due to inconsistent serialization. Key column name: "
                f"{t.quote(column.name)}. "
                f"Column type: {column.type}. See "
                "https://github.com/confluentinc/ksql/issues/6621 for more."
            )
            raise StatementError(msg)


def _delimiter_property(name: str, value: str) -> str:
    """A checked delimiter property, kept as written (``TAB``, ``SPACE`` or one character)."""
    try:
        parse_delimiter(value)
        return value
    except ValueError as error:
        msg = f"Failed to prepare statement: Configuration {name} is invalid: {error}\nExample valid value: ';'"
        raise StatementError(msg) from None


def _int_property(properties: Mapping[str, object], name: str) -> int | None:
    value = properties.get(name)
    if value is None:
        return None
    try:
        return int(str(value))
    except ValueError:
        msg = f"Invalid value for {name}: {value!r}; expected an integer"
        raise StatementError(msg) from None


def _identifier_from_property(value: str) -> str:
    # A quoted name keeps its case; a bare one is upper-cased, as in SQL text.
    if re.fullmatch(r"`.*`|\".*\"", value):
        return value[1:-1]
    return value.upper()
