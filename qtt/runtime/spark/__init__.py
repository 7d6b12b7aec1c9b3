"""The Spark underneath: the session, JVM shortcuts, infrastructure failures, scratch and checkpoints.

Entry point: :func:`qtt.runtime.spark.session.get_session` (one SparkSession per process).
:mod:`~qtt.runtime.spark.infrastructure` tells the machine's failures from the plan's.
"""
