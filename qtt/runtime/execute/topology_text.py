"""The ``topology`` file format: normalizing explain output, writing it, and reading it back.

A ``topology`` file has a header of ``#`` comments, then per query::

    query <queryId>
      state
        <stateful operator> opId=<n>      (or "(none)")
      plan
        <normalized physical plan line>

``state`` lines decide whether a running query can restore its state, so a historical
replay must match them; ``plan`` lines may drift with Spark versions and are only reported.
Building and explaining the queries needs Spark (:mod:`qtt.runtime.execute.topology`); this module
does not, so the harness reads recorded files without a JVM.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from qtt.errors import PlanFileError

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

SECTIONS = ("state", "plan")
_NO_STATE = "(none)"

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
    # whole-stage code generation's stage ids (``*(3) Project``): how Spark compiles a plan, not
    # its shape; folders written with code generation on hold them, and compare without them
    (re.compile(r"\*\(\d+\) "), ""),
    # PySpark names lambda variables from a process-wide counter (x_11, y_12 ...)
    (re.compile(r"\b(lambda [A-Za-z]+)_\d+\b"), r"\1"),
    # Non-deterministic expressions print the random seed Spark drew for this build.
    (re.compile(r"\b(rand|randn|uuid|shuffle)\((?:Some\(-?\d+\)|-?\d+)\)"), r"\1(<seed>)"),
    (re.compile(r"\s+$"), ""),
]


def normalize_line(line: str) -> str:
    """One explain line without run-specific noise (ids, paths, counters)."""
    for pattern, replacement in _NOISE:
        line = pattern.sub(replacement, line)
    return line


def normalize(text: str) -> list[str]:
    """Explain output without run-specific noise, one line per plan node."""
    return [normalize_line(line) for line in text.splitlines() if line.strip() and not line.startswith("==")]


def state_lines(plan_lines: Iterable[str]) -> list[str]:
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
    """One query's part of a ``topology`` file."""

    query_id: str
    state: list[str] = field(default_factory=list)
    plan: list[str] = field(default_factory=list)


def render(queries: Iterable[QueryTopology]) -> str:
    """The ``topology`` file's text for ``queries``, in the given order."""
    parts = [HEADER]
    for topology in queries:
        parts.append(f"query {topology.query_id}\n")
        parts.append("  state\n")
        parts += [f"    {line}\n" for line in topology.state] or [f"    {_NO_STATE}\n"]
        parts.append("  plan\n")
        parts += [f"    {line}\n" for line in topology.plan]
    return "".join(parts)


def parse(text: str, *, file: str | None = None) -> dict[str, QueryTopology]:
    """Read a ``topology`` file back into its queries' state and plan lines.

    Raises:
        PlanFileError: a line is none of the above, naming ``file`` and the line.
    """
    queries: dict[str, QueryTopology] = {}
    current: QueryTopology | None = None
    section = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.startswith("#"):
            continue
        if raw.startswith("query ") and raw[6:].strip():
            current = QueryTopology(raw[6:].strip())
            queries[current.query_id] = current
            section = ""
        elif current is not None and raw.startswith("  ") and not raw.startswith("   ") and raw.strip() in SECTIONS:
            section = raw.strip()
        elif current is not None and section and raw.startswith("    "):
            # recordings made before a normalization rule existed get it applied here
            line = normalize_line(raw[4:])
            if section == "plan":
                current.plan.append(line)
            elif line != _NO_STATE:
                current.state.append(line)
        else:
            shown = raw if len(raw) <= 60 else raw[:57] + "..."
            expected = "a 'query <id>' line" if current is None else "'  state', '  plan' or a 4-space indented line"
            msg = f"cannot read topology: expected {expected}, got {shown!r}"
            raise PlanFileError(msg, file=file, line=number)
    return queries
