"""Plan a case's statements, in order, into a :class:`~qtt.plan.ir.steps.Plan`.

The planner keeps a metastore of the streams and tables the statements create, plans every
persistent query (:mod:`qtt.plan.planner.query_planner`), and validates what ksqlDB validates, with
ksqlDB's messages. It never imports Spark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import singledispatchmethod

from qtt import sqltypes as t
from qtt.errors import ConfigError, QttError, SqlError, StatementError, UnsupportedFeatureError
from qtt.plan.analysis import messages
from qtt.plan.analysis.expression_errors import with_error_scope
from qtt.plan.ddl import upgrades
from qtt.plan.ddl.alters import altered_schema
from qtt.plan.ddl.create_checks import check_create_source, check_source_name, missing_primary_key, wrong_key_error
from qtt.plan.ddl.drops import refuse_drop_under_inserts
from qtt.plan.ddl.metastore import STREAM, TABLE, DataSource, check_no_shadowed_columns, unknown_source_hint
from qtt.plan.ddl.query_ids import create_as_query_id, has_writer, query_to_replace, refuse_many_writers
from qtt.plan.ddl.replaced import current_plan
from qtt.plan.ddl.schema_ids import check_sink_schemas, explain_failure
from qtt.plan.ddl.schema_inference import TopicSchemas, inferred_columns, with_declared_schemas
from qtt.plan.ddl.sql_schema import namespace_of
from qtt.plan.ddl.swaps import SWAP_IN_PLACE, start_gate, swap_in_place, with_start_gate
from qtt.plan.ddl.upgrades import KsqlAggregate, check_source_upgrade, extended_upgrades
from qtt.plan.ddl.with_clause import (
    check_topic_properties,
    create_as_properties,
    create_properties,
    insert_into_properties,
    insert_query_id,
)
from qtt.plan.ddl.with_properties import (
    check_supported,
    finish_formats,
    int_property,
    sink_format_infos,
    source_format_infos,
    timestamp_column,
)
from qtt.plan.insert_coercion import Evaluate
from qtt.plan.inserts import Insert, inserted_row, refuse_read_only_topic
from qtt.plan.ir import steps as s
from qtt.plan.ir.depth import deep_call
from qtt.plan.ir.schema import HEADER, HEADERS, RESERVED_NAMES, Column, LogicalSchema
from qtt.plan.planner.header_columns import check_header_column
from qtt.plan.planner.planned import check_no_map_keys
from qtt.plan.planner.query_planner import plan_query
from qtt.plan.planner.sink_fit import fit_to_sink
from qtt.plan.planner.statement_text import statement_text_shown
from qtt.plan.planner.window_planner import duration_ms, source_window
from qtt.plan.settings import CREATE_OR_REPLACE_ENABLED, check_settings, enabled, trimmed
from qtt.plan.source_names import check_sources_known, insert_target
from qtt.sql import ast

#: ksqlDB's prefix for the topics of C*AS sinks that name none.
CONFIG_TOPIC_PREFIX = "ksql.output.topic.name.prefix"


@dataclass
class PlannedCase:
    """The result of planning a case's statements."""

    plan: s.Plan
    sources: dict[str, DataSource]
    topic_partitions: dict[str, int] = field(default_factory=dict)
    #: the rows of the case's ``INSERT INTO ... VALUES`` statements, in statement order
    inserts: tuple[Insert, ...] = ()
    #: each query's aggregation as ksqlDB records it, by query id (``PlannedQuery.ksql_aggregate``)
    ksql_aggregates: Mapping[str, KsqlAggregate] = field(default_factory=dict)


def plan_statements(
    statements: Sequence[ast.Statement],
    properties: Mapping[str, object] | None = None,
    topic_schemas: TopicSchemas | None = None,
    declared_partitions: Mapping[str, int] | None = None,
    evaluate: Evaluate | None = None,
) -> PlannedCase:
    """Plan every statement in order; ``declared_partitions`` are the partition counts a case's
    ``topics`` section gives (its topics exist before the statements run), and ``evaluate``
    evaluates an ``INSERT ... VALUES`` value that is not a literal (none: not supported).

    Raises:
        SqlError: a statement is invalid (subclasses name the reason).
        UnsupportedFeatureError: a statement needs a feature qtt does not support yet.
    """
    check_settings(properties or {})  # ksqlDB reads them as a KsqlConfig before any statement
    planner = Planner(properties or {}, topic_schemas or {}, declared_partitions or {}, evaluate)
    planner.keyed_topics = frozenset(
        str(st.properties["KAFKA_TOPIC"])
        for st in statements
        if isinstance(st, ast.CreateSource)
        and "KAFKA_TOPIC" in st.properties
        and any(e.constraint in ("KEY", "PRIMARY KEY") for e in st.elements)
    )
    # The analyzer recurses over expressions: deep ones (generated SQL) need a large stack.
    planned = deep_call(lambda: [planner.plan(statement) for statement in statements])
    plan = with_error_scope(current_plan(properties or {}, [p for p in planned if p is not None]))
    return PlannedCase(
        plan=plan,
        sources=dict(planner.sources),
        topic_partitions=planner.topic_partitions,
        inserts=tuple(planner.inserts),
        ksql_aggregates=planner.ksql_aggregates,
    )


class Planner:
    """Stateful planner over one case's statements: one method per statement type."""

    def __init__(
        self,
        properties: Mapping[str, object],
        topic_schemas: TopicSchemas | None = None,
        declared_partitions: Mapping[str, int] | None = None,
        evaluate: Evaluate | None = None,
    ) -> None:
        self.config: dict[str, object] = trimmed(properties)
        #: schemas registered before the statements run, for ksqlDB's schema inference
        self.topic_schemas: TopicSchemas = topic_schemas or {}
        #: topics a CREATE of the case declares key columns for (ksqlDB's runner registers their key schemas)
        self.keyed_topics: frozenset[str] = frozenset()
        #: partition counts of the topics that exist before the statements run (a case's ``topics``)
        self.declared_partitions: Mapping[str, int] = declared_partitions or {}
        self.evaluate = evaluate
        self.sources: dict[str, DataSource] = {}
        self.topic_partitions: dict[str, int] = {}
        self.query_count = 0
        #: the persistent query writing each C*AS sink, which CREATE OR REPLACE upgrades in place
        self.sink_queries: dict[str, s.QueryPlan] = {}
        #: every running persistent query (C*AS and INSERT INTO), by query id
        self.running: dict[str, s.QueryPlan] = {}
        #: each query's aggregation as ksqlDB records it, which the plan does not hold
        self.ksql_aggregates: dict[str, KsqlAggregate] = {}
        #: the rows of ``INSERT INTO ... VALUES`` statements, in statement order
        self.inserts: list[Insert] = []
        #: the custom types (``CREATE TYPE``) by upper-case name; the parser has resolved their uses
        self.types: dict[str, t.SqlType] = {}

    def plan(self, statement: ast.Statement) -> s.StatementPlan | None:
        """Plan one statement; None for statements that only change the planner's state."""
        try:
            return self._plan(statement)
        except QttError as error:
            if statement.pos is not None and error.line is None:
                error.at(line=statement.pos.line, column=statement.pos.column)
            if isinstance(error, SqlError) and isinstance(statement, ast.CreateAsSelect | ast.InsertInto):
                error.ksql_statement = statement_text_shown(statement, self.sources)  # a failed statement added none
            explain_failure(statement, error)
            raise

    @singledispatchmethod
    def _plan(self, statement: ast.Statement) -> s.StatementPlan | None:
        raise UnsupportedFeatureError(f"statement {type(statement).__name__}")

    # ------------------------------------------------------------------ DDL

    @_plan.register
    def visit_CreateSource(self, statement: ast.CreateSource) -> s.StatementPlan | None:
        # What ksqlDB's parser checks (AstBuilder): the columns, the name, then the WITH clause.
        check_create_source(statement)
        properties = create_properties(statement.properties, window_size=duration_ms)
        stream = statement.kind == STREAM
        for element in statement.elements:  # CreateStream and CreateTable check their keys' words
            if element.constraint in ("KEY", "PRIMARY KEY") and (element.constraint == "KEY") != stream:
                raise wrong_key_error(element, messages.wrong_key_constraint(element.name, stream=stream))
        check_supported(properties)
        topic = str(properties["KAFKA_TOPIC"])
        # Then its injectors (formats and their schema ids, the topic), then CreateSourceFactory.
        declared = (
            any(e.constraint in ("KEY", "PRIMARY KEY") for e in statement.elements),
            any(e.constraint is None for e in statement.elements),
        )
        key_info, value_info = source_format_infos(
            self.config, properties, source_name=statement.name, declared=declared
        )
        schema = self._declared_schema(statement, topic, key_info, value_info, properties)
        # a stream's timestamp column is checked before its name, a table's after its key
        timestamp = timestamp_column(properties, schema) if statement.kind == STREAM else None
        existing = self.sources.get(statement.name)
        kind = statement.kind
        if existing is not None and not statement.or_replace:
            if statement.if_not_exists:
                return None
            msg = (
                f"Cannot add {kind.lower()} '{statement.name}': A {existing.kind.lower()} with "
                "the same name already exists"
            )
            raise StatementError(msg)
        if kind == TABLE and not schema.key:
            raise StatementError(missing_primary_key(statement.name, properties))
        if statement.or_replace and (statement.is_source or (existing is not None and existing.is_source)):
            msg = (
                f"Cannot add {kind.lower()} '{statement.name}': CREATE OR REPLACE is not "
                f"supported on source {kind.lower()}s."
            )
            raise SqlError(msg)
        if kind == TABLE:
            timestamp = timestamp_column(properties, schema)
        formats = finish_formats(self.config, key_info, value_info, properties, schema)
        formats = replace(formats, window=source_window(properties, keyed=bool(schema.key)))
        partitions = int_property(properties, "PARTITIONS")
        self.topic_partitions.setdefault(topic, self.declared_partitions.get(topic) or partitions or 1)  # exists first
        source = DataSource(
            name=statement.name,
            kind=kind,
            schema=schema,
            topic=topic,
            formats=formats,
            timestamp_column=timestamp,
            is_source=statement.is_source,
            partitions=self.declared_partitions.get(topic) or partitions,  # the topic, as it exists, counts
            sql=statement.text,
        )
        if existing is not None:  # CREATE OR REPLACE of a stream or table a statement declared
            check_source_upgrade(existing, source)
        self.sources[statement.name] = source
        declared_columns = [Column(e.name, e.type, namespace_of(e.constraint)) for e in statement.elements]
        self.topic_schemas = with_declared_schemas(self.topic_schemas, topic, declared_columns, formats)
        self.query_count += statement.is_source and kind == TABLE  # its query CST_<name>_<n> takes a number
        return _declaration(source, statement.text, or_replace=statement.or_replace)

    def _declared_schema(
        self,
        statement: ast.CreateSource,
        topic: str,
        key_info: s.FormatInfo,
        value_info: s.FormatInfo,
        properties: Mapping[str, object],
    ) -> LogicalSchema:
        columns: list[Column] = []
        for element in statement.elements:
            if element.name in RESERVED_NAMES:
                msg = f"'{element.name}' is a reserved column name. You cannot use it as a name for a column."
                raise StatementError(msg)
            if element.constraint in (HEADERS, HEADER):
                check_header_column(element, columns)
            _spark_holds(element.type)
            columns.append(Column(element.name, element.type, namespace_of(element.constraint), element.header_key))
        keyed = topic in self.keyed_topics
        columns = inferred_columns(columns, topic, key_info, value_info, properties, self.topic_schemas, keyed=keyed)
        # TopicCreateInjector runs after the schema injector, before CreateSourceFactory
        check_topic_properties(properties, compacted=statement.kind == TABLE and properties.get("WINDOW_TYPE") is None)
        if not columns:
            msg = "The statement does not define any columns."
            raise StatementError(msg)
        schema = LogicalSchema(tuple(columns))
        check_no_map_keys(schema.key)
        return schema

    @_plan.register
    def visit_DropSource(self, statement: ast.DropSource) -> s.StatementPlan | None:
        existing = self.sources.get(statement.name)
        if existing is None:
            if statement.if_exists:
                return None
            msg = f"{statement.kind.capitalize()} {statement.name} does not exist."
            raise StatementError(msg, hint=unknown_source_hint(statement.name, self.sources))
        if existing.kind != statement.kind:
            msg = (
                f"Incompatible data source type is {existing.kind.lower()}, "
                f"but statement was DROP {statement.kind.lower()}"
            )
            raise StatementError(msg)
        if statement.delete_topic and existing.is_source:
            msg = f"Cannot delete topic for read-only source: {statement.name}"
            raise StatementError(msg)
        refuse_drop_under_inserts(statement.name, self.sink_queries, self.running)
        readers = sorted({q.sink for q in self.running.values() if statement.name in q.sources} - {statement.name})
        if readers:
            msg = (
                f"Cannot drop {statement.name}.\nThe following streams and/or tables read from this "
                f"source: [{', '.join(readers)}].\nYou need to drop them before dropping {statement.name}."
            )
            raise StatementError(msg)
        # dropping a sink terminates the queries writing to it
        self.sink_queries.pop(statement.name, None)
        self.running = {i: q for i, q in self.running.items() if q.sink != statement.name}
        del self.sources[statement.name]
        return s.KsqlPlanV1(statement_text=statement.text, ddl_command=s.DropSourceV1(source_name=statement.name))

    @_plan.register
    def visit_AlterSource(self, statement: ast.AlterSource) -> s.StatementPlan | None:
        """``ALTER STREAM|TABLE name ADD COLUMN ...``: the source's value columns gain the new ones
        at their end. Queries already running keep the schema they were planned with; a query
        started or upgraded from now on reads the new columns. The plan declares the source
        again with its new schema (as ``CREATE OR REPLACE`` of the source would)."""
        existing = self.sources.get(statement.name)
        if existing is None:
            raise StatementError(f"Source {statement.name} does not exist.")
        # ksqlDB's engine raises these as KsqlStatementExceptions (EngineExecutor.plan and .executeDdl)
        if existing.is_source:  # AlterSourceFactory names the statement's kind
            kind = statement.kind.lower()
            msg = f"Cannot alter {kind} '{statement.name}': ALTER operations are not supported on source {kind}s."
            raise StatementError(msg)
        if existing.kind != statement.kind:
            msg = f"Incompatible data source type is {existing.kind}, but statement was ALTER {statement.kind}"
            raise StatementError(msg)
        if existing.cas_target:
            raise StatementError("ALTER command is not supported for CREATE ... AS statements.")
        schema = altered_schema(existing.schema, [(e.name, e.type) for e in statement.columns])
        altered = replace(existing, schema=schema)
        self.sources[statement.name] = altered
        return _declaration(altered, statement.text, or_replace=True)

    @_plan.register
    def visit_RegisterType(self, statement: ast.RegisterType) -> s.StatementPlan | None:
        name = statement.name.upper()
        existing = self.types.get(name)
        if existing is not None and not statement.if_not_exists:
            msg = f"Cannot register custom type '{statement.name}' since it is already registered with type: {existing}"
            raise StatementError(msg)
        self.types.setdefault(name, statement.type)
        return None

    @_plan.register
    def visit_DropType(self, statement: ast.DropType) -> s.StatementPlan | None:
        if self.types.pop(statement.name.upper(), None) is None and not statement.if_exists:
            raise StatementError(f"Type {statement.name} does not exist.")
        return None

    @_plan.register
    def visit_SetProperty(self, statement: ast.SetProperty) -> s.StatementPlan | None:
        try:  # ksqlDB's PropertyOverrider: its ConfigException's words, as the statement's error
            check_settings({statement.name: statement.value})
        except ConfigError as error:
            raise StatementError(error.message) from None
        self.config.update(trimmed({statement.name: statement.value}))
        return None

    @_plan.register
    def visit_UnsetProperty(self, statement: ast.UnsetProperty) -> s.StatementPlan | None:
        self.config.pop(statement.name, None)
        return None

    @_plan.register
    def visit_InsertValues(self, statement: ast.InsertValues) -> s.StatementPlan | None:
        # A case writes these rows before its inputs (a SQL test interprets its INSERTs itself).
        self.inserts.append(inserted_row(self.insert_values_target(statement), statement, self.evaluate))
        return None

    def insert_values_target(self, statement: ast.InsertValues) -> DataSource:
        """The stream or table that ``INSERT INTO ... VALUES`` writes to, checked as ksqlDB does."""
        target = insert_target(statement, self.sources)
        if target.is_source:
            msg = f"Cannot insert values into read-only {target.kind.lower()}: {target.name}"
            raise SqlError(msg)
        if target.formats.window is not None:
            raise SqlError("Cannot insert values into windowed stream/table!")
        refuse_read_only_topic(target.topic, self.config)
        written = set(statement.columns) if statement.columns else set(target.schema.names())
        headers = [c.name for c in target.schema.headers if c.name in written]
        if headers:
            raise SqlError(f"Cannot insert into HEADER columns: {', '.join(headers)}")
        return target

    # ------------------------------------------------------------------ persistent queries

    @_plan.register
    def visit_CreateAsSelect(self, statement: ast.CreateAsSelect) -> s.StatementPlan | None:
        # ksqlDB's parser checks the name and the WITH clause (a query's result is windowed by its
        # query, never by WINDOW_TYPE), then its topic injector the topic's properties.
        check_source_name(statement)
        properties = create_as_properties({k: v for k, v in statement.properties.items() if k != SWAP_IN_PLACE})
        if statement.query.limit is not None:  # ksqlDB's parser, before any source is looked up
            # (an INSERT INTO's LIMIT is accepted: a persistent query's limit node builds nothing)
            raise StatementError(f"CREATE {statement.kind} AS SELECT statements don't support LIMIT clause.")
        check_sources_known(statement.query.from_, self.sources)
        check_topic_properties(properties, compacted=statement.kind == TABLE and statement.query.window is None)
        existing = self.sources.get(statement.name)
        swap = swap_in_place(statement)
        check_no_shadowed_columns(statement.query.from_, self.sources)
        planned = plan_query(
            statement.query, self.sources, self.config, sink_name=statement.name, sink_kind=statement.kind
        )
        produced = TABLE if planned.is_table else STREAM
        # ksqlDB's EngineExecutor plans the query first, then finds the name taken (naming what
        # the query produces), then checks the result's kind, even under IF NOT EXISTS
        refuse_many_writers(statement.name, self.sink_queries, self.running)  # QueryIdUtil.buildId
        if not enabled(self.config, CREATE_OR_REPLACE_ENABLED, True) and has_writer(existing, self.running):
            # QueryIdUtil.buildId may not reuse the running query's id (a source table's own, too)
            kind = produced.lower()
            raise StatementError(f"Cannot add {kind} '{statement.name}': A {kind} with the same name already exists")
        kept = existing is not None and not statement.or_replace
        if existing is not None and kept and not statement.if_not_exists:
            msg = (
                f"Cannot add {produced.lower()} '{statement.name}': A "
                f"{existing.kind.lower()} with the same name already exists"
            )
            raise StatementError(msg)
        if produced != statement.kind:
            msg = (
                f"Invalid result type. Your SELECT query produces a {produced}. Please use CREATE "
                f"{produced} AS SELECT statement instead."
            )
            raise StatementError(msg)
        replaced = query_to_replace(existing, self.sink_queries, self.running)  # read-only sinks refused
        if kept:
            return None
        schema = planned.schema
        key_info, value_info = sink_format_infos(
            self.config,
            properties,
            planned.source.formats,
            schema,
            partitioned_by_null=planned.partitioned_by_null,
            sink_name=statement.name,
        )
        formats = finish_formats(self.config, key_info, value_info, properties, schema)
        if planned.window is not None:
            formats = replace(formats, window=planned.window)
        timestamp = timestamp_column(properties, schema)
        check_sink_schemas(properties, formats, schema, self.topic_schemas)
        prefix = str(self.config.get(CONFIG_TOPIC_PREFIX, ""))
        topic = str(properties.get("KAFKA_TOPIC", prefix + statement.name))
        partitions = int_property(properties, "PARTITIONS") or planned.source.partitions
        self.topic_partitions.setdefault(topic, partitions or self.topic_partitions.get(planned.source.topic, 1))
        step = planned.step
        if swap:
            step = with_start_gate(statement, replaced, step)
        if replaced is not None and not swap:
            query_id = replaced.query_id  # ksqlDB upgrades the running query in place
        else:
            query_id = create_as_query_id(statement.name, table=planned.is_table, number=self.query_count)
            self.query_count += 1
        sink_step = s.TableSinkV1 if planned.is_table else s.StreamSinkV2
        sink = sink_step(
            context="KsqlTopic/Sink",
            source=step,
            topic=topic,
            formats=formats,
            timestamp_column=timestamp,
            partitions=self.topic_partitions[topic],
        )
        sink_source = DataSource(
            name=statement.name,
            kind=produced,
            schema=schema,
            topic=topic,
            formats=formats,
            timestamp_column=timestamp,
            partitions=partitions,
            sql=statement.text,
            cas_target=True,
        )
        if existing is not None:
            check_source_upgrade(existing, sink_source)
        if replaced is not None and not swap:  # a swapped query starts from empty state
            aggregates = (self.ksql_aggregates.get(query_id, KsqlAggregate()), planned.ksql_aggregate)
            _check_in_place(replaced, sink, extended=extended_upgrades(self.config), aggregates=aggregates)
        if replaced is not None and swap:
            del self.running[replaced.query_id]
        self.sources[statement.name] = sink_source
        self.topic_schemas = with_declared_schemas(self.topic_schemas, topic, schema.columns, formats, sink=True)
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
            sources=planned.sources,
            sink=statement.name,
            physical_plan=sink,
        )
        self.sink_queries[statement.name] = query
        self.running[query_id] = query
        self.ksql_aggregates[query_id] = planned.ksql_aggregate
        return s.KsqlPlanV1(statement_text=statement.text, ddl_command=command, query_plan=query)

    @_plan.register
    def visit_InsertInto(self, statement: ast.InsertInto) -> s.StatementPlan | None:
        properties = insert_into_properties(statement.properties)  # ksqlDB's parser checks them first
        target = insert_target(statement, self.sources)
        if target.kind != STREAM:
            msg = (  # AstSanitizer's, as the statement is prepared
                "Exception while preparing statement: INSERT INTO can only be used to insert into a stream. "
                f"{target.name} is a table."
            )
            raise StatementError(msg)
        if target.schema.headers:
            msg = f"Exception while preparing statement: Cannot insert into {target.name} because it has header columns"
            raise StatementError(msg)
        check_no_shadowed_columns(statement.query.from_, self.sources)
        planned = plan_query(statement.query, self.sources, self.config, sink_name=target.name)
        if planned.is_table:  # ksqlDB's EngineExecutor.validateExistingSink
            msg = (
                f"Incompatible data sink and query result. Data sink ({target.name}) type is KSTREAM "
                "but select query result is KTABLE."
            )
            raise StatementError(msg)
        planned = fit_to_sink(planned, target.schema, statement.query.select)
        if planned.schema != target.schema:
            msg = (
                f"Incompatible schema between results and sink.\nResult schema is {planned.schema}"
                f"\nSink schema is {target.schema}"
            )
            raise StatementError(msg)
        query_id = insert_query_id(properties, self.running).get("QUERY_ID")
        if not isinstance(query_id, str):
            query_id = f"INSERTQUERY_{self.query_count}"
            self.query_count += 1
        if target.is_source:  # ksqlDB's EngineExecutor.execute, once the query has planned
            raise SqlError(f"Cannot insert into read-only {target.kind.lower()}: {target.name}")
        sink = s.StreamSinkV2(
            context="KsqlTopic/Sink",
            source=planned.step,
            topic=target.topic,
            formats=target.formats,
            timestamp_column=None,  # ksqlDB's INSERT INTO sink has no properties: records keep their ROWTIME
            partitions=self.topic_partitions.get(target.topic, 1),
        )
        query = s.QueryPlan(query_id=query_id, sources=planned.sources, sink=target.name, physical_plan=sink)
        self.running[query_id] = query
        return s.KsqlPlanV1(statement_text=statement.text, query_plan=query)


def _check_in_place(
    replaced: s.QueryPlan, sink: s.ExecutionStep, *, extended: bool, aggregates: upgrades.KsqlAggregates
) -> None:
    """Refuse an in-place upgrade that cannot resume the running query's state, saying what can."""
    if start_gate(replaced) is not None:
        msg = (
            f"Cannot upgrade {replaced.query_id} in place: it was swapped in place, and its start gate's "
            f"state is not the new plan's; swap it again with WITH ({SWAP_IN_PLACE}=true)"
        )
        raise StatementError(msg)
    try:
        upgrades.check_query_upgrade(replaced.physical_plan, sink, extended=extended, aggregates=aggregates)
    except SqlError as refused:
        refused.hint = refused.hint or (
            f"a query whose state the new plan cannot resume can be swapped in place: CREATE OR REPLACE ... "
            f"WITH ({SWAP_IN_PLACE}=true) AS SELECT ... runs it from the first record beside the old one "
            "and cuts over at control events (docs/upgrades.md)"
        )
        raise


def _declaration(source: DataSource, text: str, *, or_replace: bool) -> s.KsqlPlanV1:
    """The statement that declares ``source`` in a plan."""
    create = s.CreateTableV1 if source.kind == TABLE else s.CreateStreamV1
    command = create(
        source_name=source.name,
        schema=source.schema,
        topic=source.topic,
        formats=source.formats,
        timestamp_column=source.timestamp_column,
        is_source=source.is_source,
        or_replace=or_replace,
    )
    return s.KsqlPlanV1(statement_text=text, ddl_command=command)


def _spark_holds(type_: t.SqlType) -> None:
    """Raise :class:`UnsupportedFeatureError` for a column type Spark cannot hold."""
    too_wide = t.wider_than_spark(type_)
    if too_wide is not None:
        raise UnsupportedFeatureError(too_wide)
