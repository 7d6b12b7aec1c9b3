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
from pathlib import Path
from typing import Any

from pyspark.sql import Row, SparkSession

from qtt.runtime.jobs import InternalRecord, InternalTopic
from qtt.runtime.spark_types import from_spark


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


def read(session: SparkSession, checkpoint: str, query_id: str) -> list[InternalTopic]:
    """Every state variable of every stateful operator in ``checkpoint``, by operator id."""
    if not (Path(checkpoint) / "state").is_dir():  # no stateful operator ever committed a batch
        return []
    operators = session.read.format("state-metadata").load(checkpoint).collect()
    topics: list[InternalTopic] = []
    for operator in sorted(operators, key=lambda row: row["operatorId"]):
        properties = json.loads(operator["operatorProperties"] or "{}")
        for variable in properties.get("stateVariables", []):
            name = variable["stateName"]
            feed = (
                session.read.format("statestore")
                .option("readChangeFeed", "true")
                .option("changeStartBatchId", 0)
                .option("operatorId", operator["operatorId"])
                .option("stateVarName", name)
                .load(checkpoint)
            )
            key_type = feed.schema["key"].dataType
            value_type = feed.schema["value"].dataType
            records = [
                InternalRecord(
                    key=jsonable(row["key"]),
                    value=jsonable(row["value"]),
                    change=row["change_type"],
                    batch=row["batch_id"],
                    partition=row["partition_id"],
                )
                for row in feed.collect()
            ]
            records.sort(key=InternalRecord.sort_key)
            topics.append(
                InternalTopic(
                    name=f"{query_id}-{name}-changelog",
                    key_schema=str(from_spark(key_type)),
                    value_schema=str(from_spark(value_type)),
                    records=records,
                )
            )
    return topics
