"""Planning one persistent query into steps: source, filter, re-key, grouping, joins, windows, sink.

Entry point: :mod:`~qtt.plan.planner.query_planner`; GROUP BY in
:mod:`~qtt.plan.planner.aggregate_planner`, joins in :mod:`~qtt.plan.planner.join_query` and
:mod:`~qtt.plan.planner.join_planner`, windows in :mod:`~qtt.plan.planner.window_planner`.
"""
