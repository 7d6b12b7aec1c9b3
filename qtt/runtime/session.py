"""The SparkSession qtt runs on: one per process, created on first use.

Local mode by default; a standalone master (``spark://...``) or a Spark Connect endpoint
(``sc://...``) when ``QTT_SPARK_MASTER`` or the caller says so.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_lock = threading.Lock()
_session: SparkSession | None = None
_started_seconds: float | None = None


def _prepare_environment() -> None:
    # ksqlDB prints times in UTC; PySpark converts timestamps with the process time zone,
    # so driver and Python workers must both run in UTC.
    os.environ["TZ"] = "UTC"
    if hasattr(time, "tzset"):
        time.tzset()
    # Python workers start with `python3` from PATH unless told otherwise, and then cannot
    # import qtt ("worker failed to connect back").
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def _local_options() -> dict[str, str]:
    """Settings for a JVM that qtt starts itself (local mode or a standalone master)."""
    return {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": os.environ.get("QTT_DRIVER_MEMORY", "2g"),
        "spark.sql.warehouse.dir": os.path.join(tempfile.gettempdir(), "qtt-warehouse"),
        "spark.driver.extraJavaOptions": "-Duser.timezone=UTC -XX:+UseSerialGC",
        "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
        "spark.executorEnv.TZ": "UTC",
        "spark.pyspark.python": sys.executable,
        "spark.python.worker.reuse": "true",
        # Python workers start slowly on small, busy machines; the default 15 s
        # connect-back timeout then fails whole queries.
        "spark.python.authenticate.socketTimeout": "300s",
    }


def _session_options() -> dict[str, str]:
    """Settings every qtt session needs, wherever it runs."""
    return {
        # Names are case sensitive in ksqlDB (`a` and `A` are two columns).
        "spark.sql.caseSensitive": "true",
        "spark.sql.session.timeZone": "UTC",
        # ksqlDB follows Java arithmetic: integer overflow wraps, division by zero is null.
        "spark.sql.ansi.enabled": "false",
        # One shuffle partition keeps every replay deterministic and fast on small data.
        "spark.sql.shuffle.partitions": "1",
        "spark.default.parallelism": "2",
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.streaming.numRecentProgressUpdates": "100000",
        "spark.sql.streaming.noDataMicroBatches.enabled": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # ksqlDB's MAP(...) keeps the last value of a repeated key.
        "spark.sql.mapKeyDedupPolicy": "LAST_WIN",
        # transformWithState needs RocksDB; with changelog checkpointing every micro-batch
        # writes a change log, which the state data source reads back as internal topics.
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    }


def spark_log_path() -> str:
    """Where the JVM's own console output goes (``QTT_SPARK_LOG``, or a file in the temp folder)."""
    return os.environ.get("QTT_SPARK_LOG") or os.path.join(tempfile.gettempdir(), "qtt-spark.log")


def _launch_jvm_logging_to_file(url: str, options: dict[str, str]) -> None:
    """Start the JVM with its stdout and stderr in :func:`spark_log_path`.

    Spark's banner and log lines, and the "Streaming TransformWithStateInPandas Python worker"
    lines that PySpark's state worker prints for every stateful query, would otherwise
    interleave with qtt's progress and pytest's report. Errors still reach the caller as
    exceptions; the log keeps the JVM's side of the story.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False).setMaster(url).setAll(list(options.items()))
    with open(spark_log_path(), "ab") as log:
        # Popen duplicates the descriptor, so the JVM keeps writing after this file closes.
        gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


def master_url(master: str | None = None) -> str:
    return master or os.environ.get("QTT_SPARK_MASTER") or DEFAULT_MASTER


def get_session(master: str | None = None) -> SparkSession:
    """The process-wide SparkSession, started on first call (about 4 s of JVM start)."""
    global _session, _started_seconds
    with _lock:
        if _session is not None:
            return _session
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
        if not url.startswith("sc://"):
            session.sparkContext.setLogLevel(os.environ.get("QTT_SPARK_LOG_LEVEL", "ERROR"))
        from qtt.runtime.replay_source import register

        register(session)
        _session = session
        _started_seconds = time.perf_counter() - began
        return session


def started_seconds() -> float | None:
    """How long the JVM and session took to start, once started."""
    return _started_seconds


def spark_version() -> str:
    """The version of the PySpark (and so the Spark) that replays run on."""
    import pyspark

    return str(pyspark.__version__)
