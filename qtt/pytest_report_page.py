"""``pytest --qtt-html FILE``: the HTML report page (:mod:`qtt.harness.html_report`) of the
qtt items a pytest run judged.

Registered by the qtt plugin when the option is given. Under pytest-xdist each worker sends
its results, as plain data, to the controlling process, which writes the one page at the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from qtt import __version__

#: the key of a worker's results in what pytest-xdist sends back
WORKER_OUTPUT = "qtt_html"


class ReportPage:
    """Collects the judged results of a run and writes the page when the run ends."""

    def __init__(self, path: str, results: Callable[[], dict[str, Any]]) -> None:
        self.path = path
        self.results = results  # node id -> CaseResult, as the plugin keeps them
        self.from_workers: list[dict[str, object]] = []
        self.began = time.perf_counter()

    def _own(self) -> list[dict[str, object]]:
        from qtt.harness import html_report

        return html_report.as_data([html_report.Shown.of(result) for result in self.results().values()])

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self.from_workers += getattr(node, "workeroutput", {}).get(WORKER_OUTPUT, [])

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from qtt.harness import html_report

        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: its controller writes the page
            workeroutput[WORKER_OUTPUT] = self._own()
            return
        shown = html_report.from_data([*self._own(), *self.from_workers])
        title = f"qtt {__version__} under pytest"
        try:
            html_report.write(shown, self.path, title=title, seconds=time.perf_counter() - self.began)
        except OSError as e:
            print(f"qtt: --qtt-html {self.path}: the page could not be written: {e}", file=sys.stderr)
