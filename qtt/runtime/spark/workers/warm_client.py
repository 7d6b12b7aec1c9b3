"""Start a Python worker as a fork of the warm-start server, or as a fresh Python.

Run by the workers' launcher (:mod:`qtt.runtime.spark.workers.launcher`) as
``python -S -E warm_client.py SOCKET PYTHON -m MODULE``: standard library only, no site
packages, so that it starts in a few milliseconds. It hands the server its arguments, its
environment, its folder and its standard streams, and lives as long as the forked worker:
Spark watches this process, stops it with SIGTERM, and reads its exit status. When the server
cannot be reached it becomes the worker itself (``exec``), as the launcher would have.
"""

import json
import os
import signal
import socket
import struct
import sys


def main() -> None:
    path, python, *argv = sys.argv[1:]
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
        socket.send_fds(conn, [struct.pack("!I", len(request)) + request], [0, 1, 2])
        pid = _read_int(conn)
    except OSError:
        os.execv(python, [python, *argv])
    # Spark stops a worker with SIGTERM to the process it started: pass it on
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda number, _frame: os.kill(pid, number))
    try:
        status = _read_int(conn)
    except OSError:
        status = 1
    sys.exit(status)


def _read_int(conn: socket.socket) -> int:
    data = b""
    while len(data) < 4:
        chunk = conn.recv(4 - len(data))
        if not chunk:
            raise ConnectionError("the warm-start server went away")
        data += chunk
    return struct.unpack("!i", data)[0]


if __name__ == "__main__":
    main()
