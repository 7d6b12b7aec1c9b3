"""``topology``: the normalized description of the Spark queries a plan builds.

Each query is built on an empty replay source (so nothing about a particular replay, such as
how replays were grouped, leaks in) and its physical plan is explained. Expression ids, plan
ids, run ids and paths are stripped, so the text is identical across runs and machines.

The text has two parts per query. ``state`` lists the stateful operators in plan order, with
their operator ids (and, once known, their state schemas): these decide whether a running
query can restore its state, so a historical replay must match them exactly. ``plan`` is
the rest of the physical plan: a difference there (a Spark upgrade renaming a node, say) is
reported as drift and does not fail anything. The file format itself is in
:mod:`qtt.runtime.execute.topology_text`.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

import qtt.runtime.operators.registered  # noqa: F401 (the stateful steps' builders register themselves)
from qtt.hashable import hashable
from qtt.plan.ir.steps import Plan, QueryPlan
from qtt.runtime.build.builder import PlanBuilder
from qtt.runtime.execute.topology_text import QueryTopology, normalize, render, state_lines
from qtt.runtime.jobs import FORMAT_NAME, encode_options
from qtt.runtime.spark.jvm_functions import per_session
from qtt.runtime.spark.session import is_connect

#: query descriptions kept for reuse
QUERIES_KEPT = 1024


def _explain(df: DataFrame) -> str:
    if is_connect(df):
        return str(df._explain_string(mode="simple"))  # type: ignore[operator]  # a connect DataFrame method
    jvm = df.sparkSession._jvm
    assert jvm is not None, "explain needs a classic (JVM) session"
    return str(jvm.PythonSQLUtils.explainString(df._jdf.queryExecution(), "simple"))


def describe_query(session: SparkSession, query: QueryPlan) -> QueryTopology:
    """Build ``query`` on an empty replay source and explain it, normalized.

    A query's description depends on nothing but the query and the runtime, so equal queries
    (historical folders often repeat one: a later release stored a checkpoint next to the same
    plan) are described once per Spark.
    """
    known = _described(session, query)
    return QueryTopology(known.query_id, list(known.state), list(known.plan))


@per_session(maxsize=QUERIES_KEPT, key=lambda session, query: (session, hashable(query)))
def _described(session: SparkSession, query: QueryPlan) -> QueryTopology:
    raw = session.readStream.format(FORMAT_NAME).options(**encode_options([], [])).load()
    builder = PlanBuilder(raw, query.query_id)
    builder.build(query.physical_plan)
    assert builder.sink is not None
    lines = normalize(_explain(builder.sink.df))
    return QueryTopology(query.query_id, state_lines(lines), lines)


def describe(session: SparkSession, plan: Plan) -> str:
    """The ``topology`` file's text for ``plan``, built with today's runtime."""
    return render(describe_query(session, query) for query in plan.queries())
