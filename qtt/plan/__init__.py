"""SQL statements -> execution plans, and the plan's canonical JSON form.

Entry points, in pipeline order:

- :func:`plan_statements` (:mod:`qtt.plan.statements`): parsed statements -> :class:`Plan`;
- :func:`dumps` / :func:`loads` (:mod:`qtt.plan.codec`): a plan <-> canonical ``plan.json``,
  read with the plan's own type grammar (:mod:`qtt.plan.type_text`), never the SQL parser;
- :func:`query_order` and :class:`QueryShape` (:mod:`qtt.plan.shape`): what a plan's queries
  read, write and keep in state, asked once;
- :func:`diff_lines` (:mod:`qtt.plan.diff`): step-level differences between two plans.
"""

from __future__ import annotations

from qtt.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "plan_statements": "qtt.plan.statements",
        "Plan": "qtt.plan.steps",
        "dumps": "qtt.plan.codec",
        "loads": "qtt.plan.codec",
        "query_order": "qtt.plan.shape",
        "QueryShape": "qtt.plan.shape",
        "diff_lines": "qtt.plan.diff",
    },
)
