"""Stateful operators: aggregations, windows and joins on Spark's ``transformWithState``.

The contract every operator keeps is in :mod:`~qtt.runtime.operators.stateful`; the builders
(:mod:`~qtt.runtime.operators.aggregate_builder`, :mod:`~qtt.runtime.operators.join_builder`,
:mod:`~qtt.runtime.operators.fk_join_builder`) register themselves for their step types and use
only the public build context of :mod:`qtt.runtime.build.context`.
"""
