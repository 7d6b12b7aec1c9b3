"""The options of ``qtt run``: what it replays, how, and what it writes."""

from __future__ import annotations

import argparse

from qtt import cli_inputs as inputs
from qtt.errors import QttError
from qtt.harness.shard import Shard
from qtt.harness.shard import parse as parse_shard


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """The ``run`` subcommand's parser, its handler not yet set."""
    run = commands.add_parser(
        "run",
        help="replay cases and report passed, failed, skipped and errored variants",
        description="Replay every case variant found under PATH (files or directories of *.json) "
        "and compare its outputs with the expected ones; run every SQL test of *.sql files (statements, "
        "query upgrades and ASSERTs in order). Prints one line per file "
        "(. passed, F failed, s skipped, E error, I infrastructure error, T timed out), then every failure "
        "with a labelled diff, then a summary. Exit status: 0 when nothing failed, 1 when a "
        "variant failed, errored or timed out, 2 on a usage error or when there is nothing to run, 3 when "
        "the only bad results are infrastructure errors (Spark could not run a replay: nothing "
        "was proven either way).",
    )
    run.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="case files (*.json), SQL test files (*.sql) or directories; historical_plans/, one case's "
        "historical_plans/<slug>/, or one <slug>/<version>_<ms>/ folder; ksqlDB's own historical_plans tree, "
        "a case folder or a version folder of it, translated into qtt's plans (default: ./cases and "
        "./historical_plans)",
    )
    run.add_argument(
        "--jsonl",
        metavar="FILE",
        help="write the report as JSON Lines to FILE: one JSON object per line, one line per result "
        "(case variant, SQL test, historical or restored folder, out-of-date plan)",
    )
    run.add_argument("--json", metavar="FILE", dest="json_alias", help=argparse.SUPPRESS)
    run.add_argument(
        "-k",
        metavar="TEXT",
        dest="keyword",
        help="only variants whose case name (or [variant]) contains TEXT, ignoring case, and the historical "
        "plans recorded for such a case",
    )
    run.add_argument(
        "--shard",
        metavar="K/N",
        type=_shard,
        help="run only shard K of N: a deterministic 1/N of the case variants and historical plans, by a "
        "stable hash of each one's name (N machines with 1/N .. N/N together run everything once)",
    )
    run.add_argument(
        "--scenario",
        metavar="NAME[,NAME]",
        type=_scenarios,
        help="run under these scenarios (default: fresh, and restored for historical folders with a stored "
        "checkpoint): fresh (from empty state), restored (from a folder's stored checkpoint), restart (stop "
        "after every micro-batch and start again from the checkpoint), rebatch (other micro-batch splits, "
        "seeded by --seed), batch (all inputs as one bounded batch query), swap and swap-restart (the plan "
        "swapped in place for itself at control events, checked by the cutover invariant, see "
        "docs/upgrades.md); restored-partitions, "
        "restored-hdfs, restored-format2, restored-no-changelog (restored after one of Spark's upgrade "
        "operations, see docs/spark-upgrades.md). A scenario is compared "
        "with the fresh replay of the same case; one a plan cannot run under is skipped with the reason",
    )
    run.add_argument("--seed", type=int, default=0, help="the seed of the rebatch scenario's splits (default 0)")
    run.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    run.add_argument(
        "-v", "--verbose", action="store_true", help="also print one line per result: status, label and seconds"
    )
    run.add_argument(
        "-x",
        "--exitfirst",
        action="store_true",
        help="stop after the first failure: run one case file (then one SQL test file, one case's historical "
        "folders) at a time and stop after the first that holds a failure or error",
    )
    run.add_argument(
        "--lf",
        "--last-failed",
        dest="last_failed",
        action="store_true",
        help="rerun only the cases that failed in the last run here (recorded in .qtt_cache/); everything "
        "selected when none is recorded",
    )
    inputs.add_registry_option(run)
    inputs.add_time_limit_option(run)
    inputs.add_html_option(run)
    run.add_argument("--per-file", action="store_true", help="also print passed/failed/skipped/error counts per file")
    run.add_argument(
        "--update",
        action="store_true",
        help="write the actual outputs of the cases that failed on their outputs into their case files (each "
        "case's outputs array, laid out like the file; nothing else in it changes), for review with git diff; "
        "refuses, saying why, a case whose variants disagree, that expects an exception or whose variant "
        "errored; never writes SQL test files or historical_plans/. The exit status is still the run's",
    )
    run.add_argument(
        "--spark",
        metavar="VERSION",
        help="run this command under pyspark VERSION (a candidate before the pin moves, or an older line), "
        "in an environment of its own made on first use under .qtt_cache/spark/VERSION; the project's "
        "environment is not touched. Prints what breaks and why, as any run does",
    )
    return run


def _scenarios(text: str) -> tuple[str, ...]:
    """``--scenario NAME[,NAME]``, read for argparse."""
    from qtt.harness.replay import scenarios  # its comparison pulls in deepdiff: only when asked for

    try:
        return scenarios.parse(text)
    except QttError as e:
        raise argparse.ArgumentTypeError(e.message) from None


def _shard(text: str) -> Shard:
    """``--shard K/N``, read for argparse (which reports the error as a usage error)."""
    try:
        return parse_shard(text)
    except QttError as e:
        raise argparse.ArgumentTypeError(e.message) from None
