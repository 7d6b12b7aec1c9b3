"""Building a plan's steps into streaming DataFrames: the builder, the expression compiler, sinks.

Entry point: :class:`qtt.runtime.build.builder.PlanBuilder` (one registered builder per step type);
expressions compile to Spark Columns in :mod:`~qtt.runtime.build.compiler`, with the scalar
functions of :mod:`~qtt.runtime.build.builtins`. Stateful steps are built by the operators of
:mod:`qtt.runtime.operators`, which register themselves with the builder.
"""
