"""The QTT harness: case files, replay, comparison, historical plans and reports.

Subpackages, lowest layer first: :mod:`~qtt.harness.cases` (the case-file model and loader),
:mod:`~qtt.harness.replay` (driver, runner, scenarios, comparison),
:mod:`~qtt.harness.historical` (the plan store, snapshot, check, historical and restored
replays) and :mod:`~qtt.harness.sqltests` (SQL test files).

The CLI, the pytest plugin and the benchmark are thin adapters over these entry points:

- :func:`qtt.harness.session.select` and :func:`~qtt.harness.session.run_selection`: one run
  session, from what a command line names to results in report order;
  :func:`~qtt.harness.session.run_items` runs items of one kind;
- :func:`qtt.harness.selection.split_paths`, :func:`~qtt.harness.selection.load_variants`:
  which cases and historical plan folders a command names;
- :func:`qtt.harness.replay.runner.run_variants` with :func:`~qtt.harness.replay.runner.spark_session`:
  plan, replay and compare case variants;
- :func:`qtt.harness.historical.replay.replay_folders`: replay persisted plans;
- :func:`qtt.harness.historical.uptodate.check` and :func:`qtt.harness.historical.snapshot.snapshot`: the plan
  check and the release tool;
- :mod:`qtt.harness.report`: the JSON Lines report and failure rendering, by
  :class:`~qtt.harness.status.Status`;
- :func:`qtt.harness.session.stale_plans`: the up-to-date check of a run's own cases;
- :class:`qtt.harness.progress.ProgressLine`, :mod:`qtt.harness.lastfailed` and
  :func:`qtt.harness.update.update_outputs`: a run's progress, ``--lf`` and ``--update``.
"""

from __future__ import annotations

from qtt.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "select": "qtt.harness.session",
        "run_selection": "qtt.harness.session",
        "run_items": "qtt.harness.session",
        "split_paths": "qtt.harness.selection",
        "load_variants": "qtt.harness.selection",
        "run_variants": "qtt.harness.replay.runner",
        "spark_session": "qtt.harness.replay.runner",
        "replay_folders": "qtt.harness.historical.replay",
        "check": "qtt.harness.historical.uptodate",
        "snapshot": "qtt.harness.historical.snapshot",
        "Status": "qtt.harness.status",
    },
)
