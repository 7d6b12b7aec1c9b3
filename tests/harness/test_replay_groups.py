"""How a round's queries are grouped into streaming queries: what would keep a group from running
staged goes apart, so the rest of the round keeps its stages."""

from __future__ import annotations

from dataclasses import replace

from qtt.harness.replay.driver import ReplayItem, _groups, _State, _Todo
from qtt.plan.ir.shape import QueryShape
from qtt.plan.statements import plan_statements
from qtt.runtime.jobs import CAPTURE, ReplayRecord
from qtt.sql import parse_statements

_PLAN = plan_statements(
    parse_statements(
        "CREATE STREAM S (K INT KEY, V INT) WITH (kafka_topic='s', format='JSON');"
        "CREATE TABLE T AS SELECT K, COUNT(*) AS N FROM S GROUP BY K;"
    ),
    {},
).plan


def _todo(seqs: list[int], *, last_batch_of_seq: bool = False) -> _Todo:
    item = replace(ReplayItem(_PLAN, ()), mode=replace(CAPTURE, last_batch_of_seq=last_batch_of_seq))
    query = next(iter(_PLAN.queries()))
    records = [
        ReplayRecord(job=0, seq=seq, topic="s", partition=0, offset=i, timestamp=i, key=None, value=b"{}")
        for i, seq in enumerate(seqs)
    ]
    return _Todo(_State(item), query, QueryShape.of(query), records, list(range(1, len(seqs) + 1)))


def test_queries_whose_seq_spans_micro_batches_are_grouped_apart() -> None:
    plain = [_todo([0, 1]) for _ in range(3)]
    spanning = _todo([0, 0, 1])  # two rows one EXPLODE made of input 0, read record by record
    recorded_before = _todo([0, 0, 1], last_batch_of_seq=True)
    recorded_before_plain = _todo([0, 1], last_batch_of_seq=True)
    groups = _groups([plain[0], spanning, plain[1], recorded_before, plain[2], recorded_before_plain])
    as_ids = sorted(sorted(id(entry) for entry in group) for group in groups)
    expected = [
        sorted(id(entry) for entry in [*plain, recorded_before_plain]),
        [id(spanning)],
        [id(recorded_before)],
    ]
    assert as_ids == sorted(expected)


def test_queries_that_run_unstaged_share_a_streaming_query_sixteen_at_a_time() -> None:
    from qtt.harness.replay.driver import HOLDING_GROUP_SIZE

    spanning = [_todo([0, 0, 1]) for _ in range(HOLDING_GROUP_SIZE + 1)]
    recorded_before = [_todo([0, 0, 1], last_batch_of_seq=True) for _ in range(HOLDING_GROUP_SIZE + 1)]
    sizes = sorted(len(group) for group in _groups([*spanning, *recorded_before]))
    assert sizes == [1, HOLDING_GROUP_SIZE, HOLDING_GROUP_SIZE + 1]  # the recorded-before group runs staged
