"""A replay stopped at its time limit: the ``timed out`` verdict, with what had arrived.

The runtime stops a streaming query that does not end within the time limit
(:mod:`qtt.runtime.spark.time_limit`) and hands back what its sink had written by then. The
judge of every kind of item (a case variant, a scenario, a historical or restored folder)
compares those partial outputs as usual, so the labelled diff shows what is missing, then
calls :func:`conclude`: the status becomes ``timed out``, and the reason counts, per topic, the
records that had arrived against the ones expected, and shows them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable

from qtt.harness.replay.driver import ReplayResult
from qtt.harness.results import CaseResult
from qtt.harness.status import Status

#: records shown per topic
SHOWN = 10
HINT = (
    "a replay that hangs is the runtime's bug; on a slow machine raise the limit: "
    "qtt run --time-limit SECONDS, pytest --qtt-time-limit SECONDS"
)


def conclude(result: CaseResult, outcome: ReplayResult, expected_topics: Iterable[str]) -> bool:
    """If ``outcome`` stopped at its time limit, make ``result`` ``timed out`` and say what had
    arrived on each topic (``expected_topics``: the topic of every expected record); True then."""
    if outcome.timed_out is None:
        return False
    query, seconds = outcome.timed_out
    expected = Counter(expected_topics)
    arrived = {topic: len(records) for topic, records in outcome.outputs.items()}
    topics = sorted(set(expected) | set(arrived))
    by_then = "; ".join(f"{topic}: {arrived.get(topic, 0)} of {expected[topic]} expected" for topic in topics)
    result.status = Status.TIMED_OUT
    result.reason = "\n".join(
        [
            f"query {query} did not end within the time limit of {seconds:g} s and was stopped; "
            f"what had arrived by then: {by_then or 'no topic'}",
            *_arrived(outcome),
        ]
    )
    result.hint = HINT
    return True


def _arrived(outcome: ReplayResult) -> list[str]:
    """The records that had arrived, topic by topic (the last :data:`SHOWN` of each)."""
    lines = []
    for topic, records in sorted(outcome.outputs.items()):
        lines.append(
            f"arrived on {topic}:" + (f" (the last {SHOWN} of {len(records)})" if len(records) > SHOWN else "")
        )
        for record in records[-SHOWN:]:
            lines.append("  " + json.dumps({"key": record.key, "value": record.value}, default=str))
    return lines
