"""The checks ksqlDB's engine makes before it drops a stream or table."""

from __future__ import annotations

from collections.abc import Mapping

from qtt.errors import StatementError
from qtt.plan.ir import steps as s


def refuse_drop_under_inserts(
    name: str, sink_queries: Mapping[str, s.QueryPlan], running: Mapping[str, s.QueryPlan]
) -> None:
    """ksqlDB's engine refuses to drop a source an INSERT query reads or writes while it runs
    (``EngineContext.throwIfInsertQueriesExist``), before it looks at the sources reading it."""
    created = {q.query_id for q in sink_queries.values()}
    inserts = [q for q in running.values() if q.query_id not in created]
    reading = sorted(q.query_id for q in inserts if name in q.sources)
    writing = sorted(q.query_id for q in inserts if q.sink == name)
    if reading or writing:
        msg = (
            f"Cannot drop {name}.\nThe following queries read from this source: [{', '.join(reading)}]."
            f"\nThe following queries write into this source: [{', '.join(writing)}]."
            f"\nYou need to terminate them before dropping {name}."
        )
        raise StatementError(msg)
