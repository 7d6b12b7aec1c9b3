"""Stateful operators: aggregations, windows and joins on Spark's ``transformWithState``.

The contract every operator keeps is in :mod:`~qtt.runtime.operators.stateful`; the builders
(:mod:`~qtt.runtime.operators.aggregate_builder`, :mod:`~qtt.runtime.operators.join_builder`,
:mod:`~qtt.runtime.operators.fk_join_builder`) register themselves for their step types with
:func:`qtt.runtime.build.context.builds` and use only the public build context, so the core
builder imports none of them. Importing this package registers them.
"""

from qtt.runtime.operators import aggregate_builder, fk_join_builder, join_builder  # noqa: F401 (registers)
