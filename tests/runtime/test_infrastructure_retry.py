"""A real infrastructure failure, provoked: a Python worker that connects back too late.

Spark 4.3 waits 10 s (hard-coded) for the Python streaming source runner to connect back.
``PYSPARK_PYTHON`` here is a wrapper that sleeps past that wait before it starts Python,
the first time only or every time. A ``qtt run`` must then retry and pass, or report an
infrastructure error with Spark's reason, never a failure. The case is stateful and alone, so
its replay reads the Python replay source (a group of stateless one-micro-batch replays reads a
Parquet file instead, and starts no such runner). Both runs start together: each waits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

WRAPPER = """#!/bin/sh
case "$*" in
  *python_streaming_source_runner*)
    if [ "$QTT_TEST_SLOW_WORKER" = always ] || [ ! -e "$QTT_TEST_MARKER" ]; then
      touch "$QTT_TEST_MARKER"
      sleep 12
    fi
    ;;
esac
exec "{python}" "$@"
"""


COUNTS = {
    "name": "counts",
    "statements": [
        "CREATE STREAM s (k INT KEY, v INT) WITH (kafka_topic='t', value_format='JSON');",
        "CREATE TABLE counts AS SELECT k, COUNT(*) AS n FROM s GROUP BY k;",
    ],
    "inputs": [{"topic": "t", "key": 1, "value": {"v": 4}}, {"topic": "t", "key": 1, "value": {"v": 5}}],
    "outputs": [{"topic": "COUNTS", "key": 1, "value": {"N": 1}}, {"topic": "COUNTS", "key": 1, "value": {"N": 2}}],
}


class _Run:
    """``qtt run`` of the counts case under the slow wrapper, started now, judged on :meth:`result`."""

    def __init__(self, tmp_path: Path, mode: str) -> None:
        wrapper = tmp_path / "slow-python"
        wrapper.write_text(WRAPPER.replace("{python}", sys.executable))
        wrapper.chmod(0o755)
        env = {
            **os.environ,
            "PYSPARK_PYTHON": str(wrapper),
            "QTT_TEST_SLOW_WORKER": mode,
            "QTT_TEST_MARKER": str(tmp_path / "slept"),
            "TMPDIR": str(tmp_path),
            "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")]),
        }
        env.pop("QTT_SPARK_LOG", None)
        self.report = tmp_path / "report.json"
        cases = tmp_path / "counts.json"
        cases.write_text(json.dumps({"tests": [COUNTS]}))
        command = [sys.executable, "-m", "qtt.cli", "run", str(cases), "--jsonl", str(self.report)]
        self.process = subprocess.Popen(
            command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def result(self) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
        try:
            stdout, stderr = self.process.communicate(timeout=180)
        finally:
            self.process.kill()
        done = subprocess.CompletedProcess(self.process.args, self.process.returncode, stdout, stderr)
        rows = [json.loads(line) for line in self.report.read_text().splitlines()] if self.report.exists() else []
        assert len(rows) == 1, done.stdout + done.stderr
        return done, rows[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, _Run]]:
    """Both runs, started together: each spends most of its time waiting on Spark's 10 s."""
    started = {mode: _Run(tmp_path_factory.mktemp(mode), mode) for mode in ("once", "always")}
    yield started
    for run in started.values():
        run.process.kill()
        run.process.communicate()


@pytest.mark.spark
@pytest.mark.slow
def test_a_worker_that_connects_back_too_late_once_is_retried_and_passes(runs: dict[str, _Run]) -> None:
    done, row = runs["once"].result()
    assert row["status"] == "passed", done.stdout + done.stderr
    assert "retry 1/2 after an infrastructure error" in done.stderr
    assert "Python worker failed to connect back" in done.stderr
    assert done.returncode == 0


@pytest.mark.spark
@pytest.mark.slow
def test_a_worker_that_never_connects_back_is_an_infrastructure_error(runs: dict[str, _Run]) -> None:
    done, row = runs["always"].result()
    assert row["status"] == "infrastructure error", done.stdout + done.stderr
    assert "Python worker failed to connect back" in str(row["reason"])
    assert "tried 3 times" in str(row["reason"])
    assert "retry 2/2" in done.stderr
    assert not [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert "1 infrastructure error" in done.stdout
    assert done.returncode != 0
