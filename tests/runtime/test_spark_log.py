"""The JVM's log: copied through a pipe, and never more than twice its cap on disk."""

from __future__ import annotations

import os
from pathlib import Path

from qtt.runtime.spark import spark_log


def test_the_log_rotates_at_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "spark.log"
    log = spark_log.CappedLog(path, cap=100)
    for i in range(50):
        log.write(f"line {i:03}\n".encode())
    log.close()
    rotated = Path(f"{path}.1")
    assert path.stat().st_size <= 100 and rotated.stat().st_size <= 100
    assert path.read_text().endswith("line 049\n")
    assert not (tmp_path / "spark.log.2").exists()


def test_an_oversized_log_from_an_earlier_run_is_rotated_at_start(tmp_path: Path) -> None:
    path = tmp_path / "spark.log"
    path.write_bytes(b"x" * 200)
    spark_log.CappedLog(path, cap=100).close()
    assert path.stat().st_size == 0 and Path(f"{path}.1").stat().st_size == 200


def test_the_pump_copies_a_pipe_until_it_ends(tmp_path: Path) -> None:
    read, write = os.pipe()
    path = tmp_path / "spark.log"
    with os.fdopen(read, "rb") as source:
        thread = spark_log.pump(source, spark_log.CappedLog(path, cap=1 << 20))
        os.write(write, b"hello\n")
        os.close(write)
        thread.join(timeout=10)
    assert path.read_bytes() == b"hello\n"


def test_the_cap_follows_the_environment(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("QTT_SPARK_LOG_MAX_BYTES", "123456")
    assert spark_log.cap_from_environment() == 123456
    monkeypatch.setenv("QTT_SPARK_LOG_MAX_BYTES", "lots")
    assert spark_log.cap_from_environment() == spark_log.DEFAULT_CAP
