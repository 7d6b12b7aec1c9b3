"""Reproducers of escapes the fuzz suite found, kept as regression tests once fixed.

An escape found in code the fuzz suite does not own gets an ``xfail`` reproducer here and a
``KNOWN`` entry in :mod:`tests.fuzz.escapes` until its fix lands; then both marks go.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from qtt.errors import CaseFileError, StatementError
from qtt.harness.cases.loader import load_text
from qtt.harness.cases.model import CaseVariant
from qtt.harness.replay.driver import ReplayItem
from qtt.harness.replay.runner import plan_variant
from tests.fuzz.profiles import ROOT, production_stack

# A key with an escaped control character and a "[": _line_of never finds its path and never
# stops shortening it. Run apart, so that the loop cannot hang the test run.
S4 = """
from qtt.errors import QttError
from qtt.harness.cases.loader import load_text
try:
    load_text('{"tests": [{"name": "x", "statements": ["s"], "inputs": [], "\\\\u0001[": 1}]}', file="c.json")
except QttError:
    pass
"""


def test_s4_a_key_that_no_line_matches() -> None:
    try:
        subprocess.run([sys.executable, "-c", S4], cwd=ROOT, check=True, timeout=5)
    except subprocess.TimeoutExpired:
        pytest.fail("load_text did not return within 5 s")


# Issue 42, part 4: inputs that escaped as "internal error at <file>:<line>".


def _case(statement: str, *, inputs: str = '[{"topic": "t", "value": null}]', topics: str = "[]") -> CaseVariant:
    test = f'"name": "c", "statements": [{json.dumps(statement)}], "topics": {topics}, "inputs": {inputs}'
    text = f'{{"tests": [{{{test}}}]}}'
    loaded = load_text(text, file="c.json")
    assert not loaded.errors
    return loaded.variants[0]


@pytest.mark.parametrize("fmt", ["JSON", "JSON_SR", "AVRO", "PROTOBUF", "PROTOBUF_NOSR", "DELIMITED"])
def test_a_value_nested_1500_deep_is_written_on_the_large_stack(fmt: str) -> None:
    # below the case file's depth limit (5,000), so it loads; writing it out into a STRING
    # column recurses once per level, which the input encoding must do on deep_call's stack
    deep = "[" * 1500 + "1" + "]" * 1500
    create = f"CREATE STREAM s (id INT KEY, v STRING) WITH (kafka_topic='t', value_format='{fmt}');"
    variant = _case(create, inputs=f'[{{"topic": "t", "key": 1, "value": {{"V": {deep}}}}}]')
    planned = plan_variant(variant)
    with production_stack():
        item = ReplayItem.from_case(planned.plan, variant.inputs, where="$.tests[0].inputs", topics=variant.topics)
    (record,) = item.inputs
    assert record.value is not None and b"[" * 1500 + b"1" + b"]" * 1500 in record.value


def test_a_key_nested_1500_deep_that_does_not_fit_is_a_located_case_file_error() -> None:
    deep = "[" * 1500 + "]" * 1500
    variant = _case(
        "CREATE STREAM s (id INT KEY, v STRING) WITH (kafka_topic='t', key_format='KAFKA', value_format='JSON');",
        inputs=f'[{{"topic": "t", "key": {deep}, "value": {{"V": "x"}}}}]',
    )
    planned = plan_variant(variant)
    with production_stack(), pytest.raises(CaseFileError) as raised:
        ReplayItem.from_case(planned.plan, variant.inputs, where="$.tests[0].inputs", topics=variant.topics)
    assert raised.value.path == "$.tests[0].inputs[0].key"
    assert raised.value.message.startswith("cannot write key an array of 1 element(s) as KAFKA: ")


def test_an_avro_key_schema_without_fields_is_a_statement_error_at_its_create() -> None:
    topics = '[{"name": "t", "keyFormat": "AVRO", "keySchema": {"type": "record", "name": "K"}, "valueFormat": "JSON"}]'
    variant = _case(
        "CREATE STREAM s (v STRING) WITH (kafka_topic='t', key_format='AVRO', value_format='JSON');", topics=topics
    )
    with pytest.raises(StatementError) as raised:
        plan_variant(variant)
    error = raised.value
    assert (error.file, error.case, error.path) == ("c.json", "c", "$.tests[0].statements[0]")
    assert error.message == 'Invalid Avro key schema at $: an Avro record needs "fields", and this one has none'


def test_a_protobuf_schema_with_a_lone_surrogate_is_a_statement_error_at_its_create() -> None:
    # the case file's JSON spells a lone surrogate, which the loader keeps
    schema = json.dumps('syntax = "proto3"; message V { string n = 1; }').replace("n = 1", "n\\ud800 = 1")
    topics = f'[{{"name": "t", "valueFormat": "PROTOBUF", "valueSchema": {schema}}}]'
    variant = _case("CREATE STREAM s WITH (kafka_topic='t', value_format='PROTOBUF');", topics=topics)
    with pytest.raises(StatementError) as raised:
        plan_variant(variant)
    error = raised.value
    assert (error.file, error.path) == ("c.json", "$.tests[0].statements[0]")
    assert error.message.startswith(
        "Failed to parse Protobuf schema: the schema holds a lone surrogate \\ud800 at line 1:"
    )
