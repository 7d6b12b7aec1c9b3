"""The canonical plan codec: every registered tag round-trips byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.errors import PlanFileError
from qtt.plan.ir import codec
from qtt.plan.ir.expressions import Expression
from qtt.plan.ir.steps import DdlCommand, ExecutionStep, Plan, StatementPlan

FIXTURES = Path(__file__).parent / "fixtures" / "tags"
HISTORICAL_FOR_CODEC = Path(__file__).parents[2] / "historical_plans"
ROOTS = {ExecutionStep: "step", Expression: "expression", DdlCommand: "command", StatementPlan: "statement plan"}
ALL_TAGS = sorted((tag, root) for root in ROOTS for tag in root.registry)


@pytest.mark.parametrize(("tag", "root"), ALL_TAGS, ids=[tag for tag, _ in ALL_TAGS])
def test_every_tag_round_trips_its_fixture(tag: str, root: type) -> None:
    path = FIXTURES / f"{tag}.json"
    assert path.exists(), f"no round-trip fixture for {tag}; add it to tests/plan/make_fixtures.py"
    text = path.read_text(encoding="utf-8")
    value = codec.from_json(__import__("json").loads(text), root)
    assert type(value).type_tag == tag
    assert codec.dumps(value) == text


@pytest.mark.parametrize(("tag", "root"), ALL_TAGS, ids=[tag for tag, _ in ALL_TAGS])
def test_todays_code_encodes_each_example_as_its_frozen_fixture(tag: str, root: type) -> None:
    from tests.plan.make_fixtures import examples

    example = examples().get(tag)
    assert example is not None, f"no example for {tag}; add one to tests/plan/make_fixtures.py"
    assert codec.dumps(example) == (FIXTURES / f"{tag}.json").read_text(encoding="utf-8"), (
        f"{tag}'s encoding changed: a shipped tag never changes shape; add a new tag version instead"
    )


def test_the_generator_adds_missing_fixtures_and_never_rewrites_one(tmp_path: Path) -> None:
    from tests.plan.make_fixtures import write_missing

    for path in FIXTURES.glob("*.json"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "streamSinkV1.json").write_text("frozen\n", encoding="utf-8")
    (tmp_path / "streamSinkV2.json").unlink()
    assert write_missing(tmp_path) == ["streamSinkV2"]
    assert (tmp_path / "streamSinkV1.json").read_text(encoding="utf-8") == "frozen\n"
    assert (tmp_path / "streamSinkV2.json").read_bytes() == (FIXTURES / "streamSinkV2.json").read_bytes()


def test_no_tagged_class_inherits_from_another() -> None:
    # A V2 that subclasses its V1 would change whenever V1 does; shared behaviour lives in role bases.
    for root in ROOTS:
        classes = list(root.registry.values())
        for cls in classes:
            parents = [other.type_tag for other in classes if other is not cls and issubclass(cls, other)]
            assert not parents, f"{cls.type_tag} inherits from tagged class(es) {parents}"


def test_every_fixture_is_a_registered_tag() -> None:
    known = {tag for tag, _ in ALL_TAGS}
    assert {p.stem for p in FIXTURES.glob("*.json")} <= known


def test_dump_is_canonical() -> None:
    text = (FIXTURES / "streamSelectV1.json").read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert text.splitlines()[1].strip().startswith('"@type"'), "the tag comes first"


def test_plan_round_trip_keeps_bytes_and_sorts_config() -> None:
    plan = Plan(config={"b": 1, "a": "x"}, statements=())
    text = codec.dumps(plan)
    assert text.index('"a"') < text.index('"b"')
    assert codec.dumps(codec.loads(text)) == text


def test_unknown_tag_names_the_path_and_the_known_tags() -> None:
    text = (FIXTURES / "ksqlPlanV1.json").read_text(encoding="utf-8").replace("dropSourceV1", "dropSourceV9")
    plan_text = '{"config": {}, "statements": [' + text + "]}"
    with pytest.raises(PlanFileError) as info:
        codec.loads(plan_text, file="x/plan.json")
    message = str(info.value)
    assert "x/plan.json" in message
    assert "unknown command type 'dropSourceV9'" in message
    assert "$.statements[0].ddlCommand" in message
    assert "createStreamV1" in message


def test_wrong_type_and_unknown_field_are_both_reported() -> None:
    text = (FIXTURES / "streamSourceV1.json").read_text(encoding="utf-8")
    bad = text.replace('"topic": "in"', '"topic": 7').replace('"sourceName"', '"sourceNam"')
    with pytest.raises(PlanFileError) as info:
        codec.from_json(__import__("json").loads(bad), ExecutionStep)
    message = str(info.value)
    assert "expected str, got int 7 @ $.topic" in message
    assert "unknown field(s) 'sourceNam'" in message


def test_invalid_json_gives_line_and_column() -> None:
    with pytest.raises(PlanFileError) as info:
        codec.loads('{"config": {},\n "statements": [}', file="p.json")
    assert info.value.line == 2
    assert info.value.column is not None


def test_every_step_tag_has_a_builder() -> None:
    import qtt.runtime.build.builder  # registers the stateless step builders
    import qtt.runtime.operators.registered  # noqa: F401 (registers the stateful step builders)
    from qtt.runtime.build.context import BUILDERS

    missing = [cls.type_tag for cls in ExecutionStep.registry.values() if cls not in BUILDERS]
    assert not missing, f"step tags without a builder: {missing}"


def test_an_integer_of_more_than_4300_digits_is_a_located_plan_file_error() -> None:
    with pytest.raises(PlanFileError, match="an integer of 5,000 digits") as caught:
        codec.loads('{"version":\n ' + "1" * 5000 + "}", file="h/plan.json")
    assert (caught.value.file, caught.value.line, caught.value.column) == ("h/plan.json", 2, 2)


def test_a_structure_error_carries_its_json_path_as_a_field() -> None:
    with pytest.raises(PlanFileError) as caught:
        codec.loads('{"plans": []}', file="h/plan.json")
    assert caught.value.file == "h/plan.json" and caught.value.path is not None
    assert caught.value.path.startswith("$")


def test_a_container_where_a_scalar_belongs_is_described_not_printed() -> None:
    text = codec.dumps(codec.loads(Path("historical_plans").glob("*/*/plan.json").__next__().read_text()))
    bad = text.replace('"sourceName": ', '"sourceName": ' + "[" * 900 + "1" + "]" * 900 + ', "was": ', 1)
    with pytest.raises(PlanFileError) as caught:
        codec.loads(bad, file="plan.json")
    assert "an array of 1 element(s)" in caught.value.message and len(caught.value.message) < 2000


@pytest.mark.parametrize(("value", "got"), [([1], "an array"), ("x", "a string"), (7, "a number"), (None, "null")])
def test_a_value_of_the_wrong_json_type_says_what_was_expected(value: object, got: str) -> None:
    # Python's own words were quoted before ("AttributeError: 'list' object has no attribute 'keys'")
    text = sorted(HISTORICAL_FOR_CODEC.glob("*/*/plan.json"))[0].read_text(encoding="utf-8")
    doc = json.loads(text)
    doc["statements"][0]["ddlCommand"]["formats"] = value
    with pytest.raises(PlanFileError) as raised:
        codec.loads(json.dumps(doc), file="plan.json")
    assert raised.value.file == "plan.json"
    assert raised.value.path == "$.statements[0].ddlCommand.formats"
    assert str(raised.value).endswith(f"expected an object, got {got}")


def test_a_format_of_qtt_s_first_writer_has_no_writer_version_and_a_later_one_keeps_its_own() -> None:
    from qtt.plan.ir.steps import FormatInfo, Formats

    first = Formats(key_format=FormatInfo(format="KAFKA"), value_format=FormatInfo(format="AVRO"))
    assert codec.converter().unstructure(first)["valueFormat"] == {"format": "AVRO", "properties": {}}
    second = Formats(key_format=FormatInfo(format="KAFKA"), value_format=FormatInfo(format="AVRO", writer_version=2))
    written = codec.converter().unstructure(second)
    assert written["valueFormat"]["writerVersion"] == 2
    assert codec.converter().structure(written, Formats) == second
