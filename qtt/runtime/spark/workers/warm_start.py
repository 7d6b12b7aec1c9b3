"""The warm-start server: Python workers that Spark starts one by one, forked from a process
that has already imported what they import.

Spark starts a fresh Python process for each ``transformWithState`` operator when a query
starts (the pre-init runner, which learns the operator's state variables) and one for each
Python streaming source (its runner), and waits for each to import pyspark and qtt: about a
quarter of a second of CPU apiece, and a restored checkpoint's query starts dozens. This
server imports those modules once; the launcher's client (:mod:`.warm_client`) asks it for a
worker, and it forks one that runs the asked module as ``__main__`` with the client's
arguments, environment, folder and standard streams, and reports the worker's exit status.

The server is single-threaded (it forks): one loop over its listening socket, the clients
waiting for an exit status, a pipe that wakes it when a worker ends, and its standard input,
whose end means that the process that started it is gone.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import runpy
import selectors
import signal
import socket
import struct
import sys
from typing import Any

#: the worker modules Spark starts with ``python -m`` outside its daemon, which the server forks
FORKED = (
    "pyspark.sql.streaming.transform_with_state_driver_worker",
    "pyspark.sql.streaming.python_streaming_source_runner",
)
#: imported before any fork: what those workers import when they unpickle qtt's functions
PRELOADED = (
    *FORKED,
    "qtt.runtime.operators.stateful",
    "qtt.runtime.operators.windows",
    "qtt.runtime.operators.joins",
    "qtt.runtime.operators.grace_joins",
    "qtt.runtime.operators.fk_joins",
    "qtt.runtime.operators.wide",
    "qtt.runtime.spark.source.replay_source",
)
_MAX_REQUEST = 1 << 24


def serve(path: str) -> None:
    """Listen on Unix socket ``path`` until standard input ends."""
    forkable = set()
    for name in PRELOADED:
        try:
            importlib.import_module(name)
        except ImportError as e:  # that module's workers start fresh, as without the server
            print(f"qtt warm start: {name} is not preloaded: {e}", file=sys.stderr)
        else:
            forkable.add(name)
    gc.collect()
    gc.freeze()  # forked workers share these pages, and their collections skip them
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("qtt warm start: ready", flush=True)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    waiting: dict[int, socket.socket] = {}
    forked = 0
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_read, selectors.EVENT_READ, "reap")
    selector.register(sys.stdin, selectors.EVENT_READ, "parent")
    while True:
        for key, _ in selector.select():
            if key.data == "parent" and not os.read(sys.stdin.fileno(), 1):
                for pid in waiting:
                    _kill(pid)
                print(f"qtt warm start: forked {forked} worker(s)", file=sys.stderr)
                return
            if key.data == "reap":
                os.read(wake_read, 4096)
                _reap(waiting)
            elif key.data == "accept":
                conn, _ = listener.accept()
                conn.settimeout(10)  # a client sends its request at once, or never
                try:
                    pid = _fork_worker(conn, forkable, listener, wake_read, wake_write)
                except (OSError, ValueError) as e:
                    print(f"qtt warm start: could not start a worker: {e}", file=sys.stderr)
                    conn.close()
                    continue
                waiting[pid] = conn
                forked += 1
                _reap(waiting)  # a worker may have ended before its pid was noted


def _fork_worker(conn: socket.socket, forkable: set[str], listener: socket.socket, *pipe: int) -> int:
    header, fds, _, _ = socket.recv_fds(conn, 4, 3)
    try:
        if len(header) != 4 or len(fds) != 3:
            raise ValueError("a request starts with its length and three standard streams")
        (size,) = struct.unpack("!I", header)
        if size > _MAX_REQUEST:
            raise ValueError(f"a request of {size} bytes")
        body = b""
        while len(body) < size:
            chunk = conn.recv(size - len(body))
            if not chunk:
                raise ValueError("the request ended early")
            body += chunk
        request = json.loads(body)
        argv: list[str] = request["argv"]
        if argv[:1] != ["-m"] or len(argv) < 2 or argv[1] not in forkable:
            raise ValueError(f"not a worker the server forks: {argv}")
        pid = os.fork()
        if pid == 0:
            _become_worker(request, fds, conn, listener, pipe)
    finally:
        for fd in fds:
            os.close(fd)
    conn.sendall(struct.pack("!i", pid))
    return pid


def _become_worker(request: dict[str, Any], fds: list[int], *closed: object) -> None:
    status = 1
    try:
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
            signal.signal(number, signal.SIG_DFL)
        for each in closed:
            if isinstance(each, tuple):
                for fd in each:
                    os.close(fd)
            else:
                each.close()  # type: ignore[attr-defined]
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
        sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        module, *arguments = request["argv"][1:]
        sys.argv = [module, *arguments]
        gc.enable()
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        status = 0
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def _reap(waiting: dict[int, socket.socket]) -> None:
    while waiting:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is not None:
            code = os.waitstatus_to_exitcode(status)
            with contextlib.suppress(OSError):  # the client is gone: nobody to tell
                conn.sendall(struct.pack("!i", code if code >= 0 else 128 - code))
            conn.close()


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)


if __name__ == "__main__":
    serve(sys.argv[1])
