"""spec.json: canonical round trip, exact decimals, strict loading."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from qtt.errors import PlanFileError
from qtt.harness.historical import spec
from qtt.plan.ir.steps import FormatInfo, Formats


def _spec() -> spec.Spec:
    formats = Formats(key_format=FormatInfo(format="KAFKA"), value_format=FormatInfo(format="JSON"))
    record = spec.SpecRecord(
        topic="t",
        timestamp=5,
        key_bytes=spec.b64(b"k"),
        value_bytes=spec.b64(b"{}"),
        key="k",
        value={"PRICE": Decimal("10.50")},
    )
    return spec.Spec(
        spec_version=1,
        qtt_version="0.1.0",
        spark_version="4.3.0",
        case=spec.SpecCase(file="cases/a.json", name="a", variant=""),
        statements=("CREATE STREAM ...",),
        topics=(spec.SpecTopic(name="t", formats=formats, schema="`K` STRING KEY"),),
        inputs=(record,),
        outputs=(record,),
        step_schemas={"Q": {"Project": "`K` STRING KEY"}},
    )


def test_round_trip_is_byte_exact_and_keeps_decimal_digits() -> None:
    text = spec.dumps(_spec())
    assert '"PRICE": 10.50' in text
    assert spec.dumps(spec.loads(text)) == text


def test_only_a_repartition_record_writes_a_timestamp() -> None:
    change = spec.SpecInternalRecord(key={"K": 1}, value=None, change="delete", batch=0)
    appended = spec.SpecInternalRecord(key={"K": 1}, value={"V": 2}, change="append", batch=1, timestamp=7)
    topics = (
        spec.SpecInternalTopic(name="Q-S-changelog", key_schema="K", value_schema="V", records=(change,)),
        spec.SpecInternalTopic(name="Q-Join-repartition", key_schema="K", value_schema="V", records=(appended,)),
    )
    text = spec.dumps(replace(_spec(), internal_topics=topics))
    assert text.count('"timestamp": 7') == 1 and '"timestamp": null' not in text
    assert spec.loads(text).internal_topics == topics and spec.dumps(spec.loads(text)) == text


def test_bytes_survive_base64() -> None:
    assert spec.unb64(spec.b64(b"\x00\xff")) == b"\x00\xff"
    assert spec.b64(None) is None and spec.unb64(None) is None


def test_unknown_field_and_version_are_rejected() -> None:
    text = spec.dumps(_spec())
    with pytest.raises(PlanFileError, match=r"unknown field\(s\) 'extra'") as caught:
        spec.loads(text.replace('"specVersion": 1,', '"specVersion": 1, "extra": 1,'), file="spec.json")
    assert (caught.value.file, caught.value.path) == ("spec.json", "$")
    with pytest.raises(PlanFileError, match="specVersion 9 is not supported"):
        spec.loads(text.replace('"specVersion": 1', '"specVersion": 9'))


@pytest.mark.parametrize(
    ("bad", "path"),
    [
        ('"valueBytes": "e30!"', "$.inputs[0].valueBytes"),  # '!' is outside the alphabet
        ('"valueBytes": "e3"', "$.inputs[0].valueBytes"),  # bad padding
    ],
)
def test_invalid_base64_is_a_located_plan_file_error(bad: str, path: str) -> None:
    text = spec.dumps(_spec()).replace('"valueBytes": "e30="', bad, 1)
    with pytest.raises(PlanFileError, match="invalid base64") as caught:
        spec.loads(text, file="h/spec.json")
    assert (caught.value.file, caught.value.path) == ("h/spec.json", path)


def test_characters_outside_the_alphabet_are_not_dropped() -> None:
    with pytest.raises(PlanFileError, match="invalid base64"):
        spec.unb64("e3 0=")


def test_a_deeply_nested_spec_version_is_described_not_printed() -> None:
    # found by the fuzz suite: quoting the value took a recursion per level, and a message as long as the file
    text = spec.dumps(_spec()).replace('"specVersion": 1', '"specVersion": ' + "[" * 900 + "1" + "]" * 900)
    with pytest.raises(PlanFileError, match=r"specVersion an array of 1 element\(s\) is not supported") as caught:
        spec.loads(text, file="spec.json")
    assert caught.value.path == "$.specVersion" and len(caught.value.message) < 200
