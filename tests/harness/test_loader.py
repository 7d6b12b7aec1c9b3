"""The case-file loader: strict structure, located errors, annotations, format/config expansion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.errors import CaseFileError
from qtt.harness.cases.loader import discover, json_lines, load_file, load_text
from qtt.harness.cases.model import ExpectedLogEntry

FIXTURES = Path(__file__).parent / "fixtures" / "loader"


def load(name: str):
    return load_file(FIXTURES / name, display=name)


def error_for(name: str, case: str) -> CaseFileError:
    loaded = load(name)
    matches = [e for e in loaded.errors if e.case == case]
    assert len(matches) == 1, [str(e) for e in loaded.errors]
    return matches[0]


def test_a_malformed_case_does_not_stop_the_others():
    loaded = load("broken_cases.json")
    assert [v.case for v in loaded.variants] == ["good before", "good after"]
    assert {e.case for e in loaded.errors} == {
        "typo in a field name",
        "wrong type",
        "unknown record field",
        "tests nothing",
        "log entry out of range",
        "log entry with an unknown key",
    }


def test_unknown_field_names_file_case_path_and_line():
    error = error_for("broken_cases.json", "typo in a field name")
    assert error.file == "broken_cases.json"
    assert error.path == "$.tests[1].ouputs"
    assert error.line == 13
    assert "unknown field(s) 'ouputs'" in str(error)
    assert str(error).startswith("broken_cases.json: case 'typo in a field name': $.tests[1].ouputs: line 13:")


@pytest.mark.parametrize(
    ("case", "typo", "meant"),
    [
        ({"ouputs": []}, "ouputs", "outputs"),
        ({"inputs": [{"topic": "t", "value": 1, "timestmap": 3}]}, "timestmap", "timestamp"),
        ({"post": {"sources": [{"name": "S", "keyFromat": "JSON"}]}}, "keyFromat", "keyFormat"),
        ({"expectedException": {"mesage": "x"}}, "mesage", "message"),
    ],
)
def test_an_unknown_field_suggests_the_closest_field_of_its_object(case, typo, meant):
    raw = {"name": "c", "statements": ["CREATE STREAM S (A INT) WITH (kafka_topic='t');"], "outputs": [], **case}
    raw.setdefault("inputs", [{"topic": "t", "value": 1}])
    [error] = load_text(json.dumps({"tests": [raw]}), file="f.json").errors
    assert f"unknown field(s) '{typo}' Did you mean '{meant}'?" in error.message


def test_an_unknown_field_far_from_every_field_suggests_nothing():
    raw = {"name": "c", "statements": ["x"], "inputs": [{"topic": "t", "value": 1}], "zzzzzz": 1}
    [error] = load_text(json.dumps({"tests": [raw]}), file="f.json").errors
    assert error.message == "unknown field(s) 'zzzzzz'"


def test_wrong_type_points_at_the_value():
    error = error_for("broken_cases.json", "wrong type")
    assert error.path == "$.tests[2].inputs[1].timestamp"
    assert error.line == 21
    assert "expected int" in error.message
    assert "'soon'" in error.message


def test_unknown_field_inside_a_record():
    error = error_for("broken_cases.json", "unknown record field")
    assert error.path == "$.tests[3].inputs[0].partition"
    assert error.line == 28


def test_a_case_that_tests_nothing_is_rejected():
    error = error_for("broken_cases.json", "tests nothing")
    assert error.path == "$.tests[4]"
    assert "tests nothing" in error.message


def test_processing_log_entries_are_checked_strictly():
    out_of_range = error_for("broken_cases.json", "log entry out of range")
    assert out_of_range.path == "$.tests[5].qttProcessingLog[0].input"
    assert "got 1" in out_of_range.message
    unknown = error_for("broken_cases.json", "log entry with an unknown key")
    assert unknown.path == "$.tests[6].qttProcessingLog[0].query"


def test_annotations_are_accepted_at_every_structural_level():
    loaded = load("annotated.json")
    assert loaded.errors == ()
    (variant,) = loaded.variants
    # inside record data a "comment" key is data, not an annotation
    assert variant.inputs[0].value == {
        "v": 1,
        "comment": "inside record data this is a field, not an annotation",
    }
    assert variant.outputs[0].timestamp == 0
    assert variant.qtt_processing_log == (ExpectedLogEntry(input=0, message=""),)


def test_format_and_config_expand_into_variants():
    variants = [v for v in load("expansion.json").variants if v.case == "formats and configs"]
    assert [v.variant for v in variants] == ["JSON-a", "JSON-b", "DELIMITED-a", "DELIMITED-b"]
    delimited_b = variants[3]
    assert delimited_b.label == "formats and configs [DELIMITED-b]"
    assert "value_format='DELIMITED'" in delimited_b.statements[0]
    assert dict(delimited_b.properties) == {"some.property": "b", "fixed": 3}
    # ksqlDB's TestCaseBuilder replaces {FORMAT} in the statements only
    assert delimited_b.topics[0].value_format == "{FORMAT}"
    # record data is never substituted
    assert delimited_b.inputs[0].value == "{FORMAT} stays as data"


def test_a_case_without_format_or_config_is_one_plain_variant():
    (plain,) = [v for v in load("expansion.json").variants if v.case == "plain"]
    assert plain.variant == ""
    assert plain.label == "plain"
    assert plain.outputs == ()
    assert plain.inputs[0].qtt_batch is True
    assert plain.qtt_processing_log is None


def test_invalid_json_gives_line_and_column():
    with pytest.raises(CaseFileError) as info:
        load("invalid.json")
    assert info.value.file == "invalid.json"
    assert (info.value.line, info.value.column) == (4, 26)
    assert "not valid JSON" in str(info.value)


def test_unknown_top_level_field_fails_the_file():
    with pytest.raises(CaseFileError) as info:
        load("top_level_typo.json")
    assert "unknown top-level field(s) 'test'" in str(info.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[]", "expected a JSON object with a 'tests' array"),
        ('{"tests": {}}', "'tests' must be an array"),
        ('{"tests": [3]}', None),
    ],
)
def test_file_shapes(text, expected):
    if expected is None:
        loaded = load_text(text, file="f.json")
        assert "a case must be an object" in str(loaded.errors[0])
        return
    with pytest.raises(CaseFileError, match=expected):
        load_text(text, file="f.json")


def test_json_lines_maps_paths_to_lines():
    text = '{\n  "a": [1,\n    {"b": "x\\"y"}],\n  "c": null\n}\n'
    lines = json_lines(text)
    assert lines["$"] == 1
    assert lines["$.a"] == 2
    assert lines["$.a[1].b"] == 3
    assert lines["$.c"] == 4


def test_discover_finds_json_files_recursively(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.json").write_text("{}")
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    assert [p.name for p in discover([tmp_path])] == ["a.json", "b.json"]
    with pytest.raises(CaseFileError, match="no such file"):
        discover([tmp_path / "missing"])


def test_the_projects_own_cases_load_cleanly():
    for path in discover([Path(__file__).parents[2] / "cases"]):
        assert load_file(path).errors == ()


def test_an_invalid_blacklist_regex_fails_its_case_when_it_loads():
    case = {
        "name": "bad regex",
        "statements": ["CREATE STREAM s (k INT KEY) WITH (kafka_topic='t', value_format='JSON');"],
        "inputs": [{"topic": "t", "key": 1, "value": {}}],
        "post": {"topics": {"blacklist": "abc(["}},
    }
    text = json.dumps({"tests": [case]}, indent=2)
    loaded = load_text(text, file="c.json")
    [error] = loaded.errors
    assert (error.file, error.case, error.path) == ("c.json", "bad regex", "$.tests[0].post.topics.blacklist")
    assert error.line == next(i for i, line in enumerate(text.splitlines(), 1) if "blacklist" in line)
    assert "must be a regular expression" in error.message


def test_an_integer_of_more_than_4300_digits_is_a_located_error():
    text = '{"tests": [\n  {"name": "n", "inputs": [{"topic": "t", "value": ' + "1" * 5000 + "}]}]}"
    with pytest.raises(CaseFileError, match="an integer of 5,000 digits") as info:
        load_text(text, file="c.json")
    assert (info.value.file, info.value.line, info.value.column) == ("c.json", 2, 52)
    assert len(info.value.message) < 200


def test_each_expected_output_knows_its_line_in_the_case_file_in_every_variant():
    case = {
        "name": "c",
        "format": ["JSON", "AVRO"],
        "statements": ["CREATE STREAM S (A INT) WITH (kafka_topic='t', value_format='{FORMAT}');"],
        "inputs": [{"topic": "t", "value": {"A": 1}}],
        "outputs": [{"topic": "O", "value": {"A": 1}}, {"topic": "P", "value": {"A": 1}}],
    }
    # each expected record on a line of its own, as case files write them
    text = json.dumps({"tests": [case]}, indent=2)
    for record in case["outputs"]:
        text = text.replace(json.dumps(record, indent=2).replace("\n", "\n        "), json.dumps(record))
    lines = text.splitlines()
    where = [lines.index(line) + 1 for line in lines if '"topic": "O"' in line or '"topic": "P"' in line]
    assert len(where) == 2, text
    variants = load_text(text, file="f.json").variants
    assert [v.variant for v in variants] == ["JSON", "AVRO"]
    assert all([r.line for r in v.outputs] == where for v in variants)
    # the line is no part of the record: not compared, and not a field a case file may write
    from qtt.harness.cases.model import Record

    assert variants[0].outputs[0] == Record(topic="O", value={"A": 1}) and Record(topic="O", value=1).line is None
    case["outputs"] = [{"topic": "O", "value": {"A": 1}, "line": 3}]
    [error] = load_text(json.dumps({"tests": [case]}), file="f.json").errors
    assert error.message == "unknown field(s) 'line'"


def test_a_setting_its_type_cannot_read_makes_an_invalid_test():
    # ksqlDB's TestCaseBuilder reads the properties as a KsqlConfig: a ConfigException there
    # makes the test invalid, so no expectedException can match it
    text = json.dumps(
        {
            "tests": [
                {
                    "name": "bad flag",
                    "properties": {"ksql.suppress.enabled": "{CONFIG}"},
                    "config": ["true", "maybe"],
                    "statements": ["CREATE STREAM s (id INT KEY, v INT) WITH (kafka_topic='s', value_format='JSON');"],
                    "expectedException": {"type": "org.apache.kafka.common.config.ConfigException"},
                }
            ]
        },
        indent=2,
    )
    loaded = load_text(text, file="settings.json")
    assert loaded.variants == ()
    (error,) = loaded.errors
    assert error.case == "bad flag"
    assert error.path == "$.tests[0].properties"
    assert error.line is not None
    assert error.message == (
        "Invalid test. Invalid value maybe for configuration ksql.suppress.enabled: "
        "Expected value to be either true or false"
    )


@pytest.mark.parametrize(
    ("written", "read"),
    [("1500", 1500), ("+7", 7), (2500.9, 2500), (-0.5, 0), (12, 12), (None, None)],
)
def test_a_timestamp_is_read_as_jacksons_long(written, read):
    # ksqlDB's RecordNode reads it with readValueAs(Long.class): text is parsed, a fraction truncated
    case = {"name": "c", "statements": ["s"], "inputs": [{"topic": "t", "value": 1, "timestamp": written}]}
    loaded = load_text(json.dumps({"tests": [case]}), file="f.json")
    assert loaded.variants[0].inputs[0].timestamp == read


@pytest.mark.parametrize("written", ["soon", "1E3", True])
def test_a_timestamp_jackson_cannot_read_as_a_long_is_refused(written):
    case = {"name": "c", "statements": ["s"], "inputs": [{"topic": "t", "value": 1, "timestamp": written}]}
    (error,) = load_text(json.dumps({"tests": [case]}), file="f.json").errors
    assert error.path == "$.tests[0].inputs[0].timestamp"


@pytest.mark.parametrize(
    ("thrown", "missing"),
    [
        ({}, "expectedException.type or expectedException.message"),
        ({"cause": "java.lang.ArithmeticException"}, "expectedException.type or expectedException.message"),
        ({"type": "io.confluent.ksql.util.KsqlException", "causeMessage": "x"}, "expectedException.cause"),
    ],
)
def test_an_expected_exception_ksqldb_refuses_is_a_load_error(thrown, missing):
    # ksqlDB's ExpectedExceptionNode: a type or a message, and a causeMessage only with a cause
    case = {"name": "c", "statements": ["s"], "expectedException": thrown}
    (error,) = load_text(json.dumps({"tests": [case]}), file="f.json").errors
    assert (error.message, error.path) == (f"test must define '{missing}' field", "$.tests[0].expectedException")


@pytest.mark.parametrize(
    ("source", "message", "path"),
    [
        ({"name": "S"}, "test must define 'type' field", "$.tests[0].post.sources[0]"),
        ({"name": "S", "type": "view"}, "type: must be either STREAM or TABLE", "$.tests[0].post.sources[0].type"),
    ],
)
def test_a_post_source_needs_a_stream_or_table_type(source, message, path):
    # ksqlDB's SourceNode reads "type" as a required field, STREAM or TABLE in any case
    case = {"name": "c", "statements": ["s"], "outputs": [{"topic": "t", "value": 1}], "post": {"sources": [source]}}
    (error,) = load_text(json.dumps({"tests": [case]}), file="f.json").errors
    assert (error.message, error.path) == (message, path)
    case["post"] = {"sources": [{"name": "S", "type": "Table"}]}
    assert not load_text(json.dumps({"tests": [case]}), file="f.json").errors


def test_a_record_with_an_empty_topic_is_refused():
    case = {"name": "c", "statements": ["s"], "inputs": [{"topic": "", "value": 1}]}
    (error,) = load_text(json.dumps({"tests": [case]}), file="f.json").errors
    assert (error.message, error.path) == ("test must define 'topic' field", "$.tests[0].inputs[0].topic")


@pytest.mark.parametrize("topic", [" t", "t ", "\tt"])
def test_a_record_topic_with_surrounding_whitespace_is_refused_in_ksqldbs_words(topic):
    case = {"name": "c", "statements": ["s"], "outputs": [{"topic": topic, "value": 1}]}
    (error,) = load_text(json.dumps({"tests": [case]}), file="f.json").errors
    message = f"Record topic names must not start or end with whitespace: '{topic}'"
    assert (error.message, error.path) == (message, "$.tests[0].outputs[0].topic")


def _expanded(**case):
    base = {
        "name": "c",
        "statements": ["CREATE STREAM s (a INT) WITH (kafka_topic='{CONFIG}', value_format='{FORMAT}');"],
    }
    base["inputs"] = [{"topic": "t", "value": 1}]
    return load_text(json.dumps({"tests": [{**base, **case}]}), file="f.json")


def test_a_config_value_replaces_only_the_property_whose_value_is_config():
    # ksqlDB's TestCaseBuilder: the one property equal to {CONFIG} in any case, never statements
    loaded = _expanded(config=["x"], format=["JSON"], properties={"a": "{config}", "b": "p-{CONFIG}", "c": "{FORMAT}"})
    (variant,) = loaded.variants
    assert dict(variant.properties) == {"a": "x", "b": "p-{CONFIG}", "c": "{FORMAT}"}
    assert variant.statements == ("CREATE STREAM s (a INT) WITH (kafka_topic='{CONFIG}', value_format='JSON');",)


def test_format_without_a_format_list_becomes_ksqldbs_words():
    (variant,) = _expanded().variants
    assert (
        "value_format='To use {FORMAT} in your statements please set the 'format' test case element'"
        in (variant.statements[0])
    )


@pytest.mark.parametrize(
    ("properties", "why"),
    [
        ({"a": "1"}, "null"),
        ({"a": "{CONFIG}", "b": "{config}"}, "expected one element but was: <a={CONFIG}, b={config}>"),
    ],
)
def test_a_config_list_needs_exactly_one_config_property(properties, why):
    (error,) = _expanded(config=["x"], properties=properties).errors
    assert error.message.startswith(f"Invalid test 'c': {why} (")
    assert error.path == "$.tests[0].properties"
