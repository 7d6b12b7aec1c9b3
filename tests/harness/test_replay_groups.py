"""How a round's queries are grouped into streaming queries: the queries of folders recorded with
the old staged placement go apart, so that a group never mixes both placements, and so do the
queries whose seq spans micro-batches, which run unstaged."""

from __future__ import annotations

from dataclasses import replace

from qtt.harness.replay.driver import SPANNING_GROUP_SIZE, ReplayItem, _groups, _State, _Todo
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


def test_queries_of_folders_recorded_with_the_old_placement_are_grouped_apart() -> None:
    today = [_todo([0, 1]), _todo([0, 0, 1])]
    recorded_before = [_todo([0, 0, 1], last_batch_of_seq=True), _todo([0, 1], last_batch_of_seq=True)]
    groups = _groups([today[0], recorded_before[0], today[1], recorded_before[1]])
    as_ids = sorted(sorted(id(entry) for entry in group) for group in groups)
    # a recorded-before query whose seq tells its micro-batch replays as today's, beside them;
    # today's query whose seq spans micro-batches runs unstaged, apart from both
    expected = [sorted(map(id, [today[0], recorded_before[1]])), [id(today[1])], [id(recorded_before[0])]]
    assert as_ids == sorted(expected)


def test_stateful_queries_whose_seq_spans_micro_batches_share_small_groups_and_leave_the_others_staged() -> None:
    spanning = [_todo([0, 0, 1]) for _ in range(SPANNING_GROUP_SIZE + 1)]
    telling = [_todo([0, 1, 2]) for _ in range(3)]
    groups = _groups([*spanning, *telling])
    as_ids = sorted(sorted(id(entry) for entry in group) for group in groups)
    assert sorted(map(len, groups)) == [1, 3, SPANNING_GROUP_SIZE]
    assert sorted(map(id, telling)) in as_ids
