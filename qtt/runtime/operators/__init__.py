"""Stateful operators: aggregations, windows and joins on Spark's ``transformWithState``.

The contract every operator keeps is in :mod:`~qtt.runtime.operators.stateful`; the builders
(:mod:`~qtt.runtime.operators.aggregate_builder`, :mod:`~qtt.runtime.operators.join_builder`,
:mod:`~qtt.runtime.operators.fk_join_builder`, :mod:`~qtt.runtime.operators.table_filter`)
register themselves for their step types with :func:`qtt.runtime.build.context.builds` and
use only the public build context, so the core builder imports none of them. Importing
:mod:`~qtt.runtime.operators.registered` registers them.

Importing this package imports nothing: Spark starts a Python process for each stateful
operator when a query starts (to learn its state variables), and that process imports only the
operator's own module.
"""
