"""Plan statements: AST -> :class:`~qtt.plan.steps.Plan`.

The planner keeps a metastore of the streams (and later tables) the statements create, plans
every persistent query into a tree of steps, and validates what ksqlDB validates, with
ksqlDB's messages. It never imports Spark.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import singledispatchmethod
from types import MappingProxyType

from qtt import sqltypes as t
from qtt.errors import QttError, SqlError, StatementError, UnsupportedFeatureError, did_you_mean
from qtt.plan import expressions as e
from qtt.plan import steps as s
from qtt.plan.analyzer import Analyzer, Scope, ScopeColumn, is_null_literal
from qtt.plan.schema import (
    KEY,
    PSEUDO_COLUMNS,
    RESERVED_NAMES,
    VALUE,
    Column,
    LogicalSchema,
)
from qtt.serde import SerdeColumn, get_format
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
    ["KAFKA_TOPIC", "VALUE_FORMAT", "KEY_FORMAT", "FORMAT", "PARTITIONS", "REPLICAS", "TIMESTAMP",
     "TIMESTAMP_FORMAT", "VALUE_DELIMITER", "KEY_DELIMITER", "WRAP_SINGLE_VALUE", "RETENTION_MS"]
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


def plan_statements(
    statements: Sequence[ast.Statement], properties: Mapping[str, object] | None = None
) -> PlannedCase:
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
            msg = f"Cannot add {kind.lower()} '{statement.name}': CREATE OR REPLACE is not supported on source {kind.lower()}s."
            raise SqlError(msg)
        if existing is not None and not statement.or_replace:
            if statement.if_not_exists:
                return None
            msg = f"Cannot add {kind.lower()} '{statement.name}': A {existing.kind.lower()} with the same name already exists"
            raise StatementError(msg)
        if kind == TABLE:
            raise UnsupportedFeatureError("tables (CREATE TABLE)")
        properties = self._check_properties(statement.properties)
        topic = properties.get("KAFKA_TOPIC")
        if topic is None:
            msg = 'Missing required property "KAFKA_TOPIC" which has no default value.'
            raise StatementError(msg)
        schema = self._declared_schema(statement)
        formats = self._formats(properties, schema, default_key=None, default_value=None, explicit_sink=False)
        timestamp = self._timestamp_column(properties, schema)
        partitions = _int_property(properties, "PARTITIONS")
        self.topic_partitions.setdefault(str(topic), partitions or 1)
        source = DataSource(
            name=statement.name, kind=kind, schema=schema, topic=str(topic), formats=formats,
            timestamp_column=timestamp, is_source=statement.is_source, partitions=partitions, sql=statement.text,
        )
        self.sources[statement.name] = source
        command = s.CreateStreamV1(
            source_name=statement.name, schema=schema, topic=str(topic), formats=formats,
            timestamp_column=timestamp, is_source=statement.is_source, or_replace=statement.or_replace,
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
                msg = (f"Column {t.quote(element.name)} is a 'PRIMARY KEY' column: please use 'KEY' for streams."
                       "\nTables have PRIMARY KEYs, which are unique and NON NULL."
                       "\nStreams have KEYs, which have no uniqueness or NON NULL constraints.")
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

    def _formats(
        self,
        properties: Mapping[str, object],
        schema: LogicalSchema,
        *,
        default_key: s.FormatInfo | None,
        default_value: s.FormatInfo | None,
        explicit_sink: bool,
        default_value_features: tuple[str, ...] = (),
    ) -> s.Formats:
        fmt = properties.get("FORMAT")
        if fmt is not None and ("KEY_FORMAT" in properties or "VALUE_FORMAT" in properties):
            which = "KEY_FORMAT" if "KEY_FORMAT" in properties else "VALUE_FORMAT"
            msg = f"Cannot supply both '{which}' and 'FORMAT' properties, as 'FORMAT' sets both key and value formats."
            raise StatementError(msg)
        key_name = properties.get("KEY_FORMAT", fmt)
        value_name = properties.get("VALUE_FORMAT", fmt)

        if value_name is None:
            if default_value is not None:
                value_info = default_value
            elif self.config.get(CONFIG_DEFAULT_VALUE_FORMAT):
                value_info = s.FormatInfo(format=str(self.config[CONFIG_DEFAULT_VALUE_FORMAT]).upper())
            else:
                msg = ("Statement is missing the 'VALUE_FORMAT' property from the WITH clause. Either provide one "
                       "or set a default via the 'ksql.persistence.default.format.value' config.")
                raise StatementError(msg)
        else:
            value_info = s.FormatInfo(format=str(value_name).upper())
        if "VALUE_DELIMITER" in properties:
            value_info = s.FormatInfo(
                format=value_info.format, properties=MappingProxyType({"delimiter": str(properties["VALUE_DELIMITER"])})
            )
        elif value_name is not None:
            value_info = s.FormatInfo(format=value_info.format)

        if not schema.key:
            if key_name is not None and explicit_sink:
                msg = "Key format specified for stream without key columns."
                raise StatementError(msg)
            key_info = s.FormatInfo(format="NONE")
        elif key_name is not None:
            key_info = s.FormatInfo(format=str(key_name).upper())
        elif default_key is not None and default_key.format != "NONE":
            key_info = default_key
        else:
            key_info = s.FormatInfo(format=str(self.config.get(CONFIG_DEFAULT_KEY_FORMAT, "KAFKA")).upper())
        if "KEY_DELIMITER" in properties:
            key_info = s.FormatInfo(
                format=key_info.format, properties=MappingProxyType({"delimiter": str(properties["KEY_DELIMITER"])})
            )

        value_features = self._value_features(properties, schema, value_info.format, default_value_features)
        self._validate_format(key_info, schema.key, is_key=True)
        self._validate_format(value_info, schema.value, is_key=False)
        return s.Formats(key_format=key_info, value_format=value_info, value_features=value_features)

    def _value_features(self, properties: Mapping[str, object], schema: LogicalSchema, value_format: str,
                        inherited: tuple[str, ...]) -> tuple[str, ...]:
        wrap = properties.get("WRAP_SINGLE_VALUE")
        if wrap is not None:
            wrap_bool = wrap if isinstance(wrap, bool) else str(wrap).lower() == "true"
            if len(schema.value) != 1:
                msg = "'WRAP_SINGLE_VALUE' is only valid for single-field value schemas"
                raise StatementError(msg)
            if value_format in SUPPORTED_FORMATS:
                spec = get_format(value_format)
                if wrap_bool and not spec.supports_wrapping:
                    msg = f"Format '{value_format}' does not support 'WRAP_SINGLE_VALUE' set to 'true'."
                    raise StatementError(msg)
                if not wrap_bool and not spec.supports_unwrapping:
                    msg = f"Format '{value_format}' does not support 'WRAP_SINGLE_VALUE' set to 'false'."
                    raise StatementError(msg)
            return (WRAP_SINGLE_VALUE,) if wrap_bool else (UNWRAP_SINGLE_VALUE,)
        if len(schema.value) != 1:
            return ()
        if inherited:
            return inherited
        configured = self.config.get(CONFIG_WRAP_SINGLE_VALUES)
        if configured is not None and str(configured).lower() == "false" and value_format in SUPPORTED_FORMATS:
            if get_format(value_format).supports_unwrapping:
                return (UNWRAP_SINGLE_VALUE,)
        return ()

    def _validate_format(self, info: s.FormatInfo, columns: Sequence[Column], *, is_key: bool) -> None:
        name = info.format
        if name in SCHEMA_REGISTRY_FORMATS:
            raise UnsupportedFeatureError(f"format {name} (schema registry formats)")
        if name not in SUPPORTED_FORMATS:
            known = ", ".join(sorted(SUPPORTED_FORMATS | SCHEMA_REGISTRY_FORMATS))
            msg = f"Unknown format: {name}.{did_you_mean(name, SUPPORTED_FORMATS)} Known formats: {known}"
            raise StatementError(msg)
        spec = get_format(name)
        serde_columns = [SerdeColumn(c.name, c.type) for c in columns]
        try:
            spec.validate(serde_columns, is_key=is_key, properties=info.properties)
        except StatementError as error:
            if not is_key or name == "NONE":
                raise
            shown = ", ".join(f"{t.quote(c.name)} {c.type} KEY" for c in columns)
            msg = (f"Key format does not support schema.\nformat: {name}\nschema: Persistence{{columns=[{shown}], "
                   f"features=[]}}\nreason: {error.message}")
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
            msg = (f"Timestamp column, {t.quote(column_name)}, should be LONG(INT64), TIMESTAMP, or a String with a "
                   "timestamp_format specified.")
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
        target = self._insert_target(statement.target, values=True)
        if target.is_source:
            msg = f"Cannot insert values into read-only {target.kind.lower()}: {target.name}"
            raise SqlError(msg)
        raise UnsupportedFeatureError("INSERT INTO ... VALUES")

    def _insert_target(self, name: str, *, values: bool) -> DataSource:
        target = self.sources.get(name)
        if target is not None:
            return target
        if values:
            msg = f"Cannot insert values into an unknown stream/table: {t.quote(name)}"
            alternative = next((n for n in self.sources if n.upper() == name.upper()), None)
            if alternative is not None and alternative != name:
                if name == name.upper():
                    msg += f'\nDid you mean "{alternative}"? Hint: wrap the source name in double quotes to make it case-sensitive'
                else:
                    msg += f"\nDid you mean {alternative}? Hint: try removing double quotes from the source name."
            raise SqlError(msg)
        msg = f"Source {t.quote(name)} does not exist."
        raise SqlError(msg)

    # ------------------------------------------------------------------ persistent queries

    @_plan.register
    def _(self, statement: ast.CreateAsSelect) -> s.StatementPlan | None:
        existing = self.sources.get(statement.name)
        if existing is not None and not statement.or_replace:
            if statement.if_not_exists:
                return None
            msg = f"Cannot add {statement.kind.lower()} '{statement.name}': A {existing.kind.lower()} with the same name already exists"
            raise StatementError(msg)
        if statement.kind == TABLE:
            raise UnsupportedFeatureError("tables (CREATE TABLE AS SELECT)")
        properties = self._check_properties(statement.properties)
        planned = self._plan_query(statement.query, sink_name=statement.name)
        schema = planned.schema
        formats = self._formats(
            properties, schema, default_key=planned.source.formats.key_format,
            default_value=planned.source.formats.value_format, explicit_sink=True,
            default_value_features=_inherited_features(planned.source.formats.value_features, schema),
        )
        timestamp = self._timestamp_column(properties, schema)
        prefix = str(self.config.get(CONFIG_TOPIC_PREFIX, ""))
        topic = str(properties.get("KAFKA_TOPIC", prefix + statement.name))
        partitions = _int_property(properties, "PARTITIONS") or planned.source.partitions
        self.topic_partitions.setdefault(topic, partitions or self.topic_partitions.get(planned.source.topic, 1))
        query_id = f"CSAS_{statement.name}_{self.query_count}"
        self.query_count += 1
        sink = s.StreamSinkV1(context="KsqlTopic/Sink", source=planned.step, topic=topic, formats=formats,
                              timestamp_column=timestamp)
        self.sources[statement.name] = DataSource(
            name=statement.name, kind=STREAM, schema=schema, topic=topic, formats=formats,
            timestamp_column=timestamp, partitions=partitions, sql=statement.text,
        )
        command = s.CreateStreamV1(source_name=statement.name, schema=schema, topic=topic, formats=formats,
                                   timestamp_column=timestamp, or_replace=statement.or_replace)
        query = s.QueryPlan(query_id=query_id, sources=(planned.source.name,), sink=statement.name, physical_plan=sink)
        return s.KsqlPlanV1(statement_text=statement.text, ddl_command=command, query_plan=query)

    @_plan.register
    def _(self, statement: ast.InsertInto) -> s.StatementPlan | None:
        target = self._insert_target(statement.target, values=False)
        if target.kind != STREAM:
            msg = f"INSERT INTO can only be used to insert into a stream. {target.name} is a table."
            raise StatementError(msg)
        if target.is_source:
            msg = f"Cannot insert into read-only {target.kind.lower()}: {target.name}"
            raise SqlError(msg)
        if statement.properties:
            self._check_properties(statement.properties)
        planned = self._plan_query(statement.query, sink_name=target.name)
        if not _same_columns(planned.schema, target.schema):
            msg = (f"Incompatible schema between results and sink.\nResult schema is {planned.schema}"
                   f"\nSink schema is {target.schema}")
            raise StatementError(msg)
        query_id = f"INSERTQUERY_{self.query_count}"
        self.query_count += 1
        sink = s.StreamSinkV1(context="KsqlTopic/Sink", source=planned.step, topic=target.topic,
                              formats=target.formats, timestamp_column=target.timestamp_column)
        query = s.QueryPlan(query_id=query_id, sources=(planned.source.name,), sink=target.name, physical_plan=sink)
        return s.KsqlPlanV1(statement_text=statement.text, query_plan=query)

    def _plan_query(self, query: ast.Query, *, sink_name: str) -> PlannedQuery:
        if isinstance(query.from_, ast.Join):
            raise UnsupportedFeatureError("joins")
        if query.window is not None:
            raise UnsupportedFeatureError(f"windowed aggregation (WINDOW {query.window.kind})")
        if query.group_by is not None:
            raise UnsupportedFeatureError("aggregations (GROUP BY)")
        if query.having is not None:
            raise UnsupportedFeatureError("aggregations (HAVING)")
        relation = query.from_
        assert isinstance(relation, ast.Table)
        source = self.sources.get(relation.name)
        if source is None:
            msg = f"{relation.name} does not exist."
            raise SqlError(msg)
        if source.kind == TABLE:
            raise UnsupportedFeatureError("queries over tables")
        if query.limit is not None:
            msg = "CREATE STREAM AS SELECT statements don't support LIMIT clause."
            raise StatementError(msg)
        if query.emit == "FINAL":
            msg = "EMIT FINAL is only supported for windowed aggregations."
            raise StatementError(msg)
        _reject_aggregates(query)
        return QueryPlanner(self, source, relation.alias, sink_name).plan(query)


@dataclass
class PlannedQuery:
    step: s.ExecutionStep
    schema: LogicalSchema
    source: DataSource


class QueryPlanner:
    """Plans one stateless stream query: source, filter, partition-by, projection."""

    def __init__(self, planner: Planner, source: DataSource, alias: str | None, sink_name: str) -> None:
        self.planner = planner
        self.source = source
        self.alias = alias
        self.sink_name = sink_name
        self.qualifiers = frozenset([source.name] + ([alias] if alias else []))

    def _source_scope(self) -> Scope:
        columns = [ScopeColumn(c.name, c.type, self.qualifiers) for c in self.source.schema.columns]
        columns += [ScopeColumn(name, type_, self.qualifiers) for name, type_ in PSEUDO_COLUMNS.items()]
        return Scope(columns, self.qualifiers)

    def plan(self, query: ast.Query) -> PlannedQuery:
        source = self.source
        step: s.ExecutionStep = s.StreamSourceV1(
            context="KsqlTopic/Source", topic=source.topic, source_name=source.name,
            source_schema=source.schema, formats=source.formats, timestamp_column=source.timestamp_column,
        )
        scope = self._source_scope()
        schema = source.schema
        if query.where is not None:
            predicate = Analyzer(scope, "WHERE").boolean(query.where)
            step = s.StreamFilterV1(context="WhereFilter", source=step, filter_expression=predicate)

        partition_exprs: list[tuple[ast.Expr, e.Expression]] = []
        if query.partition_by is not None:
            partition_exprs = self._partition_expressions(query.partition_by, scope)

        items = self._expand_select(query.select, scope, schema, partitioned=query.partition_by is not None)
        select = self._name_items(items, scope)

        if query.partition_by is not None:
            step, scope, schema, select = self._partition(step, scope, schema, partition_exprs, select)

        key_names = self._key_columns(select, schema, partition_exprs)
        value_items = [item for item in select if item.alias not in key_names]
        if not value_items:
            msg = "The projection contains no value columns."
            raise StatementError(msg)
        expressions = tuple(
            s.SelectExpression(alias=item.alias, expression=item.expression) for item in select
        )
        step = s.StreamSelectV1(context="Project", source=step, key_column_names=tuple(key_names),
                                select_expressions=expressions)
        columns = [Column(i.alias, i.expression.result_type, KEY) for i in select if i.alias in key_names]
        columns.sort(key=lambda c: key_names.index(c.name))
        columns += [Column(i.alias, i.expression.result_type, VALUE) for i in value_items]
        out_schema = LogicalSchema(tuple(columns))
        _check_no_map_keys(out_schema.key)
        return PlannedQuery(step=step, schema=out_schema, source=source)

    # ------------------------------------------------------------------ projection

    def _expand_select(self, items: Sequence[ast.SelectItem], scope: Scope, schema: LogicalSchema,
                       *, partitioned: bool) -> list[tuple[ast.Expr, str | None]]:
        expanded: list[tuple[ast.Expr, str | None]] = []
        for item in items:
            if isinstance(item, ast.AllColumns):
                if item.source is not None and item.source not in self.qualifiers:
                    msg = f"Invalid table reference: {item.source}"
                    raise StatementError(msg)
                for column in list(schema.key) + list(schema.value):
                    expanded.append((ast.ColumnRef(name=column.name, source=None, pos=item.pos), None))
            elif isinstance(item, ast.StructAll):
                base = Analyzer(scope, "SELECT").typed(item.base)
                type_ = base.result_type
                if not isinstance(type_, t.Struct):
                    msg = f"Expected STRUCT type for '{format_expr(item.base)}->*' but got {type_}"
                    raise StatementError(msg)
                for f in type_.fields:
                    expanded.append((ast.Dereference(base=item.base, field=f.name, pos=item.pos), None))
            else:
                assert isinstance(item, ast.SingleColumn)
                expanded.append((item.expr, item.alias))
        return expanded

    def _name_items(self, items: Sequence[tuple[ast.Expr, str | None]], scope: Scope) -> list[SelectItem]:
        analyzer = Analyzer(scope, "SELECT")
        taken = {c.name for c in scope.columns} | {alias for _, alias in items if alias}
        used: set[str] = set()
        named: list[SelectItem] = []
        counter = 0
        for node, alias in items:
            expr = analyzer.typed(node) if not isinstance(node, ast.NullLiteral) else analyzer(node)
            if is_null_literal(expr):
                msg = "Can't infer a type of null. Please explicitly cast it to a required type, e.g. CAST(null AS VARCHAR)."
                raise StatementError(msg)
            if alias is None:
                if isinstance(node, ast.ColumnRef):
                    alias = node.name
                elif isinstance(node, ast.Dereference):
                    alias = _unique(node.field, taken | used)
                else:
                    while f"KSQL_COL_{counter}" in taken | used:
                        counter += 1
                    alias = f"KSQL_COL_{counter}"
                    counter += 1
            if alias in used:
                msg = f"Duplicate value columns found in schema: `{alias}`"
                raise StatementError(msg)
            used.add(alias)
            named.append(SelectItem(node=node, alias=alias, expression=expr))
        return named

    def _key_columns(self, select: Sequence[SelectItem], schema: LogicalSchema,
                     partition_exprs: Sequence[tuple[ast.Expr, e.Expression]]) -> list[str]:
        key_names: list[str] = []
        missing: list[str] = []
        for key in schema.key:
            aliases = [
                i.alias for i in select
                if isinstance(i.expression, e.ColumnRef) and i.expression.name == key.name
            ]
            if len(aliases) > 1:
                msg = (f"The projection contains a key column ({t.quote(key.name)}) more than once, aliased as: "
                       f"{' and '.join(aliases)}.")
                raise StatementError(msg)
            if not aliases:
                missing.append(key.name)
            else:
                key_names.append(aliases[0])
        if missing:
            if partition_exprs:
                shown = [self._qualified(n) for n, _ in partition_exprs]
                noun = "partitioning expression" if len(shown) == 1 else "partitioning expressions"
                listed = " and ".join([", ".join(shown[:-1]), shown[-1]] if len(shown) > 1 else shown)
                msg = (f"The query used to build {t.quote(self.sink_name)} must include the {noun} {listed} in its "
                       f"projection (eg, SELECT {', '.join(shown)}...).")
            else:
                noun = "key column" if len(missing) == 1 else "key columns"
                listed = " and ".join([", ".join(missing[:-1]), missing[-1]] if len(missing) > 1 else missing)
                msg = (f"The query used to build {t.quote(self.sink_name)} must include the {noun} {listed} in its "
                       f"projection (eg, SELECT {', '.join(missing)}...).")
            raise StatementError(msg)
        return key_names

    def _qualified(self, node: ast.Expr) -> str:
        return format_expr(_qualify(node, self.source.name))

    # ------------------------------------------------------------------ PARTITION BY

    def _partition_expressions(self, exprs: Sequence[ast.Expr], scope: Scope) -> list[tuple[ast.Expr, e.Expression]]:
        if not exprs:
            msg = "PARTITION BY requires at least one expression"
            raise StatementError(msg)
        analyzer = Analyzer(scope, "PARTITION BY")
        resolved = []
        for node in exprs:
            try:
                expr = analyzer(node)
            except StatementError as error:
                if "cannot be resolved" in error.message:
                    name = error.message.split("'")[1]
                    msg = (f"PARTITION BY column '{name}' cannot be resolved. '{name}' must be a column in the "
                           "source schema since PARTITION BY is applied on the input.")
                    raise SqlError(msg, line=error.line, column=error.column) from None
                raise
            resolved.append((node, expr))
        if len(resolved) > 1 and any(is_null_literal(x) for _, x in resolved):
            msg = "Cannot PARTITION BY multiple columns including NULL"
            raise StatementError(msg)
        return resolved

    def _partition(self, step: s.ExecutionStep, scope: Scope, schema: LogicalSchema,
                   partition_exprs: Sequence[tuple[ast.Expr, e.Expression]],
                   select: Sequence[SelectItem]) -> tuple[s.ExecutionStep, Scope, LogicalSchema, list[SelectItem]]:
        new_keys: list[s.SelectExpression] = []
        key_columns: list[Column] = []
        rewritten = list(select)
        if not (len(partition_exprs) == 1 and is_null_literal(partition_exprs[0][1])):
            for node, expr in partition_exprs:
                matching = [i for i, item in enumerate(rewritten) if item.expression == expr]
                if isinstance(node, ast.ColumnRef):
                    name = matching and rewritten[matching[0]].alias or node.name
                elif matching:
                    name = rewritten[matching[0]].alias
                else:
                    name = f"KSQL_COL_{len(new_keys)}"
                new_keys.append(s.SelectExpression(alias=name, expression=expr))
                key_columns.append(Column(name, expr.result_type, KEY))
                for index in matching:
                    item = rewritten[index]
                    rewritten[index] = SelectItem(
                        node=item.node, alias=item.alias, expression=e.ColumnRef(name=name, sql_type=expr.result_type)
                    )
        key_names = {c.name for c in key_columns}
        values = [Column(c.name, c.type, VALUE) for c in schema.columns if c.name not in key_names]
        new_schema = LogicalSchema(tuple(key_columns + values))
        new_step = s.StreamSelectKeyV1(context="PartitionBy", source=step, key_expressions=tuple(new_keys))
        _check_no_map_keys(new_schema.key)
        new_scope = Scope(
            [ScopeColumn(c.name, c.type, self.qualifiers) for c in new_schema.columns]
            + [ScopeColumn(n, ty, self.qualifiers) for n, ty in PSEUDO_COLUMNS.items()],
            self.qualifiers,
        )
        return new_step, new_scope, new_schema, rewritten


@dataclass(frozen=True)
class SelectItem:
    node: ast.Expr
    alias: str
    expression: e.Expression


def _qualify(node: ast.Expr, source: str) -> ast.Expr:
    """Qualify bare column references with ``source``, as ksqlDB prints them in messages."""
    if isinstance(node, ast.ColumnRef):
        return replace(node, source=node.source or source)
    changes = {}
    for name in getattr(node, "__dataclass_fields__", {}):
        if name == "pos":
            continue
        value = getattr(node, name)
        if isinstance(value, ast.Expr):
            changes[name] = _qualify(value, source)
        elif isinstance(value, tuple) and value and all(isinstance(v, ast.Expr) for v in value):
            changes[name] = tuple(_qualify(v, source) for v in value)
    return replace(node, **changes) if changes else node


def _unique(name: str, taken: Iterable[str]) -> str:
    taken = set(taken)
    if name not in taken:
        return name
    n = 1
    while f"{name}_{n}" in taken:
        n += 1
    return f"{name}_{n}"


def _reject_aggregates(query: ast.Query) -> None:
    from qtt.plan.analyzer import AGGREGATE_FUNCTIONS
    from qtt.sql.parser import iter_nodes

    for node in iter_nodes(query.select):
        if isinstance(node, ast.FunctionCall) and node.name in AGGREGATE_FUNCTIONS:
            raise UnsupportedFeatureError(f"aggregate function {node.name} (aggregations)")


def _check_no_map_keys(columns: Iterable[Column]) -> None:
    for column in columns:
        if t.contains_map(column.type):
            msg = ("Map keys, including types that contain maps, are not supported as they may lead to unexpected "
                   f"behavior due to inconsistent serialization. Key column name: {t.quote(column.name)}. "
                   f"Column type: {column.type}. See https://github.com/confluentinc/ksql/issues/6621 for more.")
            raise StatementError(msg)


def _same_columns(a: LogicalSchema, b: LogicalSchema) -> bool:
    return [(c.name, c.type, c.namespace) for c in a.columns] == [(c.name, c.type, c.namespace) for c in b.columns]


def _inherited_features(features: tuple[str, ...], schema: LogicalSchema) -> tuple[str, ...]:
    return features if len(schema.value) == 1 else ()


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
