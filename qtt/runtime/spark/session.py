"""The SparkSession qtt runs on: one per process, created on first use.

Local mode by default; a standalone master (``spark://...``) or a Spark Connect endpoint
(``sc://...``) when ``QTT_SPARK_MASTER`` or the caller says so.

Each run keeps its files in its own folder, ``$TMPDIR/qtt-<user>/run-<pid>-<time>/``: the
JVM's log (``spark.log``, capped) and the SQL warehouse. A run's folder is removed by a later
run once its process is gone and it has not changed for an hour.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from qtt.runtime.spark import infrastructure, scratch, spark_log

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
_lock = threading.Lock()
_session: SparkSession | None = None
_started_seconds: float | None = None
_run_folder: Path | None = None


def run_folder() -> Path:
    """This process's folder for its log and warehouse, created (and stale ones cleaned) on first use."""
    global _run_folder
    if _run_folder is None or not _run_folder.is_dir():
        root = scratch.user_root()
        scratch.clean_stale(root, "run-*", keep_finished=scratch.STALE_SECONDS)
        folder = root / f"run-{os.getpid()}-{time.strftime('%Y%m%dT%H%M%S')}"
        folder.mkdir(exist_ok=True)
        _run_folder = scratch.claim(folder)
    return _run_folder


def _prepare_environment() -> None:
    # ksqlDB prints times in UTC; PySpark converts timestamps with the process time zone,
    # so driver and Python workers must both run in UTC.
    os.environ["TZ"] = "UTC"
    if hasattr(time, "tzset"):
        time.tzset()
    # Python workers start with `python3` from PATH unless told otherwise, and then cannot
    # import qtt ("worker failed to connect back"); PySpark's UDF workers read this variable.
    os.environ["PYSPARK_PYTHON"] = python_for_workers()
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def python_for_workers() -> str:
    """The Python that Spark starts its workers with (:mod:`qtt.runtime.spark.workers.launcher`)."""
    from qtt.runtime.spark.workers import launcher

    return launcher.python_for_workers(run_folder())


#: writes a checkpoint file as a temporary file, renamed (atomic on a local disk, as on HDFS)
CHECKPOINT_FILE_MANAGER = "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager"


def _local_options() -> dict[str, str]:
    """Settings for a JVM that qtt starts itself (local mode or a standalone master)."""
    return {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": os.environ.get("QTT_DRIVER_MEMORY", "3g"),
        # A group's replays run as branches of one union, in one task. With Spark's default page
        # (16 MB for a 2 GB driver on 2 cores) a sort in a stateful branch could not get 64 KB:
        # the task's other branches held its memory (UNABLE_TO_ACQUIRE_MEMORY), and the JVM then
        # died. Replays hold a few hundred rows each; 4 MB pages in a 3 GB driver give a task
        # room for over 150 pages instead of about 30.
        "spark.buffer.pageSize": "4m",
        "spark.sql.warehouse.dir": str(run_folder() / "warehouse"),
        # C1 only: replays are many small, short-lived plans, and C2 spent more CPU compiling
        # their generated classes than it saved (measured: 12% off a group of stateful replays).
        # C1 alone gets a 48 MB code cache, which a long run fills: the JIT then stops and the
        # state server of a stateful query dies ("Out of space in CodeCache for adapters"),
        # failing a whole group of replays that then reruns one by one; 256 MB holds a run.
        "spark.driver.extraJavaOptions": (
            "-Duser.timezone=UTC -XX:+UseSerialGC -Xss64m -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m"
        ),
        "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
        "spark.executorEnv.TZ": "UTC",
        "spark.pyspark.python": python_for_workers(),
        "spark.python.worker.reuse": "true",
        # The settings that decide a Python worker's timeouts in Spark 4.3 (read from its
        # classes): SPARK_AUTH_SOCKET_TIMEOUT, the Python side's wait to connect and
        # authenticate (default 15 s). The JVM's wait for the connect-back itself is
        # hard-coded (see python_for_workers), hence the retry in the executor.
        "spark.python.authenticate.socketTimeout": "300s",
        # RPC asks and the local executor's heartbeats (default 120 s and 10 s): a loaded
        # machine must not lose its only executor.
        "spark.network.timeout": "600s",
        "spark.executor.heartbeatInterval": "60s",
    }


def _session_options() -> dict[str, str]:
    """Settings every qtt session needs, wherever it runs."""
    return {
        # Names are case sensitive in ksqlDB (`a` and `A` are two columns).
        "spark.sql.caseSensitive": "true",
        "spark.sql.session.timeZone": "UTC",
        # Spark 4.3 refuses every expression of type TIME unless asked (a null TIME literal,
        # a cast to TIME); ksqlDB's TIME columns need them.
        "spark.sql.timeType.enabled": "true",
        # ksqlDB follows Java arithmetic: integer overflow wraps, division by zero is null.
        "spark.sql.ansi.enabled": "false",
        # One shuffle partition keeps every replay deterministic and fast on small data.
        "spark.sql.shuffle.partitions": "1",
        "spark.default.parallelism": "2",
        "spark.sql.adaptive.enabled": "false",
        # No whole-stage code generation: each replay's steps are their own plan branch, and
        # Janino compiling every branch's Java costs more than it saves on a few hundred rows
        # (measured: the 276 stateless historical plans in 84.9 s and 84.6 s against 95.2 s)
        "spark.sql.codegen.wholeStage": "false",
        # Nor code generated per expression: every projection and predicate is interpreted,
        # where Spark would compile each one with Janino (a plan branch's few ms each, per
        # branch of every union; measured: the 276 stateless historical plans in 56.1 s
        # against 67.0 s, the 51 stateful case variants in 48.1 s against 51.8 s)
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
        "spark.sql.streaming.numRecentProgressUpdates": "100000",
        "spark.sql.streaming.noDataMicroBatches.enabled": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # PySpark 4 records the Python call site of every DataFrame call for its error messages:
        # a stack walk and two JVM calls each, about half the cost of building a plan
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        # ksqlDB's MAP(...) keeps the last value of a repeated key.
        "spark.sql.mapKeyDedupPolicy": "LAST_WIN",
        # transformWithState needs RocksDB; with changelog checkpointing every micro-batch
        # writes a change log, which the state data source reads back as internal topics.
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
        # Checkpoint files through Hadoop's FileSystem API, not its FileContext API: without
        # Hadoop's native library (pyspark ships none) the local file system starts a process
        # (readlink, chmod) for every link check and permission change, and a FileContext
        # rename checks links many times (a query over 40 relayed sources started 4,266 of
        # them). Measured on that query: its offsets found in 1.66 s, 0.32 s this way; its
        # offset and commit logs written in 88 ms, 21 ms. (Hadoop's RawLocalFileSystem would
        # also drop the checksum files, but the RocksDB state store needs a LocalFileSystem.)
        "spark.sql.streaming.checkpointFileManagerClass": CHECKPOINT_FILE_MANAGER,
    }


def spark_log_path() -> str:
    """Where the JVM's own console output goes: ``QTT_SPARK_LOG``, or ``spark.log`` in :func:`run_folder`."""
    return os.environ.get("QTT_SPARK_LOG") or str(run_folder() / "spark.log")


def _launch_jvm_logging_to_file(url: str, options: dict[str, str]) -> None:
    """Start the JVM with its stdout and stderr copied into :func:`spark_log_path`.

    Spark's banner and log lines, and the "Streaming TransformWithStateInPandas Python worker"
    lines that PySpark's state worker prints for every stateful query, would otherwise
    interleave with qtt's progress and pytest's report. Errors still reach the caller as
    exceptions; the log keeps the JVM's side of the story. It goes through a pipe so that
    it stays under its cap (``QTT_SPARK_LOG_MAX_BYTES``, see :mod:`qtt.runtime.spark.spark_log`).
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False).setMaster(url).setAll(list(options.items()))
    log = spark_log.CappedLog(spark_log_path(), spark_log.cap_from_environment())
    gateway = launch_gateway(conf, popen_kwargs={"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT})
    spark_log.pump(gateway.proc.stdout, log)
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


def master_url(master: str | None = None) -> str:
    return master or os.environ.get("QTT_SPARK_MASTER") or DEFAULT_MASTER


_activated = threading.local()


def activate(session: SparkSession | None = None) -> None:
    """Make ``session`` (default: the process's) the active one of this thread's JVM thread.

    Spark reads settings through the thread's active session (``SQLConf.get``): a thread
    without one falls back to Spark's defaults, so a query built or started there does not see
    ``spark.sql.timeType.enabled`` and fails on TIME columns, and a thread that asks PySpark for
    the active session gets none. Which thread started Spark (the main one, a build thread, the
    topology thread) depends on what ran first; every thread that calls into Spark activates
    the session once, through :func:`get_session` or as its pool's initializer.
    """
    session = session or _session
    jsession = getattr(session, "_jsparkSession", None)  # none in Spark Connect: no JVM here
    if jsession is None or getattr(_activated, "session", None) is session:
        return
    try:
        session._jvm.org.apache.spark.sql.SparkSession.setActiveSession(jsession)  # type: ignore[union-attr]
    except Exception as e:
        # a JVM that is gone: the thread's first Spark call fails the same way, and that failure
        # is a replay's infrastructure error, where one raised here (in a pool's initializer)
        # would break the pool and end the run
        if not infrastructure.is_infrastructure(e):
            raise
        return
    _activated.session = session


def get_session(master: str | None = None) -> SparkSession:
    """The process-wide SparkSession, started on first call (about 4 s of JVM start), and
    active in the calling thread (:func:`activate`)."""
    session = _get_session(master)
    activate(session)
    return session


def session_with(base: SparkSession, settings: Mapping[str, str]) -> SparkSession:
    """A session of ``base``'s Spark with other SQL settings: a clone of ``base`` (its settings
    and registered replay source) with ``settings`` changed in the clone only."""
    from qtt.errors import UnsupportedFeatureError

    if is_connect(base):
        raise UnsupportedFeatureError(
            "Spark settings of their own for one replay on Spark Connect (run on a local master)"
        )
    from pyspark.sql import SparkSession

    # a clone, not a new session: it keeps the settings and the registered replay source
    child = SparkSession(base.sparkContext, base._jsparkSession.cloneSession())
    for key, value in settings.items():
        child.conf.set(key, value)
    activate(child)
    return child


def _get_session(master: str | None = None) -> SparkSession:
    global _session, _started_seconds
    with _lock:
        if _session is not None:
            return _session
        from qtt.runtime.spark import lines

        lines.check_supported()
        lines.quiet_query_context_logs()
        _prepare_environment()
        from pyspark.sql import SparkSession

        url = master_url(master)
        if url.startswith("local"):
            # no network lookups for a local run
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        began = time.perf_counter()
        options = _session_options()
        if url.startswith("sc://"):
            builder = SparkSession.builder.remote(url)
        else:
            options = {**_local_options(), **options}
            builder = SparkSession.builder.master(url)
            _launch_jvm_logging_to_file(url, options)
        builder = builder.appName("qtt")
        for key, value in options.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        if url.startswith("sc://"):
            # before register(): the replay source is built from qtt's classes on the server
            session.addArtifacts(str(_qtt_zip()), pyfile=True)
        else:
            session.sparkContext.setLogLevel(os.environ.get("QTT_SPARK_LOG_LEVEL", "ERROR"))
            # Hadoop's Configuration loads its properties on first read and is not thread-safe:
            # two queries started at once on a fresh JVM (restores, two at a time) could each copy
            # it mid-load, and the tasks of every later job failed to deserialize their copy
            # (java.io.OptionalDataException). Loading it here, on one thread, made that rarer;
            # the first restore of a run also runs alone (driver._run_restored).
            session.sparkContext._jsc.hadoopConfiguration().size()
            # Spark 4.1 registers its state store coordinator with the first streaming query, and
            # a bounded query with state (the batch scenario) run before any failed to find it
            session.streams.active  # noqa: B018
            from qtt.runtime.spark import jvm_functions

            jvm_functions.install()
        from qtt.runtime.spark.source import replay_source

        replay_source.register(session)
        if url.startswith("sc://"):
            _check_server_imports_qtt(session, url)
        _session = session
        _started_seconds = time.perf_counter() - began
        return session


def _qtt_zip() -> Path:
    """This qtt's own code (``*.py``, the ``.lark`` grammars), zipped for a Spark Connect server.

    The server's Python workers run the UDFs and the state functions, all qtt code; shipped
    as a Python artifact, they run the same qtt as this driver. The replay source's driver-side
    runner does not get the artifact in Spark 4.3, so the server's Python must still import qtt
    (see :func:`_check_server_imports_qtt`).
    """
    import zipfile

    import qtt

    package = Path(qtt.__file__).parent
    target = run_folder() / "qtt.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(package.rglob("*")):
            if file.suffix in {".py", ".lark", ".typed"} and "__pycache__" not in file.parts:
                archive.write(file, Path("qtt") / file.relative_to(package))
    return target


def _check_server_imports_qtt(session: SparkSession, url: str) -> None:
    """Fail at once, and say how to fix it, when the server cannot run the replay source.

    Spark 4.3 starts a Python streaming source's driver-side runner without the session's
    artifacts, so the server's own Python must import qtt for it (every other worker gets the
    shipped zip). Without this check every replay would end in a traceback from the server.

    Raises:
        QttError: the server's Python cannot import qtt.
    """
    from pyspark.errors import PySparkException

    from qtt.errors import QttError
    from qtt.runtime.jobs import FORMAT_NAME, encode_options
    from qtt.runtime.spark import lines

    probe = session.readStream.format(FORMAT_NAME).options(**encode_options([], [])).load()
    checkpoint = run_folder() / f"connect-probe-{time.time_ns()}"
    try:
        lines.run_to_end(probe.writeStream.format("noop").option("checkpointLocation", str(checkpoint)))
    except PySparkException as e:
        if "No module named 'qtt'" not in str(e):
            raise
        import qtt

        msg = (
            f"the Spark Connect server at {url} cannot import qtt in its Python: Spark 4.3 runs a Python "
            "streaming source (qtt's replay source) without the session's artifacts"
        )
        hint = (
            f"install qtt {qtt.__version__} in the server's Python (the one spark.pyspark.python names), "
            "or start the server with qtt's folder on its PYTHONPATH"
        )
        raise QttError(msg, hint=hint) from None


def is_connect(spark_object: object) -> bool:
    """Whether a session, DataFrame or query belongs to Spark Connect (no JVM in this process)."""
    return type(spark_object).__module__.startswith("pyspark.sql.connect.")


def started_seconds() -> float | None:
    """How long the JVM and session took to start, once started."""
    return _started_seconds


def spark_version() -> str:
    """The version of the PySpark (and so the Spark) that replays run on."""
    from qtt.runtime.spark import lines

    return lines.pyspark_version()
