"""Plan shape: topics read and written, state, and query order, from the steps' role bases."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from qtt.errors import UnsupportedFeatureError
from qtt.plan.ir import codec
from qtt.plan.ir import steps as s
from qtt.plan.ir.shape import QueryShape, query_levels, query_order

TAGS = Path(__file__).parent / "fixtures" / "tags"


def _step(tag: str) -> Any:
    return codec.from_json(json.loads((TAGS / f"{tag}.json").read_text(encoding="utf-8")), s.ExecutionStep)


def _query(query_id: str, reads: str, writes: str, *, aggregate: bool = False) -> s.QueryPlan:
    sink = _step("streamSinkV1")
    source = replace(sink.source, topic=reads)
    upstream = replace(_step("streamAggregateV1"), source=source) if aggregate else source
    return s.QueryPlan(
        query_id=query_id, sources=(), sink=writes.upper(), physical_plan=replace(sink, source=upstream, topic=writes)
    )


def _plan(*queries: s.QueryPlan) -> s.Plan:
    return s.Plan(statements=tuple(s.KsqlPlanV1(statement_text=q.query_id, query_plan=q) for q in queries))


def test_a_stateless_query_reads_its_sources_and_writes_its_sink() -> None:
    shape = QueryShape.of(_query("CSAS_A_0", "in", "a"))
    assert shape == QueryShape("CSAS_A_0", frozenset({"in"}), "a", ())
    assert not shape.stateful


def test_an_aggregate_makes_the_query_stateful() -> None:
    shape = QueryShape.of(_query("CTAS_A_0", "in", "a", aggregate=True))
    assert shape.stateful
    assert [type(step).type_tag for step in shape.stateful_steps] == ["streamAggregateV1"]


def test_a_plan_without_a_sink_has_no_sink_topic() -> None:
    query = s.QueryPlan(query_id="Q", sources=(), sink="X", physical_plan=_step("streamSourceV1"))
    assert QueryShape.of(query).sink_topic is None


def test_queries_run_after_the_queries_they_read_from() -> None:
    second = _query("CSAS_B_1", "a", "b")
    first = _query("CSAS_A_0", "in", "a")
    alone = _query("CSAS_C_2", "in", "c")
    order = query_order(_plan(second, alone, first))
    assert [query.query_id for query, _ in order] == ["CSAS_C_2", "CSAS_A_0", "CSAS_B_1"]
    assert [shape.query_id for _, shape in order] == ["CSAS_C_2", "CSAS_A_0", "CSAS_B_1"]


def test_queries_that_read_each_other_are_a_named_cycle() -> None:
    with pytest.raises(UnsupportedFeatureError, match=r"cycle \(CSAS_A_0, CSAS_B_1\)"):
        query_order(_plan(_query("CSAS_A_0", "b", "a"), _query("CSAS_B_1", "a", "b")))


def _ids(levels: list[list[tuple[s.QueryPlan, QueryShape]]]) -> list[list[str]]:
    return [[query.query_id for query, _ in level] for level in levels]


def test_queries_that_read_only_inputs_share_the_first_level() -> None:
    levels = query_levels(_plan(*(_query(f"CSAS_{n}_{i}", "in", n.lower()) for i, n in enumerate("ABC"))))
    assert _ids(levels) == [["CSAS_A_0", "CSAS_B_1", "CSAS_C_2"]]


def test_a_query_runs_a_level_after_the_queries_whose_topics_it_reads() -> None:
    first = _query("CSAS_A_0", "in", "a")
    second = _query("CSAS_B_1", "a", "b")
    third = _query("CSAS_C_2", "b", "c")
    assert _ids(query_levels(_plan(first, second, third))) == [["CSAS_A_0"], ["CSAS_B_1"], ["CSAS_C_2"]]


def test_levels_never_reorder_the_queries() -> None:
    # CSAS_C_2 reads only the input, but comes after CSAS_B_1 in query order: running it a level
    # earlier would hand on its records before CSAS_B_1's, and a topic both wrote would number
    # its offsets differently.
    first = _query("CSAS_A_0", "in", "a")
    second = _query("CSAS_B_1", "a", "t")
    third = _query("CSAS_C_2", "in", "t")
    levels = query_levels(_plan(first, second, third))
    assert _ids(levels) == [["CSAS_A_0"], ["CSAS_B_1", "CSAS_C_2"]]
    assert [query for level in levels for query in level] == query_order(_plan(first, second, third))


def test_a_plan_without_queries_has_no_levels() -> None:
    assert query_levels(_plan()) == []
