"""Run a replay's unioned sink as a streaming query and bring its rows back to the driver.

On a classic session ``foreachBatch`` runs in this process, so each micro-batch is collected
as it ends. On Spark Connect ``foreachBatch`` runs on the server, where appending to a list
of this process is impossible: each micro-batch is written (with its batch id and each row's
position) to a parquet folder next to the checkpoint, and read back once the query ends.

The jobs' sinks union into that one query: each job's typed sink columns move into columns of
a pool shared by all (:func:`pooled_columns`, :func:`sink_branch`), and each row is encoded back
here (:func:`sink_row`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Protocol

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from qtt.errors import TimeLimitReached
from qtt.runtime.build.names import col
from qtt.runtime.build.repartitions import KEY_FIELD, TOPIC_FIELD, VALUE_FIELD
from qtt.runtime.jobs import Job, SinkRecord
from qtt.runtime.operators.wide import ColumnPool
from qtt.runtime.spark import lines
from qtt.runtime.spark.session import is_connect

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

    from qtt.runtime.build.builder import PlanBuilder

#: the columns of a repartition topic's rows (:mod:`qtt.runtime.build.repartitions`), null in a sink's
#: The sink columns the executor reads back (``order`` only a stateful step writes).
ROW_FIELDS = ("job", "seq", "order", "timestamp", "partition", "key", "value", TOPIC_FIELD, KEY_FIELD, VALUE_FIELD)
_BATCH = "_qtt_batch"
_POSITION = "_qtt_position"


def run_and_collect(
    union: DataFrame, checkpoint: str, rows: Callable[[DataFrame], Sequence[Any]] | None = None
) -> tuple[list[tuple[int, Any]], FinishedQuery]:
    """Run ``union`` to the end (``availableNow``) and return its ``(batch_id, row)`` pairs, in
    the order Spark produced them, with the finished query.

    ``rows`` turns each micro-batch into its rows (``DataFrame.collect`` by default).

    Raises:
        PySparkException: the query could not start or failed (the caller makes it a verdict).
        TimeLimitReached: the query did not end within the time limit; its ``partial`` holds
            the ``(batch_id, row)`` pairs collected by then.
    """
    if is_connect(union):
        assert rows is None, "only a classic session collects micro-batches its own way"
        return _run_on_connect(union, checkpoint)
    collected: list[tuple[int, Any]] = []
    to_rows = rows or DataFrame.collect

    def on_batch(df: DataFrame, batch_id: int) -> None:
        rows = to_rows(df)  # all or nothing: a batch stopped at the time limit adds no rows
        collected.extend((batch_id, row) for row in rows)

    try:
        return collected, _run_to_end(union, on_batch, checkpoint)
    except TimeLimitReached as reached:
        reached.partial = list(collected)
        raise


def _run_on_connect(union: DataFrame, checkpoint: str) -> tuple[list[tuple[int, Row]], FinishedQuery]:
    rows_folder = f"{checkpoint}-rows"
    kept = [name for name in ROW_FIELDS if name in union.columns]

    def on_batch(df: DataFrame, batch_id: int) -> None:  # runs on the Spark Connect server
        (
            df.select(*kept)
            # the collect order of the classic path: by partition, then position in it
            .withColumn(_POSITION, F.monotonically_increasing_id())
            .withColumn(_BATCH, F.lit(batch_id))
            .write.mode("append")
            .parquet(rows_folder)
        )

    def written() -> list[tuple[int, Row]]:
        rows = union.sparkSession.read.parquet(rows_folder).orderBy(_BATCH, _POSITION).collect()
        return [(int(row[_BATCH]), Row(**{name: row[name] for name in kept})) for row in rows]

    try:
        finished = _ConnectQuery(_run_to_end(union, on_batch, checkpoint))
    except TimeLimitReached as reached:
        reached.partial = written() if Path(rows_folder).is_dir() else []
        raise
    if finished.exception() is not None or not finished.recentProgress:
        return [], finished
    return written(), finished


class FinishedQuery(Protocol):
    """What the executor reads of a finished streaming query."""

    @property
    def recentProgress(self) -> Sequence[Any]: ...

    def exception(self) -> Any: ...


class _ConnectQuery:
    """A finished Spark Connect query whose progress carries observed metrics as rows.

    PySpark 4.3's Connect client reads each observed metric from the progress JSON as
    ``Row(values=[...], schema={...})`` instead of the row itself; the processing log needs
    the row (``row["errors"]``), as the classic client gives it.
    """

    def __init__(self, stream: StreamingQuery) -> None:
        self._stream = stream
        self.recentProgress = [
            SimpleNamespace(
                observedMetrics={
                    name: _metric_row(raw) for name, raw in (getattr(update, "observedMetrics", None) or {}).items()
                }
            )
            for update in stream.recentProgress
        ]

    def exception(self) -> Any:
        return self._stream.exception()


def _metric_row(raw: Any) -> Any:
    if not (isinstance(raw, Row) and "schema" in raw.__fields__ and "values" in raw.__fields__):
        return raw  # already a row: a client that reads metrics properly
    return _typed(raw["values"], raw["schema"])


def _typed(value: Any, spark_type: Any) -> Any:
    """``value`` (as the Connect client parsed it) as the classic client gives it: each struct a
    Row, by the JSON form of its Spark type."""
    if value is None or not isinstance(spark_type, dict):
        return value
    kind = spark_type.get("type")
    if kind == "struct":
        fields = spark_type["fields"]
        # a nested struct comes as {"values": [...], "schema": {...}} as well
        values = value["values"] if isinstance(value, dict) and "values" in value else value
        return Row(**{f["name"]: _typed(v, f["type"]) for f, v in zip(fields, values, strict=True)})
    if kind == "array":
        return [_typed(element, spark_type["elementType"]) for element in value]
    if kind == "map":
        return {k: _typed(v, spark_type["valueType"]) for k, v in value.items()}
    return value


def _run_to_end(union: DataFrame, on_batch: Callable[[DataFrame, int], None], checkpoint: str) -> Any:
    """Start ``union`` with ``on_batch`` as its sink, every micro-batch asked for, and wait for its end."""
    return lines.run_to_end(union.writeStream.foreachBatch(on_batch).option("checkpointLocation", checkpoint))


def sink_records(collected: list[tuple[int, Mapping[str, Any]]]) -> list[SinkRecord]:
    """A job's sink rows (with their micro-batch) as records, in the order the sink wrote them."""
    out: list[SinkRecord] = []

    # Order by batch, then by the input record that caused each output; Python's sort is
    # stable, so several outputs of one input keep the order Spark produced them in.
    # A stateful step numbers the outputs of one input itself ("order"), since Spark visits
    # the groups of one micro-batch in no particular order.
    def explicit(row: Mapping[str, Any]) -> int:
        return row.get("order") or 0

    ordered = sorted(collected, key=lambda item: (item[0], item[1]["seq"], explicit(item[1])))
    last_seq, order = None, 0
    for batch, row in ordered:
        order = order + 1 if row["seq"] == last_seq else 0
        last_seq = row["seq"]
        out.append(
            SinkRecord(
                seq=row["seq"],
                order=order,
                batch=batch,
                timestamp=row["timestamp"] or 0,
                partition=row["partition"] or 0,
                key=bytes(row["key"]) if row["key"] is not None else None,
                value=bytes(row["value"]) if row["value"] is not None else None,
            )
        )
    return out


def pooled_columns(builder: PlanBuilder, pool: ColumnPool) -> dict[str, str]:
    """The columns of ``pool`` that hold the typed key and value columns of ``builder``'s sink
    (none when its query encodes them), so that every job's sink rows union."""
    encoding = builder.sink.encoding if builder.sink is not None else None
    if encoding is None:
        return {}
    own = (*encoding.key_columns, *encoding.value_columns)
    return dict(zip(own, pool.take(encoding.types), strict=True))


def sink_branch(job: Job, builder: PlanBuilder, pooled: Mapping[str, str]) -> DataFrame:
    """``job``'s sink rows, tagged with its id, its typed columns in their ``pooled`` columns."""
    assert builder.sink is not None
    rows = builder.sink.df.select(F.lit(job.job_id).alias("job"), "*")
    if not pooled:
        return rows
    return rows.select(*[col(name).alias(pooled.get(name, name)) for name in rows.columns])


def sink_row(row: Any, builder: PlanBuilder, pooled: Mapping[str, str]) -> Mapping[str, Any]:
    """A sink row as :func:`sink_records` reads it: encoded here
    if its query left it typed."""
    fields = row.asDict()
    encoding = builder.sink.encoding if builder.sink is not None else None
    if encoding is None:
        return fields
    fields.update({own: fields[column] for own, column in pooled.items()})
    fields["key"], fields["value"], fields["partition"] = encoding.record(fields)
    return fields
