"""Output comparison with ksqlDB's rules, and the processing-log check."""

from __future__ import annotations

import decimal
from dataclasses import dataclass

import pytest

from qtt.harness.cases.model import ExpectedLogEntry, Header, Record, Window, at_line
from qtt.harness.replay.compare import UnknownField, check_processing_log, compare, unknown_fields
from qtt.harness.replay.driver import OutputRecord
from qtt.harness.replay.topic_serdes import TopicSerde
from qtt.plan.ddl.sql_schema import schema_from_sql
from qtt.plan.ir.steps import FormatInfo, Formats

D = decimal.Decimal
SCHEMA = "K INT KEY, I BIGINT, X DOUBLE, M DECIMAL(4, 2), A ARRAY<DOUBLE>"
SINKS = {
    "OUT": TopicSerde(
        "OUT",
        schema_from_sql(SCHEMA),
        Formats(key_format=FormatInfo(format="KAFKA"), value_format=FormatInfo(format="JSON")),
    ),
}


def expected(value, *, topic="OUT", key=1, timestamp=None):
    return Record(topic=topic, key=key, value=value, timestamp=timestamp)


def actual(value, *, topic="OUT", key=1, timestamp=0, seq=0):
    return OutputRecord(topic, key, value, timestamp, seq, "CSAS_OUT_0")


def run(wanted, got):
    by_topic: dict[str, list[OutputRecord]] = {}
    for record in got:
        by_topic.setdefault(record.topic, []).append(record)
    return compare(wanted, by_topic, SINKS)


@pytest.mark.parametrize(
    ("want", "got", "ok"),
    [
        ({"I": 10}, {"I": 10}, True),
        ({"I": 10}, {"I": 11}, False),
        ({"I": 9007199254740993}, {"I": 9007199254740992}, False),  # exact beyond double precision
        ({"X": 0.4}, {"X": 0.39999999999999997}, True),
        ({"X": 0.4}, {"X": 0.4000009}, True),
        ({"X": 0.4}, {"X": 0.400002}, False),
        ({"X": 3}, {"X": 3.0}, True),
        ({"X": float("nan")}, {"X": float("nan")}, True),
        ({"X": None}, {"X": 0.0}, False),
        ({"A": [1.0, 2.5]}, {"A": [1.0000001, 2.5]}, True),
        ({"M": D("1.30")}, {"M": D("1.3")}, True),
        ({"M": D("1.30")}, {"M": D("1.300001")}, False),  # decimals get no tolerance
        ({"M": D("1.30")}, {"M": 1.3}, True),
    ],
)
def test_numbers_follow_ksqldb_rules(want, got, ok):
    assert run([expected(want)], [actual(got)]).ok is ok


def test_keys_are_compared():
    assert not run([expected({"I": 1}, key=1)], [actual({"I": 1}, key=2)]).ok


def test_timestamps_are_compared_only_when_the_case_declares_them():
    assert run([expected({"I": 1})], [actual({"I": 1}, timestamp=99)]).ok
    assert run([expected({"I": 1}, timestamp=99)], [actual({"I": 1}, timestamp=99)]).ok
    assert not run([expected({"I": 1}, timestamp=98)], [actual({"I": 1}, timestamp=99)]).ok


def test_empty_outputs_assert_that_nothing_was_emitted():
    assert run([], []).ok
    result = run([], [actual({"I": 1}, topic="ELSEWHERE")])
    assert not result.ok
    assert result.diffs[0].topic == "ELSEWHERE"
    assert result.diffs[0].details == ["expected no output at all, but 1 record(s) went there"]


def test_order_matters_within_a_topic():
    wanted = [expected({"I": 1}), expected({"I": 2})]
    result = run(wanted, [actual({"I": 2}), actual({"I": 1})])
    assert not result.ok
    assert result.diffs[0].first_index == 0


def test_order_across_topics_does_not_matter():
    wanted = [expected({"I": 1}), expected({"I": 5}, topic="B"), expected({"I": 2})]
    got = [actual({"I": 5}, topic="B"), actual({"I": 1}), actual({"I": 2})]
    assert run(wanted, got).ok


def test_only_topics_named_by_the_expected_outputs_are_checked():
    got = [actual({"I": 1}), actual({"I": 7}, topic="UNMENTIONED")]
    assert run([expected({"I": 1})], got).ok


def test_missing_and_extra_records_are_reported_from_the_first_difference():
    missing = run([expected({"I": 1}), expected({"I": 2})], [actual({"I": 1})])
    assert missing.diffs[0].first_index == 1
    assert missing.diffs[0].details == ["record 1: missing"]
    extra = run([expected({"I": 1})], [actual({"I": 1}), actual({"I": 3})])
    assert extra.diffs[0].details == ["record 1: unexpected extra record"]
    assert extra.diffs[0].actual == [{"key": 1, "value": {"I": 3}}]


def test_a_topic_nobody_wrote_is_all_missing():
    result = run([expected({"I": 1}, topic="NEVER")], [])
    assert result.diffs[0].topic == "NEVER"
    assert result.diffs[0].actual == []


def test_the_diff_shows_only_the_fields_the_expected_record_declares():
    result = run([expected({"I": 1})], [actual({"I": 2}, timestamp=123)])
    diff = result.diffs[0]
    assert diff.expected == [{"key": 1, "value": {"I": 1}}]
    assert diff.actual == [{"key": 1, "value": {"I": 2}}]
    assert diff.details == ["record 0: ['value']['I']: expected 1, got 2"]
    timed = run([expected({"I": 1}, timestamp=5)], [actual({"I": 1}, timestamp=6)]).diffs[0]
    assert timed.actual == [{"key": 1, "value": {"I": 1}, "timestamp": 6}]


@dataclass
class Entry:
    seq: int
    message: str
    query_id: str = "CSAS_OUT_0"


def test_processing_log_matches_inputs_and_message_substrings():
    wanted = (
        ExpectedLogEntry(input=1, message="IntegerDeserializer"),
        ExpectedLogEntry(input=3, message=""),
    )
    got = [Entry(3, "anything"), Entry(1, "Size of data received by IntegerDeserializer is not 4")]
    assert check_processing_log(wanted, got) == []


def test_processing_log_reports_missing_unexpected_and_wrong_entries():
    wanted = (
        ExpectedLogEntry(input=1, message="field count"),
        ExpectedLogEntry(input=2, message="x"),
    )
    problems = check_processing_log(wanted, [Entry(1, "invalid JSON")])
    assert problems[0].startswith("entry 0: expected input #1 with a message containing 'field count', got input #1")
    assert problems[1].startswith("entry 1: missing")
    assert check_processing_log((), [Entry(0, "boom")]) == ["entry 0: unexpected: input #0: boom"]


@dataclass
class WindowedOutput:
    topic: str
    key: object
    value: object
    timestamp: int
    window: Window


def test_windowed_keys_compare_by_start_end_and_type():
    want = Record(topic="OUT", key=1, value={"I": 1}, window=Window(start=0, end=10, type="TIME"))
    same = WindowedOutput("OUT", 1, {"I": 1}, 0, Window(start=0, end=10, type="time"))
    other = WindowedOutput("OUT", 1, {"I": 1}, 0, Window(start=0, end=20, type="time"))
    assert compare([want], {"OUT": [same]}, SINKS).ok  # type: ignore[list-item]
    result = compare([want], {"OUT": [other]}, SINKS)  # type: ignore[list-item]
    assert result.diffs[0].details == ["record 0: ['window']['end']: expected 10, got 20"]


@pytest.mark.parametrize(("wanted", "ok"), [("1.50", True), ("1.5", True), ("1.51", False), ("one", False)])
def test_a_decimal_written_as_a_string_compares_by_value(wanted, ok) -> None:
    comparison = run(
        [expected({"I": 1, "X": 1.0, "M": wanted, "A": []})], [actual({"I": 1, "X": 1.0, "M": D("1.50"), "A": []})]
    )
    assert comparison.ok is ok


@pytest.mark.parametrize(
    ("want", "got", "ok"),
    [
        ({"i": 10}, {"I": 10}, True),  # looked up again in upper case
        ({"i": 10}, {"I": 11}, False),
        ({"m": "1.30"}, {"M": D("1.3")}, True),  # the column's type still applies
        ({"I": None, "Q": None}, {"I": None, "X": 2.0}, True),  # a missing field reads as null
        ({"I": None, "Q": 2.0}, {"I": None, "X": 2.0}, False),
        ({"I": None}, {"I": None, "X": None}, False),  # field counts must agree
        ({"Q": None}, {}, False),
    ],
)
def test_expected_fields_are_read_as_ksqldb_reads_them(want, got, ok):
    assert run([expected(want)], [actual(got)]).ok is ok


def test_an_expected_topic_no_query_writes_is_named_with_the_topics_written():
    result = run([expected({"I": 1}, topic="out")], [actual({"I": 1})])
    (diff,) = result.diffs
    assert (diff.topic, diff.written, diff.actual, diff.details) == ("out", ("OUT",), [], [])
    assert diff.expected_output == 0


def test_a_field_the_written_record_lacks_is_named_not_read_as_null():
    result = run([expected({"I": 1}), expected({"J": 2})], [actual({"I": 1}), actual({"I": 2})])
    (diff,) = result.diffs
    assert diff.first_index == 1 and diff.details == []
    assert diff.unknown_fields == [(1, 1, None, UnknownField("value", ("J",), ("I",)))]
    # the record is still shown, so that the two spellings can be read side by side
    assert diff.expected[0] == {"key": 1, "value": {"J": 2}} and diff.actual[0] == {"key": 1, "value": {"I": 2}}


def test_fields_are_looked_up_as_ksqldb_does_before_being_called_unknown():
    assert run([expected({"i": 1})], [actual({"I": 1})]).ok  # upper-cased
    assert run([expected({"J": None})], [actual({"I": None})]).ok  # a field the record lacks reads as null
    nested = unknown_fields(expected({"S": {"A": 1, "b": 2, "C": 3}}), actual({"S": {"A": 1, "B": 2, "D": 3}}))
    assert nested == [UnknownField("value", ("S", "C"), ("A", "B", "D"))]
    assert unknown_fields(expected({"I": 1}, key={"K1": 1}), actual({"I": 1}, key={"K2": 1})) == [
        UnknownField("key", ("K1",), ("K2",))
    ]
    assert unknown_fields(expected(5), actual({"I": 5})) == []  # a bare value has no field names


def test_the_first_difference_names_the_expected_records_place_in_outputs_and_its_line():
    wanted = [
        at_line(expected({"I": 5}, topic="B"), 10),
        at_line(expected({"I": 1}), 11),
        at_line(expected({"I": 2}), 12),
    ]
    (diff,) = run(wanted, [actual({"I": 5}, topic="B"), actual({"I": 1}), actual({"I": 3})]).diffs
    assert (diff.topic, diff.first_index, diff.expected_output, diff.expected_line) == ("OUT", 1, 2, 12)
    assert diff.details == ["record 1: ['value']['I']: expected 2, got 3"]
    (extra,) = run(wanted[1:2], [actual({"I": 1}), actual({"I": 9})]).diffs
    assert (extra.first_index, extra.expected_output, extra.expected_line) == (1, None, None)


def test_an_expected_record_without_a_window_expects_an_unwindowed_key():
    # ksqlDB's TestExecutor.validateCreatedMessage compares a windowed key with the expected key
    # when the expected record gives no window, which never matches
    windowed = WindowedOutput("OUT", 1, {"I": 1}, 0, Window(start=0, end=10, type="time"))
    result = compare([expected({"I": 1})], {"OUT": [windowed]}, SINKS)  # type: ignore[list-item]
    assert not result.ok
    assert result.diffs[0].actual == [{"key": 1, "value": {"I": 1}, "window": {"start": 0, "end": 10, "type": "time"}}]
    assert run([expected({"I": 1})], [actual({"I": 1})]).ok


def test_an_expected_record_without_headers_expects_none():
    # ksqlDB's runner reads missing headers as an empty list and compares them always
    with_headers = OutputRecord("OUT", 1, {"I": 1}, 0, 0, "CSAS_OUT_0", headers=(("h", b"\x01"),))
    assert not run([expected({"I": 1})], [with_headers]).ok
    wanted = Record(topic="OUT", key=1, value={"I": 1}, headers=(Header(KEY="h", VALUE="AQ=="),))
    assert run([wanted], [with_headers]).ok
    assert not run([wanted], [actual({"I": 1})]).ok


@pytest.mark.parametrize(
    ("want", "got", "ok"),
    [
        ({"X": "2.5"}, {"X": 2.5}, True),
        ({"X": "1.0"}, {"X": 1.0}, True),
        ({"X": "1.0E10"}, {"X": 1e10}, True),
        ({"A": ["0.25", "1.0E-4"]}, {"A": [0.25, 0.0001]}, True),
        ({"X": "2.50"}, {"X": 2.5}, False),  # BigDecimal.equals minds the scale
        ({"X": "1"}, {"X": 1.0}, False),
        ({"X": "10000000000.0"}, {"X": 1e10}, False),  # Java wrote 1.0E10
        ({"X": " 2.5"}, {"X": 2.5}, False),  # new BigDecimal(" 2.5") throws
        ({"X": "two"}, {"X": 2.0}, False),
        ({"X": "NaN"}, {"X": "NaN"}, True),  # Jackson writes NaN and the infinities as strings
        ({"X": "NaN"}, {"X": float("nan")}, True),
        ({"X": "-Infinity"}, {"X": float("-inf")}, True),
        ({"X": "Infinity"}, {"X": "NaN"}, False),
    ],
)
def test_a_double_written_as_a_string_matches_the_json_text_java_wrote(want, got, ok):
    # ksqlDB's runner reads a JSON sink's numbers as BigDecimal; compareText matches a string
    # expected with new BigDecimal(text).equals(actual)
    assert run([expected(want)], [actual(got)]).ok is ok


def test_a_double_written_as_a_string_never_matches_outside_json():
    sinks = {
        "OUT": TopicSerde(
            "OUT",
            schema_from_sql(SCHEMA),
            Formats(key_format=FormatInfo(format="KAFKA"), value_format=FormatInfo(format="AVRO")),
        )
    }
    assert not compare([expected({"X": "2.5"})], {"OUT": [actual({"X": 2.5})]}, sinks).ok
