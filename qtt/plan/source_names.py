"""The sources a query reads, resolved as ksqlDB's sanitizer resolves them while it prepares a
statement: before any injector or planner looks at the statement."""

from __future__ import annotations

from collections.abc import Mapping

from qtt.errors import SqlError
from qtt.plan.analysis import messages
from qtt.plan.ddl.metastore import DataSource, unknown_source_hint
from qtt.sql import ast, source_refs


def check_sources_known(relation: ast.Relation, sources: Mapping[str, DataSource]) -> None:
    """Refuse the first ``FROM`` or ``JOIN`` source, left to right, that the metastore lacks
    (``DataSourceExtractor``), with the message the planner gives it.

    Raises:
        SqlError: a source does not exist (``Exception while preparing statement: X does not exist.``).
    """
    for table in source_refs.tables(relation):
        if table.name not in sources:
            raise SqlError(messages.unknown_source(table.name), hint=unknown_source_hint(table.name, sources))
