"""The warm-start server forks Spark's one-off Python workers; its client falls back to a fresh
Python whenever the server cannot start one. Real processes, real sockets, no Spark."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from qtt.runtime.spark.workers import launcher, warm_client, warm_start

SOURCE_RUNNER = "pyspark.sql.streaming.python_streaming_source_runner"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    path = tmp_path / "warm.sock"
    started = subprocess.Popen(
        [sys.executable, "-m", warm_start.__name__, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert started.stdout is not None
    assert started.stdout.readline().strip() == "qtt warm start: ready"
    yield started, path
    if started.poll() is None:
        started.kill()
        started.wait()


def _client(path: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-S", "-E", warm_client.__file__, str(path), sys.executable, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _parent_of(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[1])


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads a process's parent from /proc")
def test_a_worker_is_forked_by_the_server_and_stopped_through_its_client(
    server: tuple[subprocess.Popen[str], Path], tmp_path: Path
) -> None:
    started, path = server
    spark = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # stands in for the JVM's side
    spark_path = tmp_path / "spark.sock"
    spark.bind(str(spark_path))
    spark.listen(1)
    spark.settimeout(60)
    env = {**os.environ, "PYTHON_WORKER_FACTORY_SOCK_PATH": str(spark_path)}
    env.pop("PYTHON_WORKER_FACTORY_SECRET", None)
    client = _client(path, "-m", SOURCE_RUNNER, env=env)
    conn, _ = spark.accept()
    (pid,) = struct.unpack("!i", conn.makefile("rb").read(4))  # every worker first sends its pid
    assert pid != client.pid
    assert _parent_of(pid) == started.pid, "the worker is the server's child"
    client.send_signal(signal.SIGTERM)  # how Spark stops a worker it started
    assert client.wait(timeout=60) == 128 + signal.SIGTERM
    conn.close()
    started.stdin.close()  # type: ignore[union-attr]
    assert started.wait(timeout=60) == 0
    assert "forked 1 worker(s)" in started.stderr.read()  # type: ignore[union-attr]


def test_a_forked_workers_failure_reaches_spark_through_its_client(
    server: tuple[subprocess.Popen[str], Path], tmp_path: Path
) -> None:
    _, path = server
    env = {**os.environ, "PYTHON_WORKER_FACTORY_SOCK_PATH": str(tmp_path / "nobody-listens.sock")}
    env.pop("PYTHON_WORKER_FACTORY_SECRET", None)
    _, err = _client(path, "-m", SOURCE_RUNNER, env=env).communicate(timeout=60)
    assert "CANNOT_OPEN_SOCKET" in err, err


def test_other_modules_start_as_a_fresh_python(server: tuple[subprocess.Popen[str], Path]) -> None:
    _, path = server
    client = _client(path, "-m", "json.tool", "--help")
    out, _ = client.communicate(timeout=60)
    assert client.returncode == 0
    assert "usage:" in out


def test_without_the_server_the_client_becomes_the_worker(tmp_path: Path) -> None:
    client = _client(tmp_path / "no-server.sock", "-c", "import os; print(os.getpid())")
    out, _ = client.communicate(timeout=60)
    assert client.returncode == 0
    assert int(out) == client.pid, "the client exec'd the fresh Python in its own process"


def test_the_launcher_routes_only_sparks_one_off_workers_to_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setenv(launcher.ENV_WARM_START, "1")
    monkeypatch.setattr(launcher, "_start_server", lambda *args: None)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # stands in for the server
    listener.bind(str(tmp_path / "warm-start.sock"))
    listener.listen(1)
    listener.settimeout(60)
    script = launcher.python_for_workers(tmp_path)

    worker = subprocess.Popen([script, "-m", SOURCE_RUNNER], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    conn, _ = listener.accept()
    header, fds, _, _ = socket.recv_fds(conn, 4, 3)
    (size,) = struct.unpack("!I", header)
    request = json.loads(conn.makefile("rb").read(size))
    assert request["argv"] == ["-m", SOURCE_RUNNER]
    assert len(fds) == 3, "the worker's standard streams"
    for fd in fds:
        os.close(fd)
    conn.close()  # no worker from the server: the client becomes a fresh one, which finds no Spark
    worker.communicate(timeout=120)
    assert worker.returncode != 0

    fresh = subprocess.run([script, "-c", "print('fresh')"], capture_output=True, text=True, timeout=60, check=True)
    assert fresh.stdout == "fresh\n"
    listener.settimeout(0)
    with pytest.raises(BlockingIOError):
        listener.accept()  # any other Python starts fresh, without asking the server


def test_qtt_warm_start_0_starts_every_worker_fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setenv(launcher.ENV_WARM_START, "0")
    started: list[object] = []
    monkeypatch.setattr(launcher, "_start_server", lambda *args: started.append(args))
    text = Path(launcher.python_for_workers(tmp_path)).read_text()
    assert "warm_client.py" not in text
    assert not started


def test_a_pyspark_python_naming_this_python_keeps_the_launcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A global PYSPARK_PYTHON naming qtt's own Python must not cost the warm start."""
    monkeypatch.setattr(launcher, "_start_server", lambda *args: None)
    names = [sys.executable] + [
        str(sibling)
        for sibling in (Path(sys.executable).with_name(n) for n in ("python", "python3"))
        if sibling.exists() and str(sibling) != sys.executable
    ]
    for name in names:  # the binary itself, and its virtualenv sibling (asked for its prefix)
        monkeypatch.setenv("PYSPARK_PYTHON", name)
        assert launcher.runs_this_python(name), name
        assert launcher.python_for_workers(tmp_path) == str(tmp_path / "python")


def test_a_pyspark_python_script_or_another_python_replaces_the_launcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher, "_start_server", lambda *args: None)
    wrapper = tmp_path / "wrapped-python"  # a user's wrapper may do more than run Python: kept
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PYSPARK_PYTHON", str(wrapper))
    assert launcher.python_for_workers(tmp_path) == str(wrapper)
    assert not (tmp_path / "python").exists()
    assert not launcher.runs_this_python(str(tmp_path / "missing-python"))
    if sys.prefix != sys.base_prefix:  # the base Python a virtualenv links to lacks its packages
        base = tmp_path / "base-python"
        base.symlink_to(os.path.realpath(sys.executable))
        assert not launcher.runs_this_python(str(base))
