"""qtt on Spark clusters started from the installed pyspark, on loopback.

Each test starts its cluster's JVMs in their own process group, waits for the log line that
says each is ready (never a sleep), runs ``qtt run`` in a subprocess (this process may
already hold a local SparkSession, and a process has one), and kills the JVMs afterwards.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).parents[2]
#: one stateless and one stateful (aggregations, table filters) case file: 8 variants
CASE_FILES = ("cases/smoke.json", "cases/tables.json")
READY_SECONDS = 90


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Daemon:
    """A JVM in its own process group, its output copied to ``log`` and watched for lines."""

    def __init__(self, command: list[str], log: Path, env: dict[str, str], cwd: Path) -> None:
        self.log = log
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        with self.log.open("w", encoding="utf-8") as copy:
            for line in self.process.stdout:
                copy.write(line)
                copy.flush()
                self._lines.put(line)
        self._lines.put(None)

    def wait_for(self, pattern: str) -> str:
        """The first output line matching ``pattern``; fails if the JVM ends or is not ready in time."""
        deadline = time.monotonic() + READY_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                pytest.fail(f"{self.log.name}: the JVM ended before {pattern!r}:\n{self._tail()}")
            if re.search(pattern, line):
                return line
        pytest.fail(f"{self.log.name}: no {pattern!r} within {READY_SECONDS} s:\n{self._tail()}")

    def _tail(self) -> str:
        return "".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines(True)[-30:])

    def kill(self) -> None:
        """End the whole process group (spark-submit starts the JVM as a child)."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(timeout=15)
                return
            except subprocess.TimeoutExpired:
                continue


def _daemon_env(tmp_path: Path) -> dict[str, str]:
    """The cluster's environment: UTC (ksqlDB's times), loopback, and no qtt on any path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "SPARK_HOME")}
    env.update(SPARK_HOME=str(_spark_home()), TZ="UTC", SPARK_LOCAL_IP="127.0.0.1", SPARK_LOG_DIR=str(tmp_path))
    return env


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[list[Daemon]]:
    """Started JVMs, killed at the end of the test whatever happens."""
    started: list[Daemon] = []
    yield started
    for daemon in reversed(started):
        daemon.kill()


def _qtt_run(tmp_path: Path, master: str) -> tuple[subprocess.CompletedProcess[str], list[dict[str, object]]]:
    report = tmp_path / "report.json"
    env = {**os.environ, "QTT_SPARK_MASTER": master, "SPARK_LOCAL_IP": "127.0.0.1", "TZ": "UTC"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "qtt.cli", "run", *CASE_FILES, "--jsonl", str(report)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        # a hang's backstop, not a speed check: on pyspark 4.1 over Spark Connect each Python
        # worker takes about 6 s to start (1 s on 4.3), and the replay took 400 s on a busy machine
        timeout=1200,
        check=False,
    )
    rows = [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else []
    return done, rows


def _assert_all_passed(done: subprocess.CompletedProcess[str], rows: list[dict[str, object]]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8 variant(s): 8 passed, 0 failed, 0 skipped, 0 error" in done.stdout
    assert sorted({str(r["file"]) for r in rows}) == sorted(CASE_FILES)
    assert all(r["status"] == "passed" for r in rows)


def test_a_standalone_master_and_worker_replay_stateless_and_stateful_cases(tmp_path, daemons):
    spark_class = str(_spark_home() / "bin" / "spark-class")
    env = _daemon_env(tmp_path)
    port = _free_port()
    master_command = [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"]
    master_command += ["--port", str(port), "--webui-port", str(_free_port())]
    master = Daemon(master_command, tmp_path / "master.log", env, tmp_path)
    daemons.append(master)
    master.wait_for(r"Starting Spark master at spark://127\.0\.0\.1:")
    url = f"spark://127.0.0.1:{port}"
    worker_command = [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1"]
    worker_command += ["--cores", "1", "--memory", "1g", "--webui-port", str(_free_port())]
    worker_command += ["--work-dir", str(tmp_path / "work")]
    worker = Daemon(worker_command, tmp_path / "worker.log", env, tmp_path)
    daemons.append(worker)
    worker.wait_for(r"Successfully registered with master")
    done, rows = _qtt_run(tmp_path, url)
    _assert_all_passed(done, rows)
    assert "app-" in (tmp_path / "master.log").read_text()  # the replays ran on this cluster


def _python_without_qtt(tmp_path: Path, later: Path) -> Path:
    """This venv's Python, minus qtt (the editable install's import hook is removed at start-up),
    with ``later`` on its path: a zip that does not exist yet."""
    site = tmp_path / "no-qtt"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        "sys.meta_path[:] = [\n"
        "    f for f in sys.meta_path if not getattr(f, '__module__', '').startswith('__editable__')\n"
        "]\n",
        encoding="utf-8",
    )
    launcher = tmp_path / "python"
    launcher.write_text(
        f'#!/bin/sh\nPYTHONPATH="{site}:{later}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" "$@"\n',
        encoding="utf-8",
    )
    launcher.chmod(0o755)
    return launcher


def _zip_qtt(target: Path) -> None:
    package = REPO / "qtt"
    with zipfile.ZipFile(target, "w") as archive:
        for file in package.rglob("*"):
            if file.suffix in {".py", ".lark"} and "__pycache__" not in file.parts:
                archive.write(file, Path("qtt") / file.relative_to(package))


def test_a_spark_connect_server_replays_stateless_and_stateful_cases(tmp_path, daemons):
    server_qtt = tmp_path / "server-lib" / "qtt.zip"
    python = _python_without_qtt(tmp_path, server_qtt)
    server_env = _daemon_env(tmp_path)
    lacks_qtt = subprocess.run(
        [str(python), "-c", "import qtt"], cwd=tmp_path, env=server_env, capture_output=True, text=True, check=False
    )
    assert "No module named 'qtt'" in lacks_qtt.stderr
    env = {**server_env, "PYSPARK_PYTHON": str(python), "PYSPARK_DRIVER_PYTHON": str(python)}
    port = _free_port()
    settings = {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.pyspark.python": str(python),
        "spark.pyspark.driver.python": str(python),
        "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
    }
    command = [str(_spark_home() / "bin" / "spark-submit"), "--master", "local[2]"]
    command += ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    server = Daemon([*command, "spark-internal"], tmp_path / "connect.log", env, tmp_path)
    daemons.append(server)
    server.wait_for(r"Spark Connect server started")
    url = f"sc://127.0.0.1:{port}"

    # a server whose Python lacks qtt: one clear error before any replay, never a verdict
    done, rows = _qtt_run(tmp_path, url)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"the Spark Connect server at {url} cannot import qtt in its Python" in done.stderr
    assert "hint: install qtt" in done.stderr
    assert rows == []

    server_qtt.parent.mkdir()
    _zip_qtt(server_qtt)
    done, rows = _qtt_run(tmp_path, url)
    _assert_all_passed(done, rows)
