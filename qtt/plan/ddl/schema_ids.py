"""A C*AS statement's ``KEY_SCHEMA_ID`` / ``VALUE_SCHEMA_ID``: the sink writes with a schema already
registered, which must hold the query's columns (``DefaultSchemaInjector.forCreateAsStatement``).

ksqlDB plans such a statement once to learn its columns: an error of that planning reads
``Could not determine output schema for query due to error: ...``. It then reads the registered
schema's columns, under their own names, and refuses a sink whose columns are not those, in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from qtt.errors import QttError, SqlError, StatementError
from qtt.plan.ddl.schema_inference import TopicSchemas, inferred_key, inferred_value
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import Column, LogicalSchema
from qtt.serde.formats import UNWRAP_SINGLE_VALUE
from qtt.sql import ast

PLANNING_FAILED = "Could not determine output schema for query due to error: "
SCHEMA_ID_PROPERTIES = ("KEY_SCHEMA_ID", "VALUE_SCHEMA_ID")


class SinkSchemaError(StatementError):
    """A C*AS sink whose columns are not those of the schema its schema id names."""


def explain_failure(statement: ast.Statement, error: QttError) -> None:
    """Prefix an error of a C*AS with a schema id as ksqlDB reports a failure to plan it."""
    if not isinstance(statement, ast.CreateAsSelect) or not isinstance(error, SqlError):
        return
    if isinstance(error, SinkSchemaError) or error.message.startswith(PLANNING_FAILED):
        return
    if any(statement.properties.get(name) is not None for name in SCHEMA_ID_PROPERTIES):
        error.message = PLANNING_FAILED + error.message


def check_sink_schemas(
    properties: Mapping[str, object], formats: s.Formats, schema: LogicalSchema, schemas: TopicSchemas
) -> None:
    """Refuse a C*AS sink that does not hold the columns of the schema its schema id names.

    Raises:
        SinkSchemaError: no schema has the id, or the sink's columns are not the schema's.
    """
    topic = properties.get("KAFKA_TOPIC")
    shown_topic = None if topic is None else str(topic)
    sides = (("KEY", formats.key_format, schema.key), ("VALUE", formats.value_format, schema.value))
    for which, info, columns in sides:
        if properties.get(f"{which}_SCHEMA_ID") is None:
            continue
        try:
            if which == "KEY":
                registered = inferred_key(shown_topic, info, schemas, definitions=False)
            else:
                unwrapped = UNWRAP_SINGLE_VALUE in formats.value_features
                registered = inferred_value(shown_topic, info, schemas, unwrapped=unwrapped, definitions=False)
        except StatementError as error:
            raise SinkSchemaError(error.message) from None
        _check_columns(columns, registered, is_key=which == "KEY")


def _check_columns(columns: Sequence[Column], registered: Sequence[Column], *, is_key: bool) -> None:
    """``DefaultSchemaInjector.checkColumnsCompatibility``: each column is the registered one at its place."""
    if not columns:
        return
    differ = [
        c
        for i, c in enumerate(columns)
        if i >= len(registered) or (registered[i].name, registered[i].type) != (c.name, c.type)
    ]
    if differ:
        msg = (
            f"The following {'key' if is_key else 'value'} columns are changed, missing or reordered: "
            f"[{', '.join(map(str, differ))}]. Schema from schema registry is [{', '.join(map(str, registered))}]"
        )
        raise SinkSchemaError(msg)
