"""What a replay hands the runtime and gets back: plain data, importable without Spark."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from qtt.plan.statements import plan_statements
from qtt.runtime.jobs import CAPTURE, InternalRecord, Job, ReplayRecord, decode_options, decode_row, encode_options
from qtt.sql import parse_statements

#: modules the harness, the CLI and the plugin import at module level: none may pull in pyspark
PURE_MODULES = (
    "qtt.runtime.jobs",
    "qtt.runtime.execute.topology_text",
    "qtt.plan.ir.shape",
    "qtt.harness.replay.driver",
    "qtt.harness.replay.runner",
    "qtt.harness.historical.replay",
    "qtt.harness.historical.snapshot",
    "qtt.harness.selection",
    "qtt.cli",
    "qtt.pytest_plugin",
    "qtt.bench",
)


@pytest.mark.parametrize("module", PURE_MODULES)
def test_module_imports_without_pyspark(module: str, modules_loaded_by: Callable[..., set[str]]) -> None:
    # a fresh interpreter: in this one an earlier test may have imported pyspark already
    assert "pyspark" not in modules_loaded_by(module), f"importing {module} imports pyspark"


def test_options_carry_records_and_batch_ends() -> None:
    record = ReplayRecord(
        job=1, seq=2, topic="t", partition=0, offset=3, timestamp=4, key=None, value=b"\x00v", headers=(("h", b"x"),)
    )
    rows, ends = decode_options(encode_options([record], [1]))
    assert ends == [1]
    assert decode_row(rows[0]) == (1, 2, "t", 0, 3, 4, None, b"\x00v", [("h", b"x")])


def test_internal_records_sort_by_batch_partition_key_then_change() -> None:
    records = [
        InternalRecord(key={"k": 2}, value=None, change="update", batch=0, partition=0),
        InternalRecord(key={"k": 1}, value=None, change="update", batch=1, partition=0),
        InternalRecord(key={"k": 1}, value=None, change="update", batch=0, partition=0),
        InternalRecord(key={"k": 1}, value=None, change="delete", batch=0, partition=0),
    ]
    ordered = sorted(records, key=InternalRecord.sort_key)
    assert [(r.batch, r.key["k"], r.change) for r in ordered] == [
        (0, 1, "delete"),
        (0, 1, "update"),
        (0, 2, "update"),
        (1, 1, "update"),
    ]


def _job(seqs_and_topics: list[tuple[int, str]], batch_ends: tuple[int, ...]) -> Job:
    plan = plan_statements(
        parse_statements(
            "CREATE STREAM S (V INT) WITH (kafka_topic='s', format='JSON');CREATE STREAM C AS SELECT * FROM S;"
        ),
        {},
    ).plan
    records = tuple(
        ReplayRecord(job=0, seq=seq, topic=topic, partition=0, offset=i, timestamp=i, key=None, value=b"{}")
        for i, (seq, topic) in enumerate(seqs_and_topics)
    )
    return Job(0, next(iter(plan.queries())), records, batch_ends)


def test_a_seq_tells_the_batch_unless_an_input_and_its_copy_are_in_different_batches() -> None:
    # a query that reads a case input and the copy another query wrote of it: both have its seq
    assert _job([(0, "s"), (1, "s")], (1, 2)).seq_tells_batch()
    assert _job([(0, "s"), (0, "C")], (2,)).seq_tells_batch()
    split = _job([(0, "s"), (0, "C"), (1, "s")], (1, 2, 3))
    assert not split.seq_tells_batch()
    assert split.batch_of_seq() == {0: 1, 1: 2}


def _stateful_job(job_id: int, seqs: list[int], *, last_batch_of_seq: bool = False) -> Job:
    plan = plan_statements(
        parse_statements(
            "CREATE STREAM S (K INT KEY, V INT) WITH (kafka_topic='s', format='JSON');"
            "CREATE TABLE T AS SELECT K, COUNT(*) AS N FROM S GROUP BY K;"
        ),
        {},
    ).plan
    records = tuple(
        ReplayRecord(job=job_id, seq=seq, topic="s", partition=0, offset=i, timestamp=i, key=None, value=b"{}")
        for i, seq in enumerate(seqs)
    )
    mode = replace(CAPTURE, last_batch_of_seq=last_batch_of_seq)
    return Job(job_id, next(iter(plan.queries())), records, tuple(range(1, len(seqs) + 1)), mode)


def test_a_group_runs_staged_by_its_jobs_seqs_and_when_their_folders_were_recorded() -> None:
    from qtt.runtime.execute.executor import _staged

    session = object()  # not Spark Connect
    assert _staged(session, [_stateful_job(0, [0, 1]), _stateful_job(1, [0, 1])])
    assert not _staged(session, [_stateful_job(0, [0, 1])]), "one stateful job gains nothing from stages"
    # rows one EXPLODE made of input 0, read record by record: seq 0 spans micro-batches 0 and 1
    assert not _staged(session, [_stateful_job(0, [0, 0, 1]), _stateful_job(1, [0, 1])])
    # a folder recorded when stages placed such rows in the seq's last micro-batch runs staged, alone too
    assert _staged(session, [_stateful_job(0, [0, 0, 1], last_batch_of_seq=True)])
    recorded_before = _stateful_job(0, [0, 0, 1], last_batch_of_seq=True)
    assert not _staged(session, [recorded_before, _stateful_job(1, [0, 0, 1])])
    assert recorded_before.batch_of_seq() == {0: 1, 1: 2}


def test_a_folder_replays_with_the_placement_it_was_recorded_with(tmp_path: Path) -> None:
    from qtt.harness.historical.plan_store import parse_folder
    from qtt.harness.historical.recorded_with import PER_RECORD_PLACEMENT_SINCE, replay_mode

    before = parse_folder(tmp_path / f"0.13.0_{PER_RECORD_PLACEMENT_SINCE - 1}")
    since = parse_folder(tmp_path / f"0.13.0_{PER_RECORD_PLACEMENT_SINCE}")
    assert replay_mode(before).last_batch_of_seq and replay_mode(before).capture_state
    assert replay_mode(since) == CAPTURE
