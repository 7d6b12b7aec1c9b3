"""Running built queries: jobs in, records and state out.

Entry point: :func:`qtt.runtime.execute.executor.run_jobs`. :mod:`~qtt.runtime.jobs` is the
plain-data contract with the harness; :mod:`~qtt.runtime.execute.staged` runs a group's stateful
operators stage by stage; :mod:`~qtt.runtime.execute.internal_topics` reads state back through
Spark's state data source; :mod:`~qtt.runtime.execute.topology` describes what a plan builds.
"""
