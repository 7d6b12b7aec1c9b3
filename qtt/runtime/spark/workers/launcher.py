"""The Python that Spark starts its workers with: a launcher script in the run's folder.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` first on every worker's path, and a zip
holds no compiled bytecode: each worker compiles pyspark from source before it connects back
(0.6 s of CPU instead of 0.2 s, measured). The connect-back waits are hard-coded in Spark 4.3
(10 s in ``PythonWorkerFactory.createSimpleWorker``, which starts the streaming source runner
and the transformWithStateInPandas pre-init runner; 60 s for the daemon's fork), and no
setting changes them, so on a busy machine the worker's own start must be short. The launcher
puts the installed pyspark and py4j (compiled) ahead of the zips.

Spark starts the two workers above as fresh processes, one per stateful operator or source
each time a query starts; the launcher has them forked from the warm-start server instead
(:mod:`.warm_start`), which has imported what they import. ``QTT_WARM_START=0`` turns that
off; without the server (not started yet, or gone) they start as fresh processes.

A ``PYSPARK_PYTHON`` that names another Python, or a script, replaces the launcher; one that
names the Python binary running qtt (as a user's global setting often does) does not, as the
launcher runs that Python anyway, only faster.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from qtt.runtime.spark.workers.warm_start import FORKED

#: ``0`` starts every worker as a fresh Python
ENV_WARM_START = "QTT_WARM_START"
#: a Unix socket's path is at most 108 bytes on Linux
_SOCKET_PATH_LIMIT = 100
_server: subprocess.Popen[bytes] | None = None


def python_for_workers(folder: Path) -> str:
    """``PYSPARK_PYTHON`` if it names another Python, else the launcher written into ``folder``
    (the run's folder) for this Python, with the warm-start server started beside it."""
    chosen = os.environ.get("PYSPARK_PYTHON")
    if chosen and chosen != str(folder / "python") and not runs_this_python(chosen):
        return chosen
    import py4j
    import pyspark

    packages = [Path(pyspark.__file__).parent, Path(py4j.__file__).parent]
    if os.name != "posix" or not (packages[0] / "python" / "lib" / "pyspark.zip").exists():
        return sys.executable
    lib = folder / "pylib"
    lib.mkdir(exist_ok=True)
    for package in packages:
        link = lib / package.name
        if not link.is_symlink():
            link.symlink_to(package, target_is_directory=True)
    launcher = folder / "python"
    if not launcher.exists():
        socket_path = folder / "warm-start.sock"
        warm = os.environ.get(ENV_WARM_START, "1") != "0" and len(str(socket_path)) <= _SOCKET_PATH_LIMIT
        launcher.write_text(_script(lib, socket_path if warm else None), encoding="utf-8")
        launcher.chmod(0o755)
        if warm:
            _start_server(lib, socket_path, folder / "warm-start.log")
    return str(launcher)


def runs_this_python(command: str) -> bool:
    """Whether ``command`` is the Python binary that runs qtt, under the same prefix (so with
    the same packages): ``python3`` beside ``python`` in a virtualenv is; a script that wraps
    it, or the base Python a virtualenv links to, is not."""
    found = shutil.which(command)
    if found is None or not os.path.samefile(found, sys.executable):
        return False
    if os.path.abspath(found) == os.path.abspath(sys.executable):
        return True
    ask = "import sys; print(sys.prefix)"
    try:
        out = subprocess.run([found, "-c", ask], capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return out.strip() == sys.prefix


def _script(lib: Path, socket_path: Path | None) -> str:
    python = shlex.quote(sys.executable)
    lines = ["#!/bin/sh", f'export PYTHONPATH={shlex.quote(str(lib))}"${{PYTHONPATH:+:$PYTHONPATH}}"']
    if socket_path is not None:
        sock, client = shlex.quote(str(socket_path)), shlex.quote(str(Path(__file__).with_name("warm_client.py")))
        lines += [
            f'if [ "$1" = "-m" ] && [ -S {sock} ]; then',
            f'  case "$2" in {"|".join(FORKED)}) exec {python} -S -E {client} {sock} {python} "$@" ;; esac',
            "fi",
        ]
    lines.append(f'exec {python} "$@"')
    return "\n".join(lines) + "\n"


def _start_server(lib: Path, socket_path: Path, log: Path) -> None:
    """Start the warm-start server; it ends when this process does (its standard input closes)."""
    global _server
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(lib), os.environ.get("PYTHONPATH")])))
    with log.open("ab") as out:
        _server = subprocess.Popen(
            [sys.executable, "-m", "qtt.runtime.spark.workers.warm_start", str(socket_path)],
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=out,
            env=env,
            start_new_session=True,
        )
