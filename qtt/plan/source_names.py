"""The sources a statement names, resolved as ksqlDB's sanitizer resolves them while it prepares
a statement: before any injector or planner looks at the statement."""

from __future__ import annotations

from collections.abc import Mapping

from qtt import sqltypes as t
from qtt.errors import SqlError, StatementError
from qtt.plan.analysis import messages
from qtt.plan.ddl.metastore import DataSource, unknown_source_hint
from qtt.sql import ast, source_refs


def check_sources_known(relation: ast.Relation, sources: Mapping[str, DataSource]) -> None:
    """Refuse the first ``FROM`` or ``JOIN`` source, left to right, that the metastore lacks
    (``DataSourceExtractor``), with the message the planner gives it.

    Raises:
        StatementError: a source does not exist (``Exception while preparing statement: X does
            not exist.``): ksqlDB's engine wraps the sanitizer's error in a
            ``KsqlStatementException`` as it prepares the statement.
    """
    for table in source_refs.tables(relation):
        if table.name not in sources:
            raise StatementError(messages.unknown_source(table.name), hint=unknown_source_hint(table.name, sources))


def insert_target(statement: ast.InsertInto | ast.InsertValues, sources: Mapping[str, DataSource]) -> DataSource:
    """The source an ``INSERT INTO`` writes, once the sources its query reads are known (the
    sanitizer's ``DataSourceExtractor`` runs before it looks at the target).

    Raises:
        SqlError: an ``INSERT INTO ... VALUES`` names an unknown target.
        StatementError: a query's source or an ``INSERT INTO ... SELECT``'s target is unknown.
    """
    if isinstance(statement, ast.InsertInto):
        check_sources_known(statement.query.from_, sources)
    name = statement.target
    target = sources.get(name)
    if target is not None:
        return target
    if isinstance(statement, ast.InsertValues):
        alternative = next((n for n in sources if n.upper() == name.upper()), None)
        raise SqlError(messages.insert_values_unknown_target(name, alternative))
    # ksqlDB's AstSanitizer reports the target at the statement's position plus "INSERT INTO".
    prefix = ""
    if statement.pos is not None:
        prefix = f"Line: {statement.pos.line}, Col: {statement.pos.column + len('INSERT INTO ')}: "
    # ... while ksqlDB's engine prepares the statement, which prefixes its errors so
    msg = f"Exception while preparing statement: {prefix}Source {t.quote(name)} does not exist."
    raise StatementError(msg, hint=unknown_source_hint(name, sources))
