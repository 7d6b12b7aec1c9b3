"""``qtt upgrade OLD NEW``: the walk over both plans, the verdict, and the replayed proof."""

from __future__ import annotations

from pathlib import Path

import pytest

from qtt.cli import main
from qtt.errors import UsageError
from qtt.harness.sqltests.advisor import advise, prove, render

ROOT = Path(__file__).resolve().parents[2]
FLEET = str(ROOT / "examples" / "upgrade" / "fleet_alerts.sql")
CAPACITY = str(ROOT / "examples" / "upgrade" / "fleet_alerts_capacity.sql")

COUNTS = """
CREATE STREAM visits (page VARCHAR KEY, ms INT) WITH (kafka_topic='visits', value_format='JSON');
CREATE TABLE views AS SELECT page, COUNT(*) AS n FROM visits WHERE ms > 0 GROUP BY page;
INSERT INTO visits (page, ms) VALUES ('home', 5);
INSERT INTO visits (page, ms) VALUES ('home', 50);
INSERT INTO visits (page, ms) VALUES ('home', 60);
INSERT INTO visits (page, ms) VALUES ('home', 70);
"""


def _write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_the_fleet_example_is_refused_by_ksqldbs_rules_at_its_join() -> None:
    advice = advise(FLEET, CAPACITY)
    assert advice.refused is not None and advice.refused.startswith("Upgrades not yet supported for TableTableJoin")
    roles = [(entry.role, entry.old, entry.verdict) for entry in advice.walk]
    assert ("passive", "tableFilterV2 WhereFilter", "changed") in roles
    assert roles[-1][0] == "unsupported"
    assert "verdict: REFUSED" in render(advice) and "--extended" in render(advice)


def test_the_fleet_example_is_allowed_by_the_extended_rules_with_every_step_matched() -> None:
    advice = advise(FLEET, CAPACITY, extended=True)
    assert advice.refused is None
    verdicts = {(entry.old, entry.verdict) for entry in advice.walk}
    assert ("tableTableJoinV1 Join", "matches") in verdicts
    assert ("tableFilterV2 WhereFilter", "changed") in verdicts
    assert {entry.verdict for entry in advice.walk} <= {"matches", "changed", "unchanged"}
    assert "verdict: ALLOWED" in render(advice)


def test_a_changed_aggregation_is_refused_where_it_differs(tmp_path: Path) -> None:
    old = _write(tmp_path, "old.sql", COUNTS)
    added = "SELECT page, COUNT(*) AS n, SUM(ms) AS total FROM visits WHERE ms > 0 GROUP BY page;"
    new = _write(tmp_path, "new.sql", f"CREATE TABLE views AS {added}")
    advice = advise(old, new)
    assert advice.refused is not None and "StreamAggregate must have matching aggregate functions" in advice.refused
    (refusing,) = [entry for entry in advice.walk if entry.verdict == advice.refused]
    assert refusing.old == "streamAggregateV1 Aggregate/Aggregate"


def test_an_aggregation_reading_other_columns_is_refused_where_it_reads_them(tmp_path: Path) -> None:
    old = _write(tmp_path, "old.sql", COUNTS)
    new = _write(tmp_path, "new.sql", "CREATE TABLE views AS SELECT page, COUNT(*) AS n FROM visits GROUP BY page;")
    advice = advise(old, new)
    expected = "Values differ: [`PAGE`, `ROWTIME`, `MS`] vs. [`PAGE`, `ROWTIME`]"
    assert advice.refused is not None and expected in advice.refused
    (refusing,) = [entry for entry in advice.walk if entry.verdict == advice.refused]
    assert refusing.old == "streamAggregateV1 Aggregate/Aggregate"


def test_a_refusal_points_at_swap_in_place_and_a_swap_is_allowed_with_the_walk_shown(tmp_path: Path) -> None:
    old = _write(tmp_path, "old.sql", COUNTS)
    added = "SELECT page, COUNT(*) AS n, SUM(ms) AS total FROM visits GROUP BY page;"
    refused = advise(old, _write(tmp_path, "plain.sql", f"CREATE TABLE views AS {added}"))
    assert "hint: a query whose state the new plan cannot resume can be swapped in place" in render(refused)
    swapped = advise(old, _write(tmp_path, "swap.sql", f"CREATE TABLE views WITH (SWAP_IN_PLACE=true) AS {added}"))
    assert swapped.swap and swapped.refused is None
    shown = render(swapped)
    assert shown.startswith("Swapping the query of VIEWS in place (SWAP_IN_PLACE)")
    assert "StreamAggregate must have matching aggregate functions" in shown  # what it could not have resumed
    assert "verdict: ALLOWED: swapped in place" in shown


@pytest.mark.parametrize(
    "text",
    [
        "CREATE TABLE t WITH (SWAP_IN_PLACE=true) AS SELECT 1",
        "CREATE TABLE t WITH (swap_in_place = TRUE, KAFKA_TOPIC='t') AS SELECT 1",
        "CREATE TABLE t WITH (KAFKA_TOPIC='t', SWAP_IN_PLACE=true) AS SELECT 1",
        "CREATE TABLE t WITH (KAFKA_TOPIC='t', SWAP_IN_PLACE=true, PARTITIONS=2) AS SELECT 1",
    ],
)
def test_the_fresh_run_of_a_swap_drops_the_property_and_keeps_the_rest(text: str) -> None:
    from qtt.harness.sqltests import advisor

    stripped = advisor._EMPTY_WITH.sub(" ", advisor._SWAP_LAST.sub("", advisor._SWAP.sub("", text)))
    assert "SWAP" not in stripped.upper() and "( ," not in stripped and ", )" not in stripped
    assert stripped.count("KAFKA_TOPIC") == text.count("KAFKA_TOPIC") and stripped.endswith("AS SELECT 1")


@pytest.mark.parametrize(
    "new, words",
    [
        ("CREATE TABLE other AS SELECT page, COUNT(*) AS n FROM visits GROUP BY page;", "no query of"),
        ("CREATE TABLE views AS SELECT page, COUNT(*) AS n FROM visits GROUP BY page; DROP TABLE views;", "one"),
    ],
)
def test_a_new_file_that_replaces_no_query_is_a_usage_error(tmp_path: Path, new: str, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        advise(_write(tmp_path, "old.sql", COUNTS), _write(tmp_path, "new.sql", new))


def test_the_command_exits_1_when_refused_and_0_when_allowed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["upgrade", FLEET, CAPACITY]) == 1
    assert "REFUSED" in capsys.readouterr().out
    assert main(["upgrade", "--extended", FLEET, CAPACITY]) == 0
    assert "ALLOWED" in capsys.readouterr().out
    assert main(["upgrade", "--at", "2", FLEET, CAPACITY]) == 2
    assert "--at needs --prove" in capsys.readouterr().err


@pytest.mark.spark
def test_prove_shows_where_the_upgraded_query_differs_from_a_fresh_run(spark, tmp_path: Path) -> None:
    # the new filter drops ms <= 10, but the count resumed what the old plan counted
    old = _write(tmp_path, "old.sql", COUNTS)
    new = _write(
        tmp_path, "new.sql", "CREATE TABLE views AS SELECT page, COUNT(*) AS n FROM visits WHERE ms > 10 GROUP BY page;"
    )
    advice = prove(old, new, lambda: spark, at=2)
    after = [(r.seq, r.columns["N"]) for r in advice.upgraded if r.seq >= 2]
    fresh = [(r.seq, r.columns["N"]) for r in advice.fresh if r.seq >= 2]
    assert after == [(2, 3), (3, 4)]
    assert fresh == [(2, 2), (3, 3)]
    shown = render(advice)
    assert "insert   3  != upgrade: {'PAGE': 'home', 'N': 3}" in shown
    assert "2 insert(s) caused other records after the upgrade than a fresh run" in shown


@pytest.mark.spark
def test_prove_on_the_fleet_example_writes_what_a_fresh_run_writes(spark) -> None:
    advice = prove(FLEET, CAPACITY, lambda: spark, extended=True)
    assert advice.proven and advice.point == 4
    assert [r.columns for r in advice.upgraded if r.seq >= 4] == [r.columns for r in advice.fresh if r.seq >= 4]
    assert "after the upgrade, the upgraded query wrote what a fresh run of the new query writes" in render(advice)


def test_a_case_of_a_case_file_is_walked_and_judged(tmp_path: Path) -> None:
    new = _write(tmp_path, "new.sql", "CREATE TABLE low AS SELECT sku, qty, shelf FROM stock WHERE qty < 3;")
    tables = str(ROOT / "cases" / "tables.json")
    with pytest.raises(UsageError, match="pick one with --case NAME"):
        advise(tables, new)
    advice = advise(tables, new, case="a table filter turns rows that stop matching into deletes")
    assert advice.refused is None
    assert ("tableFilterV3 WhereFilter", "changed") in {(entry.old, entry.verdict) for entry in advice.walk}
    with pytest.raises(UsageError, match="no case named 'nothing'"):
        advise(tables, new, case="nothing")
    with pytest.raises(UsageError, match="is a case file"):
        prove(tables, new, lambda: None)  # type: ignore[arg-type,return-value]
