"""The planner's entry point, for callers: plan a case's statements into a plan.

The work is split by job: :mod:`qtt.plan.statements` (one method per statement),
:mod:`qtt.plan.query_planner` and :mod:`qtt.plan.aggregate_planner` (queries),
:mod:`qtt.plan.with_properties` (WITH clauses and formats), :mod:`qtt.plan.metastore`,
:mod:`qtt.plan.aliases` and :mod:`qtt.plan.messages`.
"""

from __future__ import annotations

from qtt.plan.metastore import DataSource
from qtt.plan.statements import PlannedCase, plan_statements

__all__ = ["DataSource", "PlannedCase", "plan_statements"]
