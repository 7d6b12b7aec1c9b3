"""ksqlDB's ``streamFlatMapV1``: the table functions of a SELECT (``EXPLODE(ARR)``).

Each call's results become the value column ``KSQL_SYNTH_<i>`` beside the source's columns,
as ksqlDB's flat map names them and as qtt's planner plans them; the projection after it reads
them by those names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from qtt.plan.analysis.analyzer import Analyzer
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import VALUE, Column, LogicalSchema
from qtt.plan.ksqldb.context import StepContext, Translated, Untranslatable, query_context, translates
from qtt.plan.ksqldb.expressions import parsed, scope_of
from qtt.plan.planner.table_functions import SYNTH_PREFIX, resolve_call
from qtt.sql import ast


@translates("streamFlatMapV1")
def stream_flat_map_v1(context: StepContext, raw: Mapping[str, Any], sources: list[Translated]) -> Translated:
    (source,) = sources
    analyzer = Analyzer(scope_of(source.columns()), "SELECT")
    calls = []
    for index, text in enumerate(raw["tableFunctions"]):
        node = parsed(text)
        if not isinstance(node, ast.FunctionCall):
            raise Untranslatable(raw["@type"], f"a table function that is not a call: {text}")
        calls.append(s.SelectExpression(alias=f"{SYNTH_PREFIX}{index}", expression=resolve_call(node, analyzer)))
    step = s.StreamFlatMapV1(context=query_context(raw), source=source.step, table_functions=tuple(calls))
    synthesised = tuple(Column(c.alias, c.expression.result_type, VALUE) for c in calls)
    schema = LogicalSchema(source.schema.columns + synthesised)
    return dataclasses.replace(source, step=step, schema=schema)
