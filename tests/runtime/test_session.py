"""The shared SparkSession: its settings and where the JVM's console output goes."""

from __future__ import annotations

from pathlib import Path

import pytest

from qtt.runtime import session


def test_the_log_path_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("QTT_SPARK_LOG", str(tmp_path / "spark.log"))
    assert session.spark_log_path() == str(tmp_path / "spark.log")
    monkeypatch.delenv("QTT_SPARK_LOG")
    assert session.spark_log_path().endswith("qtt-spark.log")


def test_local_options_point_python_workers_at_this_interpreter() -> None:
    import sys

    assert session._local_options()["spark.pyspark.python"] == sys.executable


@pytest.mark.spark
def test_the_jvm_writes_its_console_output_to_the_log_file(spark) -> None:  # type: ignore[no-untyped-def]
    from pyspark import SparkContext

    proc = Path(f"/proc/{SparkContext._gateway.proc.pid}/fd")  # type: ignore[union-attr]
    if not proc.is_dir():
        pytest.skip("needs /proc to see the JVM's file descriptors")
    log = Path(session.spark_log_path()).resolve()
    assert Path(proc / "1").resolve() == log
    assert Path(proc / "2").resolve() == log
    assert spark.conf.get("spark.sql.caseSensitive") == "true"
