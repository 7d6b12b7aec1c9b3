"""A replay's processing log: the errors each step observed, read from its queries' progress."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qtt.runtime.build.builder import PlanBuilder
from qtt.runtime.jobs import LogEntry


def processing_log(queries: Sequence[Sequence[Any]], builder: PlanBuilder, query_id: str) -> list[LogEntry]:
    """The job's processing log from its queries' progress (``queries``: each query's updates).

    A step that feeds two stages of a staged replay runs in both queries; its entries are
    taken from the first query that observed it.
    """
    entries: list[LogEntry] = []
    for observation in builder.observations:
        for progress in queries:
            rows = [
                row
                for update in progress
                if (row := (getattr(update, "observedMetrics", None) or {}).get(observation.name)) is not None
            ]
            if not rows:
                continue
            for row in rows:
                for error in row["errors"] or []:
                    entries.append(
                        LogEntry(
                            seq=error["seq"], query_id=query_id, context=observation.context, message=error["message"]
                        )
                    )
            break
    entries.sort(key=lambda entry: entry.seq)
    return entries
