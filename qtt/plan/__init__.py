"""SQL statements -> execution plans, and the plan's canonical JSON form.

Subpackages, lowest layer first: :mod:`~qtt.plan.ir` (the persisted contract: steps,
expressions, schemas, the codec), :mod:`~qtt.plan.functions` (signature tables),
:mod:`~qtt.plan.ddl` (sources, WITH properties, upgrades), :mod:`~qtt.plan.analysis`
(typing expressions) and :mod:`~qtt.plan.planner` (one query into steps);
:mod:`qtt.plan.statements` plans a case's statements in order.

Entry points, in pipeline order:

- :func:`plan_statements` (:mod:`qtt.plan.statements`): parsed statements -> :class:`Plan`;
- :func:`dumps` / :func:`loads` (:mod:`qtt.plan.ir.codec`): a plan <-> canonical ``plan.json``,
  read with the plan's own type grammar (:mod:`qtt.plan.ir.type_text`), never the SQL parser;
- :func:`query_order` and :class:`QueryShape` (:mod:`qtt.plan.ir.shape`): what a plan's queries
  read, write and keep in state, asked once;
- :func:`diff_lines` (:mod:`qtt.plan.ir.diff`): step-level differences between two plans.
"""

from __future__ import annotations

from qtt.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "plan_statements": "qtt.plan.statements",
        "Plan": "qtt.plan.ir.steps",
        "dumps": "qtt.plan.ir.codec",
        "loads": "qtt.plan.ir.codec",
        "query_order": "qtt.plan.ir.shape",
        "QueryShape": "qtt.plan.ir.shape",
        "diff_lines": "qtt.plan.ir.diff",
    },
)
