"""The schema ``ALTER STREAM|TABLE ... ADD COLUMN`` gives a source, checked as ksqlDB's
``DdlCommandExec.executeAlterSource`` checks it.

ksqlDB's engine raises every refusal of an executed DDL command as a ``KsqlStatementException``
(``EngineExecutor.executeDdl``), so these are :class:`~qtt.errors.StatementError`.
"""

from __future__ import annotations

from collections.abc import Sequence

from qtt import sqltypes as t
from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.ir.schema import VALUE, Column, LogicalSchema


def altered_schema(schema: LogicalSchema, added: Sequence[tuple[str, t.SqlType]]) -> LogicalSchema:
    """``schema`` with the ``added`` value columns (name, type) at the end of its columns.

    Raises:
        StatementError: a new column is named as a value column (``LogicalSchema.Builder``, new
            columns included), or as a key column (the altered source's constructor,
            ``StructuredDataSource``, refuses a value column named as a key column; a header
            column's name is allowed).
        UnsupportedFeatureError: a new column's type is one Spark cannot hold.
    """
    columns = list(schema.columns)
    for name, type_ in added:
        if any(c.name == name and c.namespace == VALUE for c in columns):
            msg = f"Cannot add column `{name}` to schema. A column with the same name already exists."
            raise StatementError(msg)
        too_wide = t.wider_than_spark(type_)
        if too_wide is not None:
            raise UnsupportedFeatureError(too_wide)
        columns.append(Column(name, type_, VALUE))
    keys = {c.name for c in schema.key}
    if any(name in keys for name, _ in added):
        raise StatementError("Schema contains duplicate column names")
    return LogicalSchema(tuple(columns))
