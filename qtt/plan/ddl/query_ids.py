"""The ids of persistent queries, as ksqlDB's ``QueryIdUtil.buildId`` gives and checks them."""

from __future__ import annotations

from collections.abc import Mapping

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.plan.ir import steps as s


def create_as_query_id(sink: str, *, table: bool, number: int) -> str:
    """A new C*AS query's id: its kind, its sink's name in upper case, and the query number."""
    return f"{'CTAS' if table else 'CSAS'}_{sink.upper()}_{number}"


def refuse_many_writers(sink: str, sink_queries: Mapping[str, s.QueryPlan], running: Mapping[str, s.QueryPlan]) -> None:
    """A C*AS into a sink more than one query writes (its own and an INSERT INTO's) is refused,
    with or without ``OR REPLACE`` or ``IF NOT EXISTS``: the query to upgrade is ambiguous."""
    created = sink_queries.get(sink)
    writers = [created.query_id] if created is not None and created.query_id in running else []
    writers += [q.query_id for q in running.values() if q.sink == sink and q.query_id not in writers]
    if len(writers) > 1:
        msg = (
            f"REPLACE for sink {t.quote(sink)} is not supported because there are multiple queries "
            f"writing into it: [{', '.join(writers)}]"
        )
        raise StatementError(msg)
