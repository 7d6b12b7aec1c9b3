"""``qtt run --update``: failing cases get their actual outputs written into their files.

Results are made the way the runner makes them (a real loaded case, a replay result by hand,
the comparison's own verdict), so no Spark is needed; the end-to-end tests go through the CLI.
"""

from __future__ import annotations

import decimal
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from qtt.cli import main
from qtt.harness.cases.loader import load_file, load_text
from qtt.harness.replay.compare import compare
from qtt.harness.replay.driver import OutputRecord, ReplayResult
from qtt.harness.results import CaseResult
from qtt.harness.status import Status
from qtt.harness.update import update_outputs
from qtt.serde.windowed import WindowBounds

FIXTURES = Path(__file__).parent / "fixtures" / "update"
REPO = Path(__file__).parents[2]


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / "cases" / name
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(FIXTURES / name, target)
    return target


def _out(topic: str, key: object, value: object, seq: int, *, timestamp: int = 0, **more: object) -> OutputRecord:
    return OutputRecord(topic, key, value, timestamp, seq, "CSAS_0", **more)  # type: ignore[arg-type]


def _results(path: Path, actual: dict[str, Sequence[OutputRecord]]) -> list[CaseResult]:
    """One result per variant of the file's cases, judged as the runner judges a replay.

    ``actual`` is keyed by case name, or by ``name [variant]``; a case it leaves out passes.
    """
    results = []
    for variant in load_file(path, display=str(path)).variants:
        records = actual.get(variant.label, actual.get(variant.case))
        if records is None:
            results.append(CaseResult(str(path), variant.case, variant.variant, Status.PASSED))
            continue
        outputs: dict[str, list[OutputRecord]] = {}
        for record in records:
            outputs.setdefault(record.topic, []).append(record)
        replay = ReplayResult(outputs=outputs)
        comparison = compare(variant.outputs, outputs, {})
        status = Status.PASSED if comparison.ok else Status.FAILED
        result = CaseResult(str(path), variant.case, variant.variant, status, comparison=comparison, replay=replay)
        result.reason = "" if comparison.ok else "outputs differ on " + ", ".join(d.topic for d in comparison.diffs)
        results.append(result)
    return results


def _passes(path: Path, results: Sequence[CaseResult], case: str) -> bool:
    """Whether every variant of ``case`` that ran passes against the file as it is now."""
    loaded = load_text(path.read_text(encoding="utf-8"), file=str(path))
    variants = {v.variant: v for v in loaded.variants if v.case == case}
    return all(
        compare(variants[r.variant].outputs, r.replay.outputs, r.replay.sinks).ok
        for r in results
        if r.case == case and r.replay is not None
    )


BIG_ORDERS = [_out("BIG_ORDERS", 2, {"ITEM": "PEAR"}, 1)]
PRICES = [_out("DOUBLED", 1, {"AMOUNT": decimal.Decimal("0.20")}, 0)]
NEW_CASE = [_out("T", 1, {"V": 1}, 0, timestamp=10), _out("T", None, {"V": 2}, 1, timestamp=20)]


def test_failing_cases_get_their_actual_outputs_and_nothing_else_changes(tmp_path: Path) -> None:
    path = _copy(tmp_path, "lines.json")
    results = _results(path, {"big orders": BIG_ORDERS, "prices": PRICES, "new case": NEW_CASE})
    updates = update_outputs(results)
    assert path.read_bytes() == (FIXTURES / "lines.updated.json").read_bytes()
    assert updates.lines() == [
        f"UPDATED {path}: case 'big orders': 1 record(s) on BIG_ORDERS (was 1)",
        f"UPDATED {path}: case 'prices': 1 record(s) on DOUBLED (was 1)",
        f"UPDATED {path}: case 'new case': 2 record(s) on T (was 0)",
        f"review with: git diff {path.parent}/",
    ]
    for case in ("big orders", "prices", "new case"):
        assert _passes(path, results, case), case


def test_the_written_file_is_read_back_once_however_many_cases_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read back once per case, a file of many failing cases cost quadratic time: 528 failing
    # cases in one file took 510 s to update.
    from qtt.harness import update

    reads = []

    def counting(text: str, **kwargs: object) -> object:
        reads.append(kwargs.get("file"))
        return load_text(text, **kwargs)  # type: ignore[arg-type]

    path = _copy(tmp_path, "lines.json")
    results = _results(path, {"big orders": BIG_ORDERS, "prices": PRICES, "new case": NEW_CASE})
    monkeypatch.setattr(update, "load_text", counting)
    assert len(update_outputs(results).updated) == 3
    assert len(reads) == 2  # the file as it was, then as it will be written
    assert path.read_bytes() == (FIXTURES / "lines.updated.json").read_bytes()


def test_the_round_trip_keeps_decimals_exact(tmp_path: Path) -> None:
    path = _copy(tmp_path, "lines.json")
    update_outputs(_results(path, {"prices": PRICES}))
    [variant] = [v for v in load_file(path).variants if v.case == "prices"]
    assert variant.outputs[0].value == {"AMOUNT": decimal.Decimal("0.20")}
    assert str(variant.outputs[0].value["AMOUNT"]) == "0.20"


def test_an_expanded_file_gets_expanded_records_with_the_fields_its_records_give(tmp_path: Path) -> None:
    path = _copy(tmp_path, "expanded.json")
    window = WindowBounds(0, 10000, "time")
    actual = [
        _out("PEAKS", "a", {"PEAK": 20}, 0, timestamp=1000, window=window),
        _out("PEAKS", "a", {"PEAK": 25}, 1, timestamp=2000, window=window),
    ]
    results = _results(path, {"peaks": actual})
    assert [line.split(": ", 1)[1] for line in update_outputs(results).lines()[:1]] == [
        "case 'peaks': 2 record(s) on PEAKS (was 1)"
    ]
    assert path.read_bytes() == (FIXTURES / "expanded.updated.json").read_bytes()
    assert _passes(path, results, "peaks")


def test_a_file_with_crlf_line_ends_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / "crlf.json"
    path.write_bytes((FIXTURES / "expanded.json").read_bytes().replace(b"\n", b"\r\n"))
    window = WindowBounds(0, 10000, "time")
    update_outputs(_results(path, {"peaks": [_out("PEAKS", "a", {"PEAK": 21}, 0, timestamp=1000, window=window)]}))
    written = path.read_bytes()
    assert b"\r\n" in written and b"\n" not in written.replace(b"\r\n", b"")
    assert b'"PEAK": 21' in written


def test_headers_are_written_in_base64_when_the_case_compares_them(tmp_path: Path) -> None:
    path = tmp_path / "headers.json"
    text = (FIXTURES / "matrix.json").read_text(encoding="utf-8")
    text = text.replace('"format": ["JSON", "AVRO"],', "").replace('{"V": 3}}', '{"V": 3}, "headers": []}')
    path.write_text(text, encoding="utf-8")
    record = _out("T", "a", {"V": 2}, 0, headers=(("h", b"\x00\xff"), ("n", None)))
    results = _results(path, {"in every format": [record]})
    update_outputs(results)
    assert '"headers": [{"KEY": "h", "VALUE": "AP8="}, {"KEY": "n", "VALUE": null}]' in path.read_text()
    assert _passes(path, results, "in every format")


def test_headers_and_windows_are_written_whenever_the_records_carry_them(tmp_path: Path) -> None:
    # the comparison checks both even where the case gives none, as ksqlDB's runner does
    path = tmp_path / "carried.json"
    text = (FIXTURES / "matrix.json").read_text(encoding="utf-8")
    path.write_text(text.replace('"format": ["JSON", "AVRO"],', ""), encoding="utf-8")
    window = WindowBounds(0, 10, "time")
    record = _out("T", "a", {"V": 2}, 0, headers=(("h", b"\x01"),), window=window)
    results = _results(path, {"in every format": [record]})
    update_outputs(results)
    written = path.read_text()
    assert '"headers": [{"KEY": "h", "VALUE": "AQ=="}]' in written
    assert '"window": {"start": 0, "end": 10, "type": "time"}' in written
    assert _passes(path, results, "in every format")


def test_expected_records_that_still_hold_are_kept_as_written(tmp_path: Path) -> None:
    path = tmp_path / "kept.json"
    kept = '{"topic": "T", "key": "a", /* v reads as V */ "value": {"v": 2}, "comment": "hand-written"}'
    text = (FIXTURES / "matrix.json").read_text(encoding="utf-8").replace('"format": ["JSON", "AVRO"],', "")
    path.write_text(text.replace('{"topic": "T", "key": "a", "value": {"V": 3}}', kept))
    results = _results(path, {"in every format": [_out("T", "a", {"V": 2}, 0), _out("T", "a", {"V": 4}, 1)]})
    update_outputs(results)
    new = '{"topic": "T", "key": "a", "value": {"V": 4}}'
    assert f'      "outputs": [\n        {kept},\n        {new}\n      ]\n' in path.read_text()
    assert _passes(path, results, "in every format")


def _refusals(path: Path, results: Sequence[CaseResult]) -> list[str]:
    before = path.read_bytes()
    updates = update_outputs(results)
    assert not updates.updated
    assert path.read_bytes() == before
    return updates.lines()


def test_variants_that_disagree_are_refused(tmp_path: Path) -> None:
    path = _copy(tmp_path, "matrix.json")
    results = _results(
        path,
        {
            "in every format [JSON]": [_out("T", "a", {"V": 2}, 0)],
            "in every format [AVRO]": [_out("T", "a", {"V": 4}, 0)],
        },
    )
    assert _refusals(path, results) == [
        f"NOT UPDATED {path}: case 'in every format': its variants disagree on their outputs: "
        "[AVRO] would still fail on T"
    ]


def test_variants_that_agree_are_written_once(tmp_path: Path) -> None:
    path = _copy(tmp_path, "matrix.json")
    same = [_out("T", "a", {"V": 2}, 0)]
    results = _results(path, {"in every format": same})
    assert update_outputs(results).lines()[0] == f"UPDATED {path}: case 'in every format': 1 record(s) on T (was 1)"
    assert '{"topic": "T", "key": "a", "value": {"V": 2}}' in path.read_text()
    assert _passes(path, results, "in every format")


def test_a_case_whose_variants_did_not_all_run_is_refused(tmp_path: Path) -> None:
    path = _copy(tmp_path, "matrix.json")
    results = [r for r in _results(path, {"in every format": [_out("T", "a", {"V": 2}, 0)]}) if r.variant == "JSON"]
    assert _refusals(path, results) == [
        f"NOT UPDATED {path}: case 'in every format': only 1 of its 2 variants ran (not AVRO): run them all "
        "(no -k, --shard or -x that leaves one out), then update"
    ]


@pytest.mark.parametrize(
    ("status", "reason", "why"),
    [
        (Status.ERROR, "internal error at x.py:1: KeyError: 'a'", "errored, which is not a comparison failure"),
        (Status.INFRA, "Python worker did not connect back", "could not run (infrastructure error)"),
        (Status.FAILED, "SerdeError: cannot write", "failed before its outputs were compared"),
        (Status.TIMED_OUT, "query Q did not end", "timed out: its outputs are only what had arrived by then"),
    ],
)
def test_a_variant_that_did_not_fail_on_its_outputs_refuses_its_case(
    tmp_path: Path, status: Status, reason: str, why: str
) -> None:
    path = _copy(tmp_path, "matrix.json")
    results = _results(path, {"in every format": [_out("T", "a", {"V": 2}, 0)]})
    results[1] = CaseResult(str(path), "in every format", "AVRO", status, reason=reason)
    [line] = _refusals(path, results)
    assert line.startswith(f"NOT UPDATED {path}: case 'in every format': variant [AVRO] {why}")


def test_cases_that_cannot_be_updated_honestly_are_refused_with_a_reason(tmp_path: Path) -> None:
    path = _copy(tmp_path, "lines.json")
    results = [r for r in _results(path, {"no outputs array": [_out("T", 1, {"V": 1}, 0)]}) if r.case != "wrong error"]
    results += [
        CaseResult(str(path), "wrong error", "", Status.FAILED, reason="expected ... but every statement planned"),
        CaseResult("cases/upgrades.sql", "upgrade", "", Status.FAILED, kind="sql"),
        CaseResult(str(path), "big orders", "restart", Status.FAILED, kind="restart"),
        CaseResult("historical_plans/big_orders/0.13.0_1", "big orders", "0.13.0_1", Status.FAILED, kind="historical"),
    ]
    assert _refusals(path, results) == [
        f"NOT UPDATED {path}: case 'no outputs array': its outputs are not a literal 'outputs' array in the file: "
        'add "outputs": [] and update again',
        f"NOT UPDATED {path}: case 'wrong error': it expects an exception (expectedException): it has no outputs "
        "to write",
        "NOT UPDATED cases/upgrades.sql: test 'upgrade': a SQL test file holds ASSERT statements, not an outputs "
        "array: edit them by hand",
        f"NOT UPDATED {path}: case 'big orders [restart]': the restart scenario is compared with the fresh replay, "
        "not with the case file (outputs, processing log and internal topics): nothing to write, the runtime differs",
        "NOT UPDATED 1 historical folder(s): historical plans are never written: a folder that fails is a "
        "regression of the runtime, fix it",
    ]


def test_a_topic_no_query_writes_is_refused_with_the_topics_written(tmp_path: Path) -> None:
    path = tmp_path / "topic.json"
    path.write_text((FIXTURES / "lines.json").read_text().replace('"topic": "BIG_ORDERS"', '"topic": "big_orders"'))
    [line] = _refusals(path, _results(path, {"big orders": BIG_ORDERS}))
    assert line == (
        f"NOT UPDATED {path}: case 'big orders': it expects records on 'big_orders', which no query writes "
        "(they write BIG_ORDERS). Did you mean 'BIG_ORDERS'? Fix the topic's name, then update"
    )


def test_a_case_whose_outputs_match_is_not_written_for_its_post_conditions(tmp_path: Path) -> None:
    path = _copy(tmp_path, "lines.json")
    [result] = [r for r in _results(path, {"big orders": BIG_ORDERS}) if r.case == "big orders"]
    assert result.replay is not None
    result.comparison = compare((), {}, {})
    result.problems = ["source BIG_ORDERS: expected type TABLE, got STREAM"]
    assert _refusals(path, [result]) == [
        f"NOT UPDATED {path}: case 'big orders': its outputs match, but its post-conditions fail: "
        "--update writes outputs only, fix it by hand"
    ]
    result.comparison = compare(load_file(path).variants[0].outputs, result.replay.outputs, {})
    assert update_outputs([result]).lines()[0] == (
        f"UPDATED {path}: case 'big orders': 1 record(s) on BIG_ORDERS (was 1); still, its post-conditions fail "
        "(not written: --update writes outputs only)"
    )


def test_nothing_to_update_says_so(tmp_path: Path) -> None:
    path = _copy(tmp_path, "lines.json")
    assert update_outputs(_results(path, {})).lines() == ["qtt run --update: nothing to update: no case failed"]


def test_a_case_file_under_historical_plans_is_never_written(tmp_path: Path) -> None:
    folder = tmp_path / "historical_plans"
    folder.mkdir()
    path = folder / "lines.json"
    shutil.copyfile(FIXTURES / "lines.json", path)
    [line] = _refusals(path, [r for r in _results(path, {"big orders": BIG_ORDERS}) if r.case == "big orders"])
    assert "only case files (*.json outside historical_plans/) are written" in line


@pytest.mark.spark
@pytest.mark.slow
def test_run_update_writes_the_outputs_and_the_next_run_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], spark: object
) -> None:
    monkeypatch.chdir(tmp_path)
    path = _copy(tmp_path, "lines.json")
    assert main(["run", "--update", "-k", "big orders", "cases/lines.json"]) == 1  # the run's verdict stands
    out = capsys.readouterr().out
    assert "UPDATED cases/lines.json: case 'big orders': 1 record(s) on BIG_ORDERS (was 1)\n" in out
    assert out.index("review with: git diff cases/") < out.index("variant(s): 0 passed, 1 failed")
    assert '{"topic": "BIG_ORDERS", "key": 2, "value": {"ITEM": "PEAR"}}' in path.read_text()
    assert main(["run", "-k", "big orders", "cases/lines.json"]) == 0


@pytest.mark.spark
@pytest.mark.slow
def test_run_update_on_a_format_matrix_writes_once_for_every_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], spark: object
) -> None:
    monkeypatch.chdir(tmp_path)
    path = _copy(tmp_path, "matrix.json")
    assert main(["run", "--update", "cases/matrix.json"]) == 1
    assert "UPDATED cases/matrix.json: case 'in every format': 1 record(s) on T (was 1)" in capsys.readouterr().out
    assert '{"topic": "T", "key": "a", "value": {"V": 2}}' in path.read_text()
    assert main(["run", "cases/matrix.json"]) == 0


def test_the_records_the_case_wrote_to_a_sink_are_written_before_the_querys(tmp_path: Path) -> None:
    # the runner compares a topic as ksqlDB's runner reads it back: the case's own records first
    path = _copy(tmp_path, "lines.json")
    [result] = [r for r in _results(path, {"big orders": BIG_ORDERS}) if r.case == "big orders"]
    own = _out("BIG_ORDERS", 7, {"ITEM": "FIG"}, 0)
    result.compared_with = ({"BIG_ORDERS": [own, *BIG_ORDERS]}, {})
    lines = update_outputs([result]).lines()
    assert lines[0] == f"UPDATED {path}: case 'big orders': 2 record(s) on BIG_ORDERS (was 1)", lines
    written = next(v for v in load_file(path, display=str(path)).variants if v.case == "big orders").outputs
    assert [(r.key, r.value) for r in written] == [(7, {"ITEM": "FIG"}), (2, {"ITEM": "PEAR"})]
