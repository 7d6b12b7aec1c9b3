"""Internal topics: the change feed of every state store a query wrote, read back from Spark.

After a replay, each stateful operator's state variable is read with Spark's state data
source (``statestore`` with ``readChangeFeed``) from the query's real checkpoint. It becomes
the internal topic ``<queryId>-<state variable>-changelog``; the state variable is named after
the step's context (``CTAS_OUT_0-Aggregate-Aggregate-changelog``), so names are the same on
every run and machine.

Sort rule: Spark returns a change feed in no promised order. qtt orders each topic's records
by micro-batch, then state partition, then the key's canonical JSON text, then change type
(``delete`` before ``update``). With one input record per micro-batch, each batch changes a
key at most once, so this order is total.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import Row, SparkSession
from pyspark.sql.types import DataType, StructField, StructType

from qtt.runtime.jobs import InternalRecord, InternalTopic
from qtt.runtime.spark.frames import in_threads
from qtt.runtime.spark.spark_types import from_spark


def jsonable(value: Any) -> Any:
    """A state value as plain JSON: structs as objects, decimals as exact numbers' text."""
    if isinstance(value, Row):
        return {k: jsonable(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, dict):
        return {str(jsonable(k)): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime)):
        return value.isoformat()
    return value


class StateLayoutError(Exception):
    """The checkpoint's stateful operators are not the ones the group's queries built."""


@dataclass(frozen=True)
class Owner:
    """One query of a streaming query, as the checkpoint's state sees it.

    ``operators`` holds each of its stateful operators' state variable names, as built;
    ``wanted`` says whether its change feeds are to be read back, from micro-batch
    ``first_batch`` on (a query resumed from a stored checkpoint reads what it wrote itself).
    """

    query_id: str
    operators: tuple[tuple[str, ...], ...]
    wanted: bool = True
    #: read its change feed from this micro-batch on (a resumed query: the first after its restore point)
    first_batch: int = 0
    #: each key's last change only (:func:`last_changes`), not every change
    final: bool = False


def read(session: SparkSession, checkpoint: str, owners: Sequence[Owner]) -> list[list[InternalTopic]]:
    """Every state variable of every stateful operator in ``checkpoint``, per owner.

    ``owners`` are the queries that shared the streaming query, in the order their sinks were
    unioned. Spark numbers stateful operators depth-first over the plan, so each query's
    operators hold consecutive ids, in that order (a query's own operators numbered from the
    sink up, the reverse of the order they were built in); the state variables found must be
    the ones each query built, or :class:`StateLayoutError` is raised.
    """
    topics: list[list[InternalTopic]] = [[] for _ in owners]
    if not (Path(checkpoint) / "state").is_dir():  # no stateful operator ever committed a batch
        return topics
    operators = sorted(session.read.format("state-metadata").load(checkpoint).collect(), key=lambda r: r["operatorId"])
    variables = [
        [v["stateName"] for v in json.loads(op["operatorProperties"] or "{}").get("stateVariables", [])]
        for op in operators
    ]
    expected = sum(len(owner.operators) for owner in owners)
    built = {tuple(sorted(names)) for owner in owners for names in owner.operators}
    # A repartition branch after a stateful operator computes that operator again (its rows
    # feed the topic, not the sinks): Spark numbers those copies after every sink's operators.
    copies = [names for names in variables[expected:] if tuple(sorted(names)) in built]
    if expected + len(copies) != len(operators):
        msg = f"the checkpoint holds {len(operators)} stateful operator(s), the queries built {expected}"
        raise StateLayoutError(msg)
    first = 0
    reads: list[tuple[int, Owner, int, str]] = []  # (owner's index, owner, operator id, variable)
    for index, owner in enumerate(owners):
        mine = range(first, first + len(owner.operators))
        first += len(owner.operators)
        found = sorted(sorted(variables[i]) for i in mine)
        if found != sorted(sorted(names) for names in owner.operators):
            msg = f"the state variables of {owner.query_id}'s operators are {found}, it built {list(owner.operators)}"
            raise StateLayoutError(msg)
        if owner.wanted:
            reads += [(index, owner, operators[i]["operatorId"], name) for i in mine for name in variables[i]]
    # one Spark job per state variable, two at once: the driver waits on the JVM for much of each
    # (one job over the union of them all measured slower: its tasks are the cost)
    feeds = in_threads(
        lambda operator_id, name, first_batch: change_feed(session, checkpoint, operator_id, name, first_batch),
        [(operator_id, name, owner.first_batch) for _, owner, operator_id, name in reads],
    )
    for (index, owner, _, name), feed in zip(reads, feeds, strict=True):
        topics[index].append(
            topic_of(last_changes(feed) if owner.final else feed, f"{owner.query_id}-{name}-changelog")
        )
    return topics


@dataclass(frozen=True)
class ChangeFeed:
    """One state variable's change feed as Spark returned it."""

    rows: list[Row]
    key_type: DataType
    value_type: DataType


def change_feed(
    session: SparkSession, checkpoint: str, operator_id: int, variable: str, first_batch: int = 0
) -> ChangeFeed:
    """State variable ``variable`` of operator ``operator_id``: every change from micro-batch
    ``first_batch`` on, in one Spark job.

    The read starts a batch earlier: a query resumed at ``first_batch`` that had nothing to
    read after it ran no batch there, and Spark refuses a start past the last batch."""
    loaded = (
        session.read.format("statestore")
        .option("readChangeFeed", "true")
        .option("changeStartBatchId", max(first_batch - 1, 0))
        .option("operatorId", operator_id)
        .option("stateVarName", variable)
        .load(checkpoint)
    )
    rows = [row for row in loaded.collect() if row["batch_id"] >= first_batch]
    return ChangeFeed(rows, loaded.schema["key"].dataType, loaded.schema["value"].dataType)


def last_changes(feed: ChangeFeed) -> ChangeFeed:
    """Each key's last change (``update`` with its value, or ``delete``) in ``feed``, as batch
    -1: what the feed's micro-batches left in the store.

    The change feed folded version after version, each version's changes in the order Spark
    reads them from the version's changelog file, the order they were written in: a query that
    ran many inputs in one micro-batch may change a key several times in one version."""
    last: dict[tuple[int, str], Row] = {}
    for row in sorted(feed.rows, key=lambda row: row["batch_id"]):  # stable: a version keeps its order
        key = (row["partition_id"], json.dumps(jsonable(row["key"]), sort_keys=True))
        last[key] = Row(
            batch_id=-1,
            change_type=row["change_type"],
            key=row["key"],
            value=row["value"],
            partition_id=row["partition_id"],
        )
    return ChangeFeed(list(last.values()), feed.key_type, feed.value_type)


def topic_of(
    feed: ChangeFeed,
    topic: str,
    key_fields: Sequence[tuple[str, str]] | None = None,
    keep: Callable[[Row], bool] | None = None,
    batches: Sequence[int] | None = None,
    value_fields: Sequence[tuple[str, str]] | None = None,
) -> InternalTopic:
    """The change feed's records as internal topic ``topic``, in the documented order.

    ``key_fields`` keeps only these fields of the state's key, renamed (``(field, name)``
    pairs), and ``keep`` only the changes whose key it accepts: a staged replay's wide operator
    keys every slot's state by the slot and all slots' key columns. ``batches`` gives each
    change of the feed, in its order, its replay's own micro-batch, where a staged replay ran
    them in one (:mod:`qtt.runtime.execute.staged`). ``value_fields`` does for the value what
    ``key_fields`` does for the key: a wide operator pools every slot's state variables' fields.
    """
    if batches is not None and len(batches) != len(feed.rows):
        raise ValueError(f"{len(batches)} micro-batches for the {len(feed.rows)} changes of {topic}")

    def project(part: Row | None, fields: Sequence[tuple[str, str]] | None) -> Any:
        if fields is None or part is None:
            return jsonable(part)
        return {name: jsonable(part[field]) for field, name in fields}

    records = [
        InternalRecord(
            key=project(row["key"], key_fields),
            value=project(row["value"], value_fields),
            change=row["change_type"],
            batch=row["batch_id"] if batches is None else batches[index],
            partition=row["partition_id"],
        )
        for index, row in enumerate(feed.rows)
        if keep is None or keep(row["key"])
    ]
    records.sort(key=InternalRecord.sort_key)
    return InternalTopic(
        name=topic,
        key_schema=str(from_spark(_projected(feed.key_type, key_fields))),
        value_schema=str(from_spark(_projected(feed.value_type, value_fields))),
        records=records,
    )


def _projected(type_: DataType, fields: Sequence[tuple[str, str]] | None) -> DataType:
    """``type_`` with only ``fields`` (``(field, name)`` pairs), renamed; all of it without them."""
    if fields is None:
        return type_
    assert isinstance(type_, StructType)
    return StructType([StructField(name, type_[field].dataType) for field, name in fields])
