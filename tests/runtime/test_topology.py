"""Topology normalization: stable text, state lines extracted."""

from __future__ import annotations

from qtt.runtime.topology import normalize, parse, state_lines

EXPLAIN = """== Physical Plan ==
*(4) HashAggregate(keys=[k#25], functions=[count(1)])
+- StateStoreSave [k#25], state info [ checkpoint = file:/tmp/x/state, runId = 6f55d2b7-14a0-4424-b3f9-a08423366501, opId = 0, ver = 3, numPartitions = 1] stateStoreCkptIds = None, Update, 0, 0, 2
   +- Exchange hashpartitioning(k#25, 1), REQUIRED_BY_STATEFUL_OPERATOR, [plan_id=54]
"""


def test_noise_is_stripped() -> None:
    lines = normalize(EXPLAIN)
    text = "\n".join(lines)
    for noise in ("#25", "6f55d2b7", "/tmp/x", "plan_id", "ver = 3"):
        assert noise not in text
    assert lines == normalize(EXPLAIN.replace("#25", "#99").replace("ver = 3", "ver = 7"))


def test_state_lines_keep_operator_and_id() -> None:
    assert state_lines(normalize(EXPLAIN)) == ["StateStoreSave opId=0"]


def test_parse_reads_sections() -> None:
    text = "# header\nquery Q\n  state\n    (none)\n  plan\n    *(1) Project [a]\n"
    parsed = parse(text)
    assert parsed["Q"].state == [] and parsed["Q"].plan == ["*(1) Project [a]"]


def test_lambda_variable_counters_are_stripped_even_in_old_recordings() -> None:
    line = "lambdafunction(isnotnull(lambda x_11), lambda x_11, false)"
    assert normalize(line) == ["lambdafunction(isnotnull(lambda x), lambda x, false)"]
    recorded = parse(f"query Q\n  state\n    (none)\n  plan\n    {line}\n")
    assert recorded["Q"].plan == ["lambdafunction(isnotnull(lambda x), lambda x, false)"]
