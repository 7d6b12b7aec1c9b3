"""The ids of persistent queries, as ksqlDB's ``QueryIdUtil.buildId`` gives and checks them."""

from __future__ import annotations

from collections.abc import Mapping

from qtt import sqltypes as t
from qtt.errors import SqlError, StatementError
from qtt.plan.ddl.metastore import TABLE, DataSource
from qtt.plan.ir import steps as s


def create_as_query_id(sink: str, *, table: bool, number: int) -> str:
    """A new C*AS query's id: its kind, its sink's name in upper case, and the query number."""
    return f"{'CTAS' if table else 'CSAS'}_{sink.upper()}_{number}"


def writers(
    sink: str, sink_queries: Mapping[str, s.QueryPlan], running: Mapping[str, s.QueryPlan]
) -> list[s.QueryPlan]:
    """The running queries that write ``sink`` as ``QueryIdUtil.buildId`` finds them: its own
    C*AS query first, then the INSERT INTO queries."""
    created = sink_queries.get(sink)
    found = [created] if created is not None and created.query_id in running else []
    return found + [q for q in running.values() if q.sink == sink and q.query_id not in {f.query_id for f in found}]


def refuse_many_writers(sink: str, sink_queries: Mapping[str, s.QueryPlan], running: Mapping[str, s.QueryPlan]) -> None:
    """A C*AS into a sink more than one query writes (its own and an INSERT INTO's) is refused,
    with or without ``OR REPLACE`` or ``IF NOT EXISTS``: the query to upgrade is ambiguous."""
    found = writers(sink, sink_queries, running)
    if len(found) > 1:
        msg = (
            f"REPLACE for sink {t.quote(sink)} is not supported because there are multiple queries "
            f"writing into it: [{', '.join(q.query_id for q in found)}]"
        )
        raise StatementError(msg)


def query_to_replace(
    existing: DataSource | None, sink_queries: Mapping[str, s.QueryPlan], running: Mapping[str, s.QueryPlan]
) -> s.QueryPlan | None:
    """The running query a C*AS into ``existing`` upgrades in place, as ``QueryIdUtil.buildId``
    picks it: the one query writing the sink, its C*AS query or an INSERT INTO's (the upgrade
    keeps that query's id and checks its plan). A read-only sink (``CREATE SOURCE``) is refused
    first, even under ``IF NOT EXISTS``, as ``EngineExecutor.execute`` refuses it."""
    if existing is None:
        return None
    if existing.is_source:
        raise SqlError(f"Cannot insert into read-only {existing.kind.lower()}: {existing.name}")
    return next(iter(writers(existing.name, sink_queries, running)), None)


def has_writer(existing: DataSource | None, running: Mapping[str, s.QueryPlan]) -> bool:
    """Whether a query writes ``existing`` as ``QueryIdUtil.buildId`` finds one: a running query
    with it as its sink, or a ``CREATE SOURCE TABLE``'s own query (``CST_``), which ksqlDB
    registers under the table's name."""
    if existing is None:
        return False
    return (existing.is_source and existing.kind == TABLE) or any(q.sink == existing.name for q in running.values())
