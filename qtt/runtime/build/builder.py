"""Build a query's physical plan into a streaming DataFrame: one method per step type.

The builder visits the step tree from the sources down, builds each step once, and hands
each method its already-built inputs. Every stream DataFrame carries the step's key and
value columns followed by :data:`qtt.runtime.build.names.SYSTEM_COLUMNS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.errors import QueryStops, RuntimeBuildError, UnsupportedFeatureError
from qtt.plan.ir import join_steps as js
from qtt.plan.ir import steps as s
from qtt.plan.ir.codec import step_paths
from qtt.plan.ir.expressions import Call, ColumnRef
from qtt.plan.ir.schema import KEY, VALUE, WINDOWEND, WINDOWSTART, LogicalSchema
from qtt.plan.ir.schema import Column as SchemaColumn
from qtt.runtime.build import flat_map, serde_udfs
from qtt.runtime.build.compiler import Compiler
from qtt.runtime.build.context import BUILDERS, Built, StatefulHook, StateProcessor, builds
from qtt.runtime.build.header_reader import header_columns
from qtt.runtime.build.names import (
    DECODED,
    HAD_PREVIOUS,
    NULL_KEY,
    ORDER,
    ROWOFFSET,
    ROWPARTITION,
    ROWTIME,
    SEQ,
    SYSTEM_COLUMNS,
    TOMBSTONE,
    WINDOW_END,
    WINDOW_START,
    col,
    data_col,
    is_data,
    is_stored,
    stored,
)
from qtt.runtime.build.previous_filter import filter_against_previous
from qtt.runtime.build.repartitions import Repartition, repartition, select_key
from qtt.runtime.build.sink_builder import SinkOutput, build_sink
from qtt.runtime.build.timeformat import timestamp_millis
from qtt.runtime.build.windowed_keys import source_window
from qtt.runtime.jobs import DEFAULT_SETTINGS, QuerySettings
from qtt.runtime.spark import lines
from qtt.runtime.spark.spark_types import from_spark, to_spark
from qtt.serde.registry.schema_registry import RegistrySnapshot

if TYPE_CHECKING:
    from qtt.runtime.build.serde_udfs import DecodedColumns


@dataclass
class Observation:
    """A processing-log metric attached to a step: ``name`` in the query's observed metrics."""

    name: str
    context: str


def _stops_without_timestamp(column: s.TimestampColumn, owner: str, *, in_key: bool) -> Column:
    """ROWTIME, or the query stops where the timestamp column gives none: ksqlDB's extractor
    throws under ``ksql.timestamp.throw.on.invalid`` instead of dropping the record (a negative
    timestamp is no extractor error: Kafka Streams still drops it). A delete (null value) has no
    value column to read, so it stops the query too unless the column is in the key.

    The cause is ksqlDB's: a null column (or a delete) fails as Java unboxes or reads it, a
    ``NullPointerException``; text its format cannot read fails in ``StringTimestampExtractor``,
    whose message goes on with the row and the format after the first sentence kept here."""
    message = "Fatal user code error in TimestampExtractor callback for record"
    missing = QueryStops("java.lang.NullPointerException", "", message=message, owner=owner)
    unparsed = QueryStops(
        "io.confluent.ksql.util.KsqlException", "Unable to parse string timestamp.", message=message, owner=owner
    )
    failed = col(ROWTIME).isNull()
    if in_key:
        failed = failed & ~F.coalesce(col(TOMBSTONE), F.lit(False))
    stop = F.when(col(column.column).isNull(), F.lit(str(missing))).otherwise(F.lit(str(unparsed)))
    return F.when(failed, F.raise_error(stop)).otherwise(col(ROWTIME))


@dataclass
class PlanBuilder:
    """Builds one query. ``raw`` holds this query's replay records; all source steps share it.

    ``label`` makes names that must be unique within a streaming query (observed metrics)
    unique when several queries share one.
    """

    raw: DataFrame
    query_id: str
    label: str = ""
    #: the schemas the replay's registry holds, for the registry formats
    registry: RegistrySnapshot | None = None
    #: source step context -> where ``raw`` holds its records decoded ahead (:mod:`.group_source`)
    decoded: Mapping[str, DecodedColumns] = field(default_factory=dict)
    #: leave the sink's encoding to the driver (:class:`~qtt.runtime.build.sink_builder.SinkEncoding`)
    encode_after: bool = False
    observations: list[Observation] = field(default_factory=list)
    schemas: dict[str, LogicalSchema] = field(default_factory=dict)
    sink: SinkOutput | None = None
    #: the repartition topics the query writes besides its sink
    repartitions: list[Repartition] = field(default_factory=list)
    #: the state variables of each stateful operator, in the order they were built
    state_operators: list[tuple[str, ...]] = field(default_factory=list)
    #: stands in for Spark's ``transformWithState`` (see :data:`StatefulHook`)
    stateful_hook: StatefulHook | None = None
    #: the plan's config that changes how the query runs
    settings: QuerySettings = DEFAULT_SETTINGS
    _built: dict[int, Built] = field(default_factory=dict)
    _previous_wanted: set[int] = field(default_factory=set)
    _paths: dict[int, str] = field(default_factory=dict)

    def build(self, step: s.ExecutionStep) -> Built:
        """Build ``step`` and everything upstream of it, each step once.

        Raises:
            RuntimeBuildError: a step cannot be built; a plan that loads but does not fit
                together (a step reads a column its source does not have) names the step's
                JSON path inside the query plan and what was missing.
        """
        if not self._paths:
            self._paths = step_paths(
                step, f"$.statements[?(@.queryPlan.queryId == '{self.query_id}')].queryPlan.physicalPlan"
            )
        cached = self._built.get(id(step))
        if cached is not None:
            return cached
        if isinstance(step, s.TableFilterV2):
            # its aggregate must send each group's previous result along (see table_filter_v2)
            self._previous_wanted.add(id(step.source))
        inputs = [self.build(source) for source in step.sources()]
        method = BUILDERS.get(type(step))
        if method is None:
            msg = f"no builder for step type {step.type_tag!r} ({type(step).__qualname__})"
            raise RuntimeBuildError(msg, path=self._paths.get(id(step)))
        try:
            built = method(self, step, *inputs)
        except Py4JJavaError as e:
            # A StackOverflowError here is an expression too deep for the JVM thread's stack.
            reason = str(e.java_exception).splitlines()[0][:300]
            msg = f"Spark could not build step {step.type_tag!r} ({step.context}) of {self.query_id}: {reason}"
            hint = "give the driver JVM a larger thread stack (-Xss), or split the expression"
            raise RuntimeBuildError(msg, path=self._paths.get(id(step)), hint=hint) from None
        except (KeyError, IndexError, PySparkException) as e:
            if isinstance(e, PySparkException):
                # Spark's analyzer names the column that an expression reads and the source lacks.
                needs = str(e).splitlines()[0][:300]
                gap = lines.lacking(str(e))
                if gap is not None:  # an older Spark line, not a damaged plan
                    raise UnsupportedFeatureError(gap) from None
            else:
                needs = f"it needs {e.args[0] if e.args else '?'!r}, which its source does not have"
            msg = f"step {step.type_tag!r} ({step.context}) of {self.query_id} does not fit its sources: {needs}"
            raise RuntimeBuildError(
                msg, path=self._paths.get(id(step)), hint="the plan file is damaged; restore it from version control"
            ) from None
        self._built[id(step)] = built
        self.schemas[step.context] = built.schema
        return built

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def schema_of(df: DataFrame, key_names: list[str], value_names: list[str]) -> LogicalSchema:
        """The logical schema, with types read back from the Spark DataFrame itself."""
        types = {f.name: from_spark(f.dataType) for f in df.schema.fields}
        columns = [SchemaColumn(n, types.get(stored(n)) or types[n], KEY) for n in key_names]
        columns += [SchemaColumn(n, types.get(stored(n)) or types[n], VALUE) for n in value_names]
        return LogicalSchema(tuple(columns))

    @staticmethod
    def system_columns(df: DataFrame | None = None) -> list[Column]:
        """The system columns, and the output order column of stateful steps when ``df`` has it."""
        ordered = df is not None and ORDER in df.columns
        windowed = df is not None and WINDOW_START in df.columns
        return (
            [col(name) for name in SYSTEM_COLUMNS]
            + ([col(ORDER)] if ordered else [])
            + ([col(WINDOW_START), col(WINDOW_END)] if windowed else [])
        )

    def emits_previous(self, step: s.ExecutionStep) -> bool:
        """Whether a ``HAVING`` filter (``TableFilterV2``) reads ``step``: then ``step`` sends each
        key's previous result along."""
        return id(step) in self._previous_wanted

    def stateful(
        self, df: DataFrame, keys: Sequence[str], processor: StateProcessor, output: st.StructType
    ) -> DataFrame:
        """The one way a step keeps state: ``processor`` over ``df`` grouped by the ``keys`` columns,
        its variables recorded.

        See docs/architecture.md, "Stateful operators: the contract". A staged
        replay (:mod:`qtt.runtime.execute.staged`) sets :attr:`stateful_hook` to run the operator itself.
        """
        self.state_operators.append(tuple(processor.state_names()))
        processor.owner = self.label  # a stop it raises names its query (QueryStops.of)
        if self.stateful_hook is not None:
            return self.stateful_hook(len(self.state_operators) - 1, df, list(keys), processor, output)
        return df.groupBy(*[col(k) for k in keys]).transformWithState(
            statefulProcessor=processor,  # type: ignore[arg-type]
            outputStructType=output,
            outputMode="Update",
            timeMode="None",
        )

    # ------------------------------------------------------------------ steps

    @builds(s.StreamSourceV1)
    def stream_source_v1(self, step: s.StreamSourceV1) -> Built:
        return self._source(step)

    def _source(self, step: s.SourceStep) -> Built:
        schema = step.source_schema
        records = self.raw.where(F.col("topic") == F.lit(step.topic))
        if "headers" in self.raw.columns:  # a control event of a swap-in-place upgrade is never data
            records = records.where(is_data())
        headers = [F.col("headers")] if schema.headers else []  # plans without them keep their topology
        serde: dict[str, Any] = {"topic": step.topic, "registry": self.registry}
        key, bounds = F.col("key"), list[Column]()
        if step.formats.window is not None:  # the key's own bytes, then its window
            key, bounds = source_window(F.col("key"), step.formats.window)
        ahead = self.decoded.get(step.context)
        decoded = (
            ahead.struct()
            if ahead is not None
            else serde_udfs.decode(step.formats, schema.key, schema.value, key, F.col("value"), **serde)
        )
        df = records.select(
            F.col("seq"),
            F.col("partition"),
            F.col("offset"),
            F.col("timestamp"),
            *headers,
            *bounds,
            decoded.alias(DECODED),
        )
        fields = col(DECODED)
        observation = f"{self.label}{self.query_id}.{step.context}.processing_log".replace("/", "_")
        failed = fields.getField(serde_udfs.ERROR_FIELD).isNotNull()
        df = df.observe(
            observation,
            F.collect_list(
                F.when(failed, F.struct(F.col("seq"), fields.getField(serde_udfs.ERROR_FIELD).alias("message")))
            ).alias("errors"),
        )
        self.observations.append(Observation(observation, step.context))
        df = df.where(~failed)
        key_cols = [fields.getField(serde_udfs.KEY_FIELD).getField(c.name).alias(c.name) for c in schema.key]
        value_cols = [fields.getField(serde_udfs.VALUE_FIELD).getField(c.name).alias(c.name) for c in schema.value]
        rowtime = F.col("timestamp")
        if step.timestamp_column is not None:
            ts_column = schema.find(step.timestamp_column.column)
            if ts_column is None:
                raise KeyError(step.timestamp_column.column)
            part = serde_udfs.KEY_FIELD if ts_column.is_key else serde_udfs.VALUE_FIELD
            rowtime = timestamp_millis(
                fields.getField(part).getField(ts_column.name),
                ts_column.type,
                step.timestamp_column.format,
            )
        df = df.select(
            *key_cols,
            *value_cols,
            *header_columns(schema, F.col("headers")),
            rowtime.cast("long").alias(ROWTIME),
            F.col("partition").cast("int").alias(ROWPARTITION),
            F.col("offset").cast("long").alias(ROWOFFSET),
            F.col("seq").alias(SEQ),
            fields.getField(serde_udfs.TOMBSTONE_FIELD).alias(TOMBSTONE),
            fields.getField(serde_udfs.NULL_KEY_FIELD).alias(NULL_KEY),
            *[col(b) for b in ((WINDOWSTART, WINDOWEND, WINDOW_START, WINDOW_END) if bounds else ())],
        )
        if step.timestamp_column is not None:
            if self.settings.timestamp_throw_on_invalid:
                in_key = any(c.name == step.timestamp_column.column for c in schema.key)
                stops = _stops_without_timestamp(step.timestamp_column, self.label, in_key=in_key)
                df = df.withColumn(ROWTIME, stops)
            # ksqlDB drops records whose timestamp column is null, unparseable or negative
            # (Kafka Streams skips records with an invalid timestamp).
            df = df.where(col(ROWTIME).isNotNull() & (col(ROWTIME) >= 0))
        value_names = [c.name for c in schema.value] + [c.name for c in schema.headers]
        return Built(df, self.schema_of(df, [c.name for c in schema.key], value_names))

    @builds(s.StreamFilterV1)
    def stream_filter_v1(self, step: s.StreamFilterV1, source: Built) -> Built:
        # A null row (tombstone) never passes a filter in ksqlDB.
        condition = Compiler()(step.filter_expression)
        df = source.df.where(F.coalesce(condition, F.lit(False)) & ~col(TOMBSTONE))
        return Built(df, source.schema)

    @builds(s.StreamSelectV1)
    def stream_select_v1(self, step: s.StreamSelectV1, source: Built) -> Built:
        return self._select(step, source)

    def _select(self, step: s.SelectStep, source: Built) -> Built:
        compile_ = Compiler()
        source_keys = {c.name for c in source.schema.key}
        columns = {}
        for sel in step.select_expressions:
            expr = sel.expression
            if isinstance(expr, ColumnRef) and expr.name in source_keys and is_stored(source.df, expr.name):
                # a key column named like a pseudo column passes through as the key (see names.stored)
                columns[sel.alias] = col(stored(expr.name)).alias(stored(sel.alias))
            else:
                columns[sel.alias] = compile_(expr).alias(sel.alias)
        keys = list(step.key_column_names)
        values = [sel.alias for sel in step.select_expressions if sel.alias not in keys]
        selected = [columns[k] for k in keys] + [columns[v] for v in values]
        df = source.df.select(*selected, *self.system_columns(source.df))
        return Built(df, self.schema_of(df, keys, values))

    @builds(s.StreamSelectKeyV1)
    def stream_select_key_v1(self, step: s.StreamSelectKeyV1, source: Built) -> Built:
        return Built(*select_key(step, source.df, source.schema, self.schema_of))

    @builds(s.StreamSelectKeyV2)
    def stream_select_key_v2(self, step: s.StreamSelectKeyV2, source: Built) -> Built:
        built = Built(*select_key(step, source.df, source.schema, self.schema_of))
        self.repartitions.append(repartition(self.query_id, step, built.df, built.schema))
        return built

    @builds(s.StreamFlatMapV1)
    def stream_flat_map_v1(self, step: s.StreamFlatMapV1, source: Built) -> Built:
        # ksqlDB's KudtfFlatMapper: the table functions' lists zip to the longest, shorter ones
        # padded with nulls; no list at all (null or empty everywhere) emits no row. Spark's
        # explode keeps each row's elements in order, and the sink keeps Spark's order for the
        # outputs of one input record.
        compile_ = Compiler()
        names = [tf.alias for tf in step.table_functions]
        lists = []
        for tf in step.table_functions:
            call = tf.expression
            assert isinstance(call, Call)
            rows = flat_map.IMPLEMENTATIONS[call.name](call, [compile_(a) for a in call.args])
            lists.append(F.coalesce(rows, F.array().cast(st.ArrayType(to_spark(call.sql_type)))))
        longest = F.greatest(*[F.size(x) for x in lists]) if len(lists) > 1 else F.size(lists[0])
        positions = F.when(longest <= 0, F.array().cast("array<int>")).otherwise(F.sequence(F.lit(0), longest - 1))
        zipped = F.transform(
            positions, lambda i: F.struct(*[F.get(x, i).alias(n) for x, n in zip(lists, names, strict=True)])
        )
        carried = [data_col(source.df, c.name, named=False) for c in source.schema.columns if c.name not in names]
        df = source.df.select(*carried, *self.system_columns(source.df), F.inline(zipped))
        keys = [c.name for c in source.schema.key]
        values = [c.name for c in source.schema.value if c.name not in names] + names
        return Built(df, self.schema_of(df, keys, values))

    @builds(s.StreamSinkV1)
    def stream_sink_v1(self, step: s.StreamSinkV1, source: Built) -> Built:
        # V1 writes each record to the partition of the input record that caused it.
        return self._sink(step, source, None)

    @builds(s.StreamSinkV2)
    def stream_sink_v2(self, step: s.StreamSinkV2, source: Built) -> Built:
        return self._sink(step, source, step.partitions)

    def _sink(self, step: s.SinkStep, source: Built, partitions: int | None) -> Built:
        """Encode key and value, routed over ``partitions`` by key (None: to the input's partition)."""
        self.sink = build_sink(
            source.df, source.schema, step, partitions, registry=self.registry, encode_after=self.encode_after
        )
        return Built(source.df, source.schema)

    # ------------------------------------------------------------------ tables

    @builds(s.TableSourceV1)
    def table_source_v1(self, step: s.TableSourceV1) -> Built:
        built = self._source(step)
        # a table row needs its primary key; a record without one cannot upsert anything. A key
        # of several columns is a key even with null parts: ksqlDB's source keeps its row.
        has_key = F.lit(True)
        if len(step.source_schema.key) == 1:
            has_key = col(step.source_schema.key[0].name).isNotNull()
        return Built(built.df.where(~col(NULL_KEY) & has_key), built.schema)

    @builds(s.TableFilterV1)
    def table_filter_v1(self, step: s.TableFilterV1, source: Built) -> Built:
        # A row that stops passing deletes its key downstream, as ksqlDB's table filter does.
        passes = F.coalesce(Compiler()(step.filter_expression), F.lit(False))
        df = source.df.withColumn(TOMBSTONE, col(TOMBSTONE) | ~passes)
        return Built(df, source.schema)

    @builds(s.TableFilterV2)
    def table_filter_v2(self, step: s.TableFilterV2, source: Built) -> Built:
        # ksqlDB's HAVING: a group that stops passing is deleted; one that did not pass before
        # either emits nothing. The aggregate below sends each group's previous result along.
        if HAD_PREVIOUS not in source.df.columns:
            msg = f"{step.type_tag} at {step.context} needs an aggregate or a table join as its source"
            raise RuntimeBuildError(msg)
        passes = F.coalesce(Compiler()(step.filter_expression), F.lit(False))
        source_step = step.source
        session = isinstance(source_step, s.StreamWindowedAggregateV1) and source_step.window.type == "SESSION"
        if session or isinstance(source_step, js.JoinStep):
            passes = ~col(TOMBSTONE) & passes  # a deletion (a replaced session, a join's) has no new row to test
        return Built(filter_against_previous(source.df, step.filter_expression, passes), source.schema)

    @builds(s.TableSelectV1)
    def table_select_v1(self, step: s.TableSelectV1, source: Built) -> Built:
        return self._select(step, source)

    @builds(s.TableSinkV1)
    def table_sink_v1(self, step: s.TableSinkV1, source: Built) -> Built:
        return self._sink(step, source, step.partitions)

    # ------------------------------------------------------------------ aggregation

    def _grouped(self, df: DataFrame, groups: tuple[s.SelectExpression, ...], keep: list[str]) -> DataFrame:
        """``df`` with the grouping columns first, then ``keep`` (minus names a group took)."""
        compile_ = Compiler()
        names = [g.alias for g in groups]
        kept = [n for n in keep if n not in names]
        return df.select(*[compile_(g.expression).alias(g.alias) for g in groups], *[col(n) for n in kept])

    @builds(s.StreamGroupByV1)
    def stream_group_by_v1(self, step: s.StreamGroupByV1, source: Built) -> Built:
        # ksqlDB ignores null rows, and rows whose grouping values include a null.
        keep = [c.name for c in source.schema.value] + [c.name for c in source.schema.key]
        df = self._grouped(source.df.where(~col(TOMBSTONE)), step.group_by_expressions, keep + list(SYSTEM_COLUMNS))
        for group in step.group_by_expressions:
            df = df.where(col(group.alias).isNotNull())
        keys = [g.alias for g in step.group_by_expressions]
        values = [n for n in dict.fromkeys(keep) if n not in keys]
        return Built(df, self.schema_of(df, keys, values))
