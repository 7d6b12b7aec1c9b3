"""The persisted contract: execution steps, expressions, schemas, type text and the plan codec.

Everything a ``plan.json`` holds is defined here, as frozen dataclasses registered by type tag,
and nothing here reads SQL: loading a plan (:func:`qtt.plan.ir.codec.loads`) never reaches the
grammar. Entry points: :mod:`~qtt.plan.ir.steps` (the step DAG and :class:`Plan`),
:mod:`~qtt.plan.ir.expressions`, :mod:`~qtt.plan.ir.codec` (JSON in and out),
:mod:`~qtt.plan.ir.shape` (what a replay needs to know of a plan) and :mod:`~qtt.plan.ir.diff`.
"""
