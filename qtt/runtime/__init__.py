"""Plan -> PySpark Structured Streaming. The only package that imports pyspark.

Subpackages, lowest layer first: :mod:`~qtt.runtime.spark` (the session and the JVM),
:mod:`~qtt.runtime.aggregates` (UDAF implementations), :mod:`~qtt.runtime.build` (steps and
expressions into DataFrames), :mod:`~qtt.runtime.operators` (the stateful steps) and
:mod:`~qtt.runtime.execute` (running jobs). :mod:`qtt.runtime.jobs` is the plain-data contract
with the harness: :class:`~qtt.runtime.jobs.Job`, :class:`~qtt.runtime.jobs.ReplayMode`,
:class:`~qtt.runtime.jobs.QueryRun` and the :class:`~qtt.runtime.jobs.Runtime` a replay runs on.

Entry points:

- :func:`get_session` (:mod:`qtt.runtime.spark.session`): the one SparkSession of the process;
- :func:`run_jobs` (:mod:`qtt.runtime.execute.executor`): build queries over replay records and run
  them, sharing streaming queries where it can; takes and returns the pure data of
  :mod:`qtt.runtime.jobs`;
- :func:`describe` (:mod:`qtt.runtime.execute.topology`): the normalized topology of a plan's queries,
  in the file format of :mod:`qtt.runtime.execute.topology_text`.

Importing this package does not import pyspark; using one of these names does.
"""

from __future__ import annotations

from qtt.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "get_session": "qtt.runtime.spark.session",
        "run_jobs": "qtt.runtime.execute.executor",
        "describe": "qtt.runtime.execute.topology",
    },
)
