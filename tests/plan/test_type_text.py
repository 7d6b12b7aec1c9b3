"""The plan's own type and schema reader: the written form, and never the SQL grammar."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from qtt import sqltypes as t
from qtt.plan.ir.schema import HEADER, Column, LogicalSchema
from qtt.plan.ir.type_text import read_type

ROOT = Path(__file__).parents[2]
PLAN_FILES = sorted(ROOT.glob("historical_plans/*/*/plan.json")) + sorted(ROOT.glob("tests/plan/fixtures/tags/*.json"))
TYPE_KEYS = {"sqlType", "returnType", "stateType"}
SCHEMA_KEYS = {"sourceSchema", "schema"}


def _strings(value: object, keys: set[str], key: str | None = None) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(_strings(v, keys, k) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(*(_strings(v, keys, key) for v in value))
    return {value} if isinstance(value, str) and key in keys else set()


def _persisted(keys: set[str]) -> list[str]:
    found: set[str] = set()
    for path in PLAN_FILES:
        found |= _strings(json.loads(path.read_text(encoding="utf-8")), keys)
    return sorted(found)


def test_every_persisted_type_reads_back_to_its_text() -> None:
    texts = _persisted(TYPE_KEYS)
    assert len(texts) > 20
    for text in texts:
        assert str(read_type(text)) == text


def test_every_persisted_schema_reads_back_to_its_text() -> None:
    texts = _persisted(SCHEMA_KEYS)
    assert len(texts) > 50
    for text in texts:
        assert str(LogicalSchema.parse(text)) == text


@pytest.mark.parametrize(
    "sql_type",
    [
        t.Struct(()),
        t.Struct((t.Field("a`b", t.Map(t.STRING, t.Decimal(10, 2))), t.Field("KEY", t.Array(t.TIME)))),
        t.Map(t.Array(t.BYTES), t.Struct((t.Field("X", t.TIMESTAMP),))),
    ],
    ids=str,
)
def test_nested_and_quoted_types_round_trip(sql_type: t.SqlType) -> None:
    assert read_type(str(sql_type)) == sql_type


def test_header_keys_with_quotes_round_trip() -> None:
    schema = LogicalSchema((Column("H", t.BYTES, HEADER, "it's"),))
    assert str(schema) == "`H` BYTES HEADER('it''s')"
    assert LogicalSchema.parse(str(schema)) == schema


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("INT", "unexpected text at column 1"),  # an SQL alias, never written by the codec
        ("ARRAY<STRING", "the text ends early; expected one of: '>'"),
        ("MAP<STRING INTEGER>", "unexpected 'INTEGER' at column 12; expected one of: ',', '>'"),
        ("STRUCT<A INTEGER>", "unexpected text at column 8"),
    ],
)
def test_text_outside_the_written_form_is_refused_with_its_column(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match="^" + problem.replace("(", r"\(").replace("'", "'")):
        read_type(text)


def test_loading_plans_never_imports_the_sql_grammar(modules_loaded_by: Callable[..., set[str]]) -> None:
    # A fresh interpreter: an earlier test in this process may have imported qtt.sql already.
    plan = next(p for p in PLAN_FILES if "historical_plans" in p.parts)
    loaded = modules_loaded_by("qtt.plan.ir.codec", f"loaded.loads(open({str(plan)!r}, encoding='utf-8').read())")
    grammar = sorted(m for m in loaded if m.split(".")[:2] == ["qtt", "sql"])
    assert not grammar, f"loading a plan imported the SQL grammar: {grammar}"
