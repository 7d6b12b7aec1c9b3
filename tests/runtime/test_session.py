"""The shared SparkSession: its settings, its per-run folder, and where the JVM's output goes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from qtt.runtime.spark import scratch, session


@pytest.fixture
def fresh_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A temp dir of its own, and no run folder yet."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setattr(session, "_run_folder", None)
    monkeypatch.delenv("QTT_SPARK_LOG", raising=False)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    return tmp_path


def test_the_log_and_warehouse_are_per_user_and_per_run(fresh_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = Path(session.spark_log_path())
    run = log.parent
    assert log.name == "spark.log"
    assert run.parent == scratch.user_root(fresh_run)
    assert run.name.startswith(f"run-{os.getpid()}-")
    assert scratch.owner_of(run) == os.getpid()
    assert session._local_options()["spark.sql.warehouse.dir"] == str(run / "warehouse")
    monkeypatch.setenv("QTT_SPARK_LOG", str(fresh_run / "mine.log"))
    assert session.spark_log_path() == str(fresh_run / "mine.log")


def test_a_killed_runs_folder_is_cleaned_by_the_next_run(fresh_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    killed = scratch.user_root(fresh_run) / f"run-{child.pid}-20200101T000000"
    killed.mkdir()
    (killed / scratch.OWNER_FILE).write_text(f"{child.pid}\n")
    (killed / "spark.log").write_text("old")
    monkeypatch.setattr(scratch, "STALE_SECONDS", 0.0)
    session.run_folder()
    assert not killed.exists()


def test_python_workers_start_from_compiled_pyspark(fresh_run: Path) -> None:
    python = session._local_options()["spark.pyspark.python"]
    assert python == str(session.run_folder() / "python")
    # what Spark puts first on a worker's path
    import pyspark

    lib = Path(pyspark.__file__).parent / "python" / "lib"
    zips = ":".join(str(p) for p in sorted(lib.glob("*.zip")))
    out = subprocess.run(
        [python, "-c", "import pyspark, py4j; print(pyspark.__file__); print(py4j.__file__)"],
        env={**os.environ, "PYTHONPATH": zips},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".zip" not in out, out


def test_pyspark_python_wins(fresh_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/python")
    assert session._local_options()["spark.pyspark.python"] == "/opt/python"


@pytest.mark.spark
def test_the_jvm_writes_its_console_output_into_the_log(spark) -> None:  # type: ignore[no-untyped-def]
    from pyspark import SparkContext

    proc = Path(f"/proc/{SparkContext._gateway.proc.pid}/fd")  # type: ignore[union-attr]
    if not proc.is_dir():
        pytest.skip("needs /proc to see the JVM's file descriptors")
    assert os.readlink(proc / "1").startswith("pipe:")
    assert os.readlink(proc / "2") == os.readlink(proc / "1")
    assert Path(session.spark_log_path()).is_file()
    assert spark.conf.get("spark.sql.caseSensitive") == "true"


STARTED_ON_ANOTHER_THREAD = """
import threading
from pyspark.sql import SparkSession
from qtt.runtime.spark.session import get_session
started = threading.Thread(target=get_session)
started.start()
started.join()
spark = get_session()
assert SparkSession.getActiveSession() is not None, "no active session on the main thread"
# a streaming writer is analysed with the thread's settings: TIME needs spark.sql.timeType.enabled
spark.readStream.format("rate").load().selectExpr("CAST('12:00:00' AS TIME) AS t").writeStream
print("ok")
"""


@pytest.mark.spark
def test_spark_started_on_another_thread_is_active_on_the_thread_that_uses_it() -> None:
    """Historical replays describe topologies on a thread of their own, which could start Spark:
    the main thread then had no active session, fell back to Spark's defaults and failed every
    query with a TIME column (and a regex lost its build-time check: topology drift)."""
    done = subprocess.run(
        [sys.executable, "-c", STARTED_ON_ANOTHER_THREAD], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]


def _session_whose_jvm(set_active: object) -> object:
    """A stand-in session whose JVM answers ``setActiveSession`` with ``set_active``."""
    from types import SimpleNamespace

    sql = SimpleNamespace(SparkSession=SimpleNamespace(setActiveSession=set_active))
    jvm = SimpleNamespace(org=SimpleNamespace(apache=SimpleNamespace(spark=SimpleNamespace(sql=sql))))
    return SimpleNamespace(_jsparkSession=object(), _jvm=jvm)


def test_activating_a_session_whose_jvm_is_gone_leaves_the_failure_to_the_thread_s_first_spark_call() -> None:
    from concurrent.futures import ThreadPoolExecutor

    def refused(_: object) -> None:
        raise ConnectionRefusedError(111, "Connection refused")  # as Py4J finds a JVM that is gone

    # as a pool's initializer: the pool stays usable (a broken pool would end the run)
    with ThreadPoolExecutor(1, initializer=session.activate, initargs=(_session_whose_jvm(refused),)) as pool:
        assert pool.submit(lambda: "ran").result() == "ran"


def test_activating_fails_for_a_reason_that_is_not_the_machine_s() -> None:
    def bug(_: object) -> None:
        raise AttributeError("setActiveSession")

    with pytest.raises(AttributeError):
        session.activate(_session_whose_jvm(bug))  # type: ignore[arg-type]
