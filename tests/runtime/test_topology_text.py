"""Topology normalization: stable text, state lines extracted."""

from __future__ import annotations

import pytest

from qtt.errors import PlanFileError
from qtt.runtime.execute.topology_text import QueryTopology, normalize, normalize_line, parse, render, state_lines

EXPLAIN = (
    "== Physical Plan ==\n"
    "*(4) HashAggregate(keys=[k#25], functions=[count(1)])\n"
    "+- StateStoreSave [k#25], state info [ checkpoint = file:/tmp/x/state, runId = 6f55d2b7-14"
    "a0-4424-b3f9-a08423366501, opId = 0, ver = 3, numPartitions = 1] stateStoreCkptIds = None,"
    " Update, 0, 0, 2\n"
    "   +- Exchange hashpartitioning(k#25, 1), REQUIRED_BY_STATEFUL_OPERATOR, [plan_id=54]\n"
)


def test_noise_is_stripped() -> None:
    lines = normalize(EXPLAIN)
    text = "\n".join(lines)
    for noise in ("#25", "6f55d2b7", "/tmp/x", "plan_id", "ver = 3"):
        assert noise not in text
    assert lines == normalize(EXPLAIN.replace("#25", "#99").replace("ver = 3", "ver = 7"))


def test_whole_stage_code_generation_stage_ids_are_noise() -> None:
    generated = normalize(EXPLAIN)
    interpreted = normalize(EXPLAIN.replace("*(4) ", ""))
    assert generated == interpreted == normalize("\n".join(generated))
    assert generated[0].startswith("HashAggregate(keys=[k]")


def test_a_recorded_plan_with_stage_ids_reads_as_one_without() -> None:
    recorded = parse("query Q\n  state\n    (none)\n  plan\n    *(4) HashAggregate(keys=[k])\n")
    assert recorded["Q"].plan == normalize("HashAggregate(keys=[k#7])")


def test_state_lines_keep_operator_and_id() -> None:
    assert state_lines(normalize(EXPLAIN)) == ["StateStoreSave opId=0"]


def test_parse_reads_sections() -> None:
    text = "# header\nquery Q\n  state\n    (none)\n  plan\n    *(1) Project [a]\n"
    parsed = parse(text)
    assert parsed["Q"].state == [] and parsed["Q"].plan == ["Project [a]"]


def test_lambda_variable_counters_are_stripped_even_in_old_recordings() -> None:
    line = "lambdafunction(isnotnull(lambda x_11), lambda x_11, false)"
    assert normalize(line) == ["lambdafunction(isnotnull(lambda x), lambda x, false)"]
    recorded = parse(f"query Q\n  state\n    (none)\n  plan\n    {line}\n")
    assert recorded["Q"].plan == ["lambdafunction(isnotnull(lambda x), lambda x, false)"]


def test_render_writes_what_parse_reads() -> None:
    text = "# header\nquery Q\n  state\n    StateStoreSave opId=0\n  plan\n    *(1) Project [a]\n"
    assert parse(render(parse(text).values())) == parse(text)
    assert "    (none)\n" in render([QueryTopology("Q")])


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("    a plan line before any query\n", 1),
        ("query Q\n  state\n  sideways\n", 3),
        ("query Q\n    a line before any section\n", 2),
        ("query Q\n\x00\x01 binary\n", 2),
    ],
)
def test_a_corrupt_topology_names_its_file_and_line(text: str, line: int) -> None:
    with pytest.raises(PlanFileError) as info:
        parse(text, file="historical_plans/x/0.1.0_1700000000000/topology")
    assert info.value.file == "historical_plans/x/0.1.0_1700000000000/topology"
    assert info.value.line == line
    assert str(info.value).startswith(
        f"historical_plans/x/0.1.0_1700000000000/topology: line {line}: cannot read topology"
    )


def test_random_seeds_are_noise() -> None:
    built_once = "Project [length(uuid(Some(8829175488615944906))) AS U, isnan(rand(-61189)) AS R, rand(7) AS S]"
    built_again = "Project [length(uuid(Some(-5560619728919845504))) AS U, isnan(rand(42)) AS R, rand(-3) AS S]"
    assert normalize_line(built_once) == normalize_line(built_again)
    assert "isnan(rand(<seed>)) AS R" in normalize_line(built_once)
