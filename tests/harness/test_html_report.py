"""The HTML report: a grid of cases by replay, rendered and clicked in a real headless browser."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from qtt import cli
from qtt.harness import html_report
from qtt.harness.historical.replay import HistoricalResult
from qtt.harness.results import CaseResult
from qtt.harness.status import Status

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FOLDER = "historical_plans/totals__a1/0.7.0_1795620141001"


def _results() -> list[CaseResult]:
    return [
        CaseResult("cases/t.json", "totals", "", Status.PASSED, seconds=0.5),
        CaseResult("cases/t.json", "totals", "restart", Status.FAILED, "outputs differ on T", kind="restart"),
        CaseResult("cases/t.json", "<b>odd</b> name", "json", Status.SKIPPED, "unsupported: X"),
        HistoricalResult(FOLDER, "totals", "", Status.PASSED, kind="historical"),
        HistoricalResult(
            FOLDER, "totals", "restored, written by spark 4.1.4", Status.PASSED, kind="restored", writer="4.1.4"
        ),
        HistoricalResult(
            FOLDER.replace("0.7.0_1795620141001", "0.13.0_1796192047551"),
            "totals",
            "restored, written by spark 4.2.1",
            Status.TIMED_OUT,
            "query CTAS_T_0 did not end within the time limit of 30 s",
            kind="restored",
            writer="4.2.1",
        ),
    ]


def test_rows_are_cases_and_columns_are_the_replays_in_order() -> None:
    grid = html_report.grid([html_report.Shown.of(result) for result in _results()])
    assert grid.columns == [
        "fresh",
        "restart",
        "plan 0.7.0",
        "restored 0.7.0, spark 4.1.4",
        "restored 0.13.0, spark 4.2.1",
    ]
    assert [row.label for row in grid.rows] == ["<b>odd</b> name [json]", "totals"]
    totals = grid.rows[1]
    assert {column: cell.status for column, cell in totals.cells.items()} == {
        "fresh": Status.PASSED,
        "restart": Status.FAILED,
        "plan 0.7.0": Status.PASSED,
        "restored 0.7.0, spark 4.1.4": Status.PASSED,
        "restored 0.13.0, spark 4.2.1": Status.TIMED_OUT,
    }


def test_every_cell_has_an_id_of_its_own_however_results_interleave() -> None:
    results = [
        CaseResult("f.json", case, variant, Status.PASSED, kind=kind)
        for kind, variant in (("case", ""), ("restart", "restart"))
        for case in ("a", "b")
    ]
    ids = [cell.id for row in html_report.grid(map(html_report.Shown.of, results)).rows for cell in row.cells.values()]
    assert len(ids) == len(set(ids)) == 4


def test_a_cell_shows_its_worst_status() -> None:
    passed, failed = (CaseResult("f.json", "c", "", status) for status in (Status.PASSED, Status.FAILED))
    cell = html_report.Cell("c1", [html_report.Shown.of(passed), html_report.Shown.of(failed)])
    assert cell.status == Status.FAILED


def test_results_travel_as_plain_data_and_back() -> None:
    shown = [html_report.Shown.of(result) for result in _results()]
    data = html_report.as_data(shown)
    assert json.loads(json.dumps(data)) == data
    assert {type(value) for one in data for value in one.values()} <= {str, float}  # builtins only
    assert html_report.from_data(data) == shown


def test_the_page_is_self_contained_and_escapes_what_results_hold() -> None:
    page = html_report.render([html_report.Shown.of(result) for result in _results()], title="t <1>")
    assert "<b>odd</b>" not in page and "&lt;b&gt;odd&lt;/b&gt; name [json]" in page
    assert "<title>t &lt;1&gt;</title>" in page
    assert "http://" not in page and "https://" not in page  # no CDN, no server


def test_qtt_run_refuses_an_html_file_it_cannot_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "--html", str(tmp_path / "missing" / "r.html"), "cases/smoke.json"]) == 2
    assert "--html" in capsys.readouterr().err


# --- in a real browser -------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium from the system's packages, driven by Playwright."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is missing: pip install -e '.[test]'")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's chromium package (.ci/run does)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        yield browser
        browser.close()


def _open(browser: Browser, page_file: Path) -> Any:
    page = browser.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(page_file.as_uri())
    assert requests == [page_file.as_uri()], "the page loads nothing but itself"
    return page


@pytest.mark.spark
@pytest.mark.slow
def test_a_real_runs_page_shows_the_grid_and_opens_a_diff_in_a_browser(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.json"
    wrong = {
        "name": "doubles the quantity",
        "statements": [
            "CREATE STREAM orders (id INT KEY, qty INT) WITH (kafka_topic='orders', value_format='JSON');",
            "CREATE STREAM doubled AS SELECT id, qty * 2 AS qty FROM orders;",
        ],
        "inputs": [{"topic": "orders", "key": 1, "value": {"qty": 3}}],
        "outputs": [{"topic": "DOUBLED", "key": 1, "value": {"QTY": 7}}],
    }
    right = {**wrong, "name": "keeps the quantity", "outputs": [{"topic": "DOUBLED", "key": 1, "value": {"QTY": 6}}]}
    cases.write_text(json.dumps({"tests": [wrong, right]}), encoding="utf-8")
    page_file = tmp_path / "report.html"

    assert cli.main(["run", "-q", "--html", str(page_file), str(cases)]) == 1
    capsys.readouterr()

    page = _open(browser, page_file)
    assert page.locator("#summary").inner_text().startswith("2 result(s): 1 passed, 1 failed")
    rows = page.locator("#grid tbody tr")
    assert rows.count() == 2
    failed = page.locator("#grid tbody tr", has_text="doubles the quantity").locator("td.cell")
    assert failed.inner_text() == "F"
    assert failed.evaluate("cell => getComputedStyle(cell).backgroundColor") == "rgb(198, 40, 40)"
    passed = page.locator("#grid tbody tr", has_text="keeps the quantity").locator("td.cell")
    assert passed.evaluate("cell => getComputedStyle(cell).backgroundColor") == "rgb(46, 125, 50)"

    failed.click()
    details = page.locator("#details article")
    assert details.count() == 1
    shown = details.inner_text()
    assert "doubles the quantity" in shown and "outputs differ on DOUBLED" in shown
    assert '"QTY": 7' in shown and '"QTY": 6' in shown  # the labelled diff: expected and actual

    page.locator("input[name=status][value=FAILED]").uncheck()
    assert rows.nth(0).is_hidden() and rows.nth(1).is_visible()
    page.locator("input[name=status][value=FAILED]").check()
    page.locator("#text").fill("keeps")
    assert page.locator("#shown").inner_text() == "1 of 2 row(s) shown"
    page.close()
