"""``topology``: the normalized description of the Spark queries a plan builds.

Each query is built on an empty replay source (so nothing about a particular replay, such as
how replays were grouped, leaks in) and its physical plan is explained. Expression ids, plan
ids, run ids and paths are stripped, so the text is identical across runs and machines.

The text has two parts per query. ``state`` lists the stateful operators in plan order, with
their operator ids (and, once known, their state schemas): these decide whether a running
query can restore its state, so a historical replay must match them exactly. ``plan`` is
the rest of the physical plan: a difference there (a Spark upgrade renaming a node, say) is
reported as drift and does not fail anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

from qtt.plan.steps import Plan, QueryPlan
from qtt.runtime.builder import PlanBuilder
from qtt.runtime.replay_source import FORMAT_NAME, encode_options

HEADER = (
    "# qtt topology v1: the normalized Spark physical plan of each query of this plan.\n"
    "# 'state' lines decide state compatibility and must match on replay;\n"
    "# 'plan' lines may drift with Spark versions and are only reported.\n"
)

STATEFUL_OPERATORS = (
    "StateStoreSave",
    "StateStoreRestore",
    "SessionWindowStateStoreSave",
    "SessionWindowStateStoreRestore",
    "StreamingDeduplicate",
    "StreamingSymmetricHashJoin",
    "FlatMapGroupsWithState",
    "TransformWithState",
    "TransformWithStateInPandas",
    "TransformWithStateInPySpark",
    "StreamingGlobalLimit",
)

_NOISE = [
    (re.compile(r"#\d+L?"), ""),
    (re.compile(r"\[plan_id=\d+\]"), ""),
    (re.compile(r"runId = [0-9a-f-]{36}"), "runId = *"),
    (re.compile(r"checkpoint = [^,\]]*"), "checkpoint = *"),
    (re.compile(r"ver = \d+"), "ver = *"),
    (re.compile(r"stateStoreCkptIds = [^,]*"), "stateStoreCkptIds = *"),
    (re.compile(r"(file|hdfs|s3a?|gs|abfss?):/[^\s,\]]*"), "<path>"),
    (re.compile(r"-?9223372036854775808"), "<min>"),
    (re.compile(r"pythonUDF\d+"), "pythonUDF"),
    # PySpark names lambda variables from a process-wide counter (x_11, y_12 ...)
    (re.compile(r"\b(lambda [A-Za-z]+)_\d+\b"), r"\1"),
    (re.compile(r"\s+$"), ""),
]


def normalize_line(line: str) -> str:
    for pattern, replacement in _NOISE:
        line = pattern.sub(replacement, line)
    return line


def normalize(text: str) -> list[str]:
    """Explain output without run-specific noise, one line per plan node."""
    return [normalize_line(line) for line in text.splitlines() if line.strip() and not line.startswith("==")]


def _explain(df: DataFrame) -> str:
    jvm = df.sparkSession._jvm
    assert jvm is not None, "explain needs a classic (JVM) session"
    return str(jvm.PythonSQLUtils.explainString(df._jdf.queryExecution(), "simple"))


def state_lines(plan_lines: list[str]) -> list[str]:
    """The stateful operators, in plan order, with their operator ids."""
    out = []
    for line in plan_lines:
        name = next((op for op in STATEFUL_OPERATORS if re.search(rf"\b{op}\b", line)), None)
        if name is None:
            continue
        op_id = re.search(r"opId = (\d+)", line)
        out.append(f"{name} opId={op_id.group(1) if op_id else '?'}")
    return out


@dataclass
class QueryTopology:
    query_id: str
    state: list[str] = field(default_factory=list)
    plan: list[str] = field(default_factory=list)


def describe_query(session: SparkSession, query: QueryPlan) -> QueryTopology:
    raw = session.readStream.format(FORMAT_NAME).options(**encode_options([], [])).load()
    builder = PlanBuilder(raw, query.query_id)
    builder.build(query.physical_plan)
    assert builder.sink is not None
    lines = normalize(_explain(builder.sink.df))
    return QueryTopology(query.query_id, state_lines(lines), lines)


def describe(session: SparkSession, plan: Plan) -> str:
    """The ``topology`` file's text for ``plan``, built with today's runtime."""
    parts = [HEADER]
    for query in plan.queries():
        topology = describe_query(session, query)
        parts.append(f"query {query.query_id}\n")
        parts.append("  state\n")
        parts += [f"    {line}\n" for line in topology.state] or ["    (none)\n"]
        parts.append("  plan\n")
        parts += [f"    {line}\n" for line in topology.plan]
    return "".join(parts)


def parse(text: str) -> dict[str, QueryTopology]:
    """Read a ``topology`` file back into its queries' state and plan lines."""
    queries: dict[str, QueryTopology] = {}
    current: QueryTopology | None = None
    section = ""
    for raw in text.splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        if raw.startswith("query "):
            current = QueryTopology(raw.split(" ", 1)[1].strip())
            queries[current.query_id] = current
        elif (
            current is not None
            and raw.strip() in ("state", "plan")
            and raw.startswith("  ")
            and not raw.startswith("    ")
        ):
            section = raw.strip()
        elif current is not None and raw.startswith("    "):
            # recordings made before a normalization rule existed get it applied here
            line = normalize_line(raw[4:])
            if section == "state":
                if line != "(none)":
                    current.state.append(line)
            else:
                current.plan.append(line)
    return queries
