"""The ``qtt`` command. A thin adapter: every subcommand calls :mod:`qtt.harness`."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qtt import __version__, cli_import, cli_upgrade
from qtt import cli_inputs as inputs
from qtt import cli_run_options as run_options
from qtt.errors import QttError
from qtt.harness.selection import HISTORICAL_ROOT

if TYPE_CHECKING:
    from qtt.harness.results import CaseResult
    from qtt.harness.session import Outcome, Selection

DESCRIPTION = """\
qtt replays streaming-SQL cases (ksqlDB's QTT format) through execution plans built on
Apache Spark Structured Streaming, and compares the outputs with the expected ones.
"""

EPILOG = """\
examples:
  qtt run                          replay every case under ./cases and every plan under ./historical_plans
  qtt run cases/filters.json -k null --json report.json
  qtt run ../ksql/query-validation-tests/
  qtt run ../ksql/historical_plans/   replay ksqlDB's own persisted plans, translated into qtt's
  qtt import-ksqldb ../ksql/historical_plans/sum_-_sum_int   keep them under ./historical_plans
  qtt check                        fail if any case's plan differs from its newest persisted plan
  qtt snapshot --dry-run           show which plans a release would persist, and why

environment:
  QTT_SPARK_MASTER          Spark master: local[N] (default local[2]), spark://host:7077, sc://host:15002
  QTT_SCHEMA_REGISTRY_URL   a schema registry for the registry formats (default: embedded, one per replay)
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``qtt`` console script; returns the exit status."""
    for stream in (sys.stdout, sys.stderr):
        # a case name may hold a lone surrogate (a "\udcff" escape in JSON): print it, never crash on it
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "schema_registry", None):
        from qtt.serde.registry.registry_container import RegistryUnavailable, resolve
        from qtt.serde.registry.schema_registry import REGISTRY_URL_ENV

        try:
            os.environ[REGISTRY_URL_ENV] = resolve(args.schema_registry)
        except RegistryUnavailable as e:
            print(f"qtt: {e}", file=sys.stderr)
            return 2
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    previous = _on_sigterm_raise()
    try:
        if getattr(args, "spark", None):
            return _under_spark(args, list(sys.argv[1:] if argv is None else argv))
        return int(args.handler(args))
    except QttError as e:
        print(f"qtt: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("qtt: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("qtt: terminated", file=sys.stderr)
        return 143
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _under_spark(args: argparse.Namespace, argv: list[str]) -> int:
    """The command under another pyspark, in its own environment (a snapshot stores checkpoints only)."""
    from qtt.harness import spark_envs

    command = spark_envs.without_spark_option(argv)
    if args.command == "snapshot" and not args.checkpoints_only:
        command.append("--checkpoints-only")
    return spark_envs.rerun(args.spark, command, lambda line: print(f"qtt: {line}", file=sys.stderr, flush=True))


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every ``finally`` cleans up as on SIGINT."""


def _on_sigterm_raise() -> Any:
    """Turn SIGTERM into :class:`Terminated`; returns the handler it replaced (None off the main thread)."""

    def terminated(_signum: int, _frame: object) -> None:
        raise Terminated

    try:
        return signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread: leave the signal alone
        return None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qtt",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"qtt {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run_options.add(commands).set_defaults(handler=_run)
    _add_snapshot(commands)
    _add_check(commands)
    _add_bench(commands)
    _add_matrix(commands)
    cli_import.add(commands)
    cli_upgrade.add(commands)
    return parser


def _run(args: argparse.Namespace) -> int:
    from qtt.harness import selection
    from qtt.harness.progress import ProgressLine
    from qtt.harness.session import run_selection, select, stale_plans
    from qtt.harness.upkeep import quarantine

    began = time.perf_counter()
    jsonl = _jsonl_option(args)
    inputs.check_output(args.html, "--html")
    given = args.paths or selection.default_paths(historical=True)
    if not given:
        print("qtt: no PATH given and no ./cases directory here", file=sys.stderr)
        return 2
    chosen = select(given, args.keyword, args.shard)
    if args.last_failed:
        chosen = _last_failed(chosen)
    if chosen.nothing_selected:
        return inputs.nothing("run", given, args.keyword, found=chosen.found)
    if args.shard and chosen.shard_is_empty:
        # a legitimate outcome when N machines share a small selection: not a usage error
        print(
            f"qtt run: shard {args.shard} holds none of the {chosen.selected} selected item(s); nothing to run",
            file=sys.stderr,
        )
        return 0
    marks = quarantine.load(Path.cwd())  # a malformed mark stops the run before Spark starts
    inputs.apply_time_limit(args)
    print(_header(chosen, args.scenario), file=sys.stderr)
    with ProgressLine(sys.stderr, quiet=args.quiet, began=began) as line:
        outcome = run_selection(
            chosen,
            scenario_names=args.scenario,
            seed=args.seed,
            progress_for=line.stage,
            exitfirst=args.exitfirst,
            quarantine=marks,
        )
    return _report(outcome, stale_plans(chosen), args, began, jsonl)


def _report(ran: Outcome, stale: list[CaseResult], args: argparse.Namespace, began: float, jsonl: str | None) -> int:
    """What a run prints and writes after it ran, and its exit status."""
    from qtt.harness import lastfailed, report

    for drifted in ran.drift:
        print(f"DRIFT {drifted}", file=sys.stderr)
    _print_results(ran.results, args)
    _print_updates(ran.results, args)
    _print_stale(stale, ran.not_run)
    print(f"{len(ran.results)} variant(s): {report.summary(ran.results)} in {time.perf_counter() - began:.1f}s")
    lastfailed.record([*ran.results, *stale])
    if jsonl:  # after the summary: a report that cannot be written loses no result
        report.write_json([*ran.results, *stale], jsonl)
    if args.html:
        title = f"qtt {__version__} run: {' '.join(args.paths) or 'cases, historical_plans'}"
        inputs.write_html([*ran.results, *stale], args.html, title=title, seconds=time.perf_counter() - began)
    return max(report.exit_status(ran.results), 1 if stale else 0)


def _jsonl_option(args: argparse.Namespace) -> str | None:
    """``--jsonl FILE`` (``--json`` is its former name), checked before anything runs."""
    if args.json_alias and not args.jsonl:
        print("qtt run: --json writes JSON Lines and is now called --jsonl", file=sys.stderr)
    path = args.jsonl or args.json_alias
    inputs.check_output(path, "--jsonl" if args.jsonl else "--json")
    return str(path) if path else None


def _last_failed(chosen: Selection) -> Selection:
    """``--lf``: the selected cases that failed last time, or all of them (saying why)."""
    from qtt.harness import lastfailed

    failed = lastfailed.load()
    kept = lastfailed.keep(chosen, failed) if failed else None
    if kept is None or kept.shard_is_empty:
        why = f"none of the {len(failed)} recorded failure(s) is selected" if failed else "no failure is recorded"
        print(f"qtt run --lf: {why}; running everything selected", file=sys.stderr)
        return chosen
    return kept


def _header(chosen: Selection, scenario_names: Sequence[str] | None) -> str:
    """The line naming what a run holds, before anything runs."""
    from qtt.harness.replay.scenarios import RESTORED, RESTORES

    broken = len(chosen.unloadable)
    restores = sum(1 for name in scenario_names or (RESTORED,) if name in RESTORES)
    restorable = len(chosen.restorable()) * restores if chosen.folders else 0
    return (
        f"qtt {__version__}{f' shard {chosen.shard}' if chosen.shard else ''}: "
        f"{len(chosen.variants)} case variant(s) in {len(chosen.files)} file(s)"
        + (f", {broken} case(s) that do not load" if broken else "")
        + (f", {len(chosen.folders)} historical plan(s)" if chosen.folders else "")
        + (f" and {restorable} stored checkpoint(s) to restore" if restorable else "")
        + (f", {len(chosen.sql_tests)} SQL test(s)" if chosen.sql_tests else "")
        + (f", {len(chosen.ksqldb_folders)} ksqlDB plan(s)" if chosen.ksqldb_folders else "")
    )


def _print_stale(stale: Sequence[CaseResult], not_run: int) -> None:
    """Out-of-date plans (as ``qtt check`` finds them), and what ``-x`` left out."""
    from qtt.harness import report

    for result in stale:
        print()
        print(report.render_failure(result))
    if stale:
        print(f"{len(stale)} plan(s) out of date: `qtt snapshot` persists them (`qtt check` shows every diff)")
    if not_run:
        print(f"stopped at the first failure (-x): {not_run} selected item(s) not run")


def _print_results(results: Sequence[CaseResult], args: argparse.Namespace) -> None:
    """Per-file lines, each failure with its diff, skips with their reasons, and ``--json``."""
    from qtt.harness import report
    from qtt.harness.status import Status
    from qtt.harness.upkeep.quarantine import passes_now

    if not args.quiet:
        for file, line in report.file_lines(results):
            print(f"{file} {line}")
    if args.verbose:
        for result in results:
            print(f"{result.status.upper()} {result.file}: {result.label} ({result.seconds:.2f}s)")
    for result in results:
        if result.status.bad:
            print()
            print(report.render_failure(result))
        elif result.status == Status.QUARANTINED:
            print(f"QUARANTINED {result.file}: {result.label}: {result.reason.splitlines()[0]}")
        elif result.status == Status.SKIPPED and not args.quiet:
            print(f"SKIPPED {result.file}: {result.label}: {result.reason}")
        elif passes_now(result):
            print(f"PASSES NOW {result.file}: {result.label}: {result.reason}")
    if args.per_file:
        for file, counts in report.per_file(results):
            print(f"{file}: {counts}")


def _print_updates(results: Sequence[CaseResult], args: argparse.Namespace) -> None:
    """``--update``: write the actual outputs of the cases that failed on them; say what was written."""
    if not args.update:
        return
    from qtt.harness.update import update_outputs

    print()
    for line in update_outputs(results).lines():
        print(line)


def _add_snapshot(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    snapshot = commands.add_parser(
        "snapshot",
        help="persist a new historical plan for every case whose plan is new or changed",
        description="The release tool. For every case variant under PATH, plan it with today's engine; "
        "if no plan is persisted yet or the plan differs from the newest persisted one, replay it and, "
        "if the replay passes, write historical_plans/<case-slug>/<version>_<epoch-ms>/ with plan.json, "
        "spec.json and topology. A plan with state also stores its Spark checkpoint at the restore point "
        "(the input marked qttRestorePoint, else the middle one) as checkpoint.tar.gz with checkpoint.json, "
        "and gets a new folder when its newest one has no checkpoint or one written by another Spark "
        "version (with --spark, an older line writes its own beside today's). Existing folders are never "
        "changed. Prints what was added and why "
        "(a diff of the steps), with progress on stderr. Exit status: 0 when every new or changed plan was "
        "written, 1 when a case could not be snapshotted or does not load, 2 on a usage error or when there "
        "is nothing to snapshot.",
    )
    inputs.add_cases_and_root(snapshot)
    inputs.add_registry_option(snapshot)
    snapshot.add_argument("--dry-run", action="store_true", help="replay and report, but write nothing")
    snapshot.add_argument("-k", metavar="TEXT", dest="keyword", help="only cases whose name contains TEXT")
    snapshot.add_argument(
        "--spark",
        metavar="VERSION",
        help="store the checkpoints pyspark VERSION writes (an older line), in an environment of its own made "
        "on first use under .qtt_cache/spark/VERSION: a new folder for every stateful case whose plan is up "
        "to date and has no checkpoint written by that version; implies --checkpoints-only",
    )
    snapshot.add_argument(
        "--checkpoints-only",
        action="store_true",
        help="store checkpoints only: a case whose plan is new or changed is reported as not snapshotted "
        "(persist its plan on today's line first)",
    )
    snapshot.set_defaults(handler=_snapshot)


def _snapshot(args: argparse.Namespace) -> int:
    from qtt.harness.historical.snapshot import Action, snapshot
    from qtt.harness.progress import ProgressLine
    from qtt.harness.selection import default_paths

    began = time.perf_counter()
    given = args.paths or default_paths(historical=False)
    variants, broken = inputs.load_variants(given, args.keyword)
    if not (variants or broken):
        return inputs.nothing("snapshot", given, args.keyword, found=inputs.any_case(given))
    historical = Path(args.historical)
    if (status := inputs.outside_project(variants, historical)) is not None:
        return status

    def phase(line: str) -> None:
        print(f"qtt snapshot{' --dry-run' if args.dry_run else ''}: {line}", file=sys.stderr, flush=True)

    with ProgressLine(sys.stderr, began=began) as progress:
        entries = snapshot(
            variants,
            root=historical,
            dry_run=args.dry_run,
            phase=phase,
            progress=progress.stage("case variants"),
            checkpoints_only=args.checkpoints_only,
        )
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.action] = counts.get(entry.action, 0) + 1
        if entry.action in (Action.ADDED, Action.WOULD_ADD):
            where = entry.folder or historical / entry.slug
            print(f"{entry.action.upper()} {where}: {entry.variant.label} ({entry.reason})")
            for line in entry.diff[:60]:
                print(f"    {line}")
        elif entry.action == Action.NOT_SNAPSHOTTED:
            print(f"NOT SNAPSHOTTED {entry.variant.file}: {entry.variant.label}: {entry.reason}")
    if broken:
        counts["that do not load"] = broken
    print(", ".join(f"{n} {action}" for action, n in sorted(counts.items())))
    return 1 if counts.get(Action.NOT_SNAPSHOTTED) or broken else 0


def _add_check(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "check",
        help="fail if today's plan of any case differs from its newest persisted plan",
        description="The up-to-date check (no Spark needed): plans every case variant under PATH and "
        "compares the canonical plan with the newest one persisted under historical_plans/. Each case is "
        "one of: up to date; changed (its step diff is printed); new (never persisted); unsupported (it "
        "uses a feature qtt does not support yet, named); expected error or disabled (it has no plan by "
        "design); error (it does not plan: the statement and the place). One line per case that is not "
        "up to date, then the counts under the same words. `qtt snapshot` persists changed and new plans. "
        "Exit status: 0 when no plan is changed, new or corrupt and every case loads and plans "
        "(unsupported cases do not fail it, as `qtt run` skips them), 1 otherwise, 2 on a usage error or "
        "when there is no case to check. It also hashes every historical folder against "
        "historical_plans/ledger.sha256 and fails on a corrupt one.",
    )
    inputs.add_cases_and_root(check)
    check.add_argument("-k", metavar="TEXT", dest="keyword", help="only cases whose name contains TEXT")
    check.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print a line for each case that expects an error or is disabled",
    )
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    from qtt.harness.historical import ledger, uptodate
    from qtt.harness.selection import default_paths
    from qtt.harness.upkeep import project_check, quarantine

    given = args.paths or default_paths(historical=False)
    variants, broken = inputs.load_variants(given, args.keyword)
    if not (variants or broken):
        return inputs.nothing("check", given, args.keyword, found=inputs.any_case(given))
    historical = Path(args.historical)
    if (status := inputs.outside_project(variants, historical)) is not None:
        return status
    entries = uptodate.check(variants, historical)
    failing = [e for e in entries if not e.ok]
    quiet = (uptodate.PlanStatus.UP_TO_DATE.value,) + (() if args.verbose else uptodate.BY_DESIGN)
    for entry in entries:
        if entry.label not in quiet:
            print("\n".join(entry.lines()))
    golden = uptodate.check_ledger(historical)
    for folder, reason in golden.corrupt:
        print(f"CORRUPT {folder}: {reason}")
    print(
        uptodate.summary(entries, unloadable=broken)
        + (f", {len(golden.corrupt)} corrupt historical folder(s)" if golden.corrupt else "")
        + (f", {len(golden.unrecorded)} folder(s) not in the ledger yet" if golden.unrecorded else "")
    )
    hints = [e.hint for e in failing] + [ledger.corrupt_hint(folder) for folder, _ in golden.corrupt]
    hints += ["qtt snapshot records the folders the ledger does not hold yet"] if golden.unrecorded else []
    for hint in dict.fromkeys(hints):
        print(f"hint: {hint}")
    whole = not (args.paths or args.keyword or broken)  # orphans and completeness: of the whole project
    lines, complete = project_check.lines(historical, entries) if whole else ([], True)
    marks, expired = quarantine.check_lines(quarantine.load(historical.parent), __version__)
    sys.stdout.writelines(f"{line}\n" for line in [*lines, *marks])
    return 1 if failing or broken or golden.corrupt or expired or not complete else 0


def _add_bench(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser(
        "bench",
        help="measure replay cost against Spark's own floor on this machine",
        description="Start Spark, measure the floor (one query start, one micro-batch of a "
        "trivial query), replay every case variant and historical plan under PATH, and print the "
        "JVM start, the floor, the median seconds per case variant and per historical plan "
        "(stateless and stateful apart), replays per minute, and each figure's ratio to the floor. "
        "Cases that run in several formats ({FORMAT} variants, including JSON) also replay once per "
        "format, as batches of their own, and each format is compared with JSON on the same cases. "
        "A PATH that holds ksqlDB's historical plans is a section of its own: every folder translated and "
        "replayed (equal plans once), its replays per minute counting every folder.",
    )
    bench.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="case files or directories, historical plan folders, ksqlDB historical plan trees "
        "(default: ./cases and ./historical_plans)",
    )
    bench.add_argument("--repetitions", type=int, default=3, help="repetitions of each floor measurement")
    inputs.add_registry_option(bench)
    bench.add_argument("--json", metavar="FILE", help="also write the figures as JSON to FILE")
    bench.set_defaults(handler=_bench)


def _bench(args: argparse.Namespace) -> int:
    from qtt import bench
    from qtt.harness.selection import default_paths, split_ksqldb, split_paths

    inputs.check_output(args.json)
    rest, ksqldb = split_ksqldb(args.paths or default_paths(historical=True))
    paths, folders = split_paths(rest)
    figures = bench.run(paths, folders, ksqldb=ksqldb, repetitions=args.repetitions)
    print(bench.render(figures))
    if args.json:
        bench.write_json(figures, args.json)
    return figures.exit_status


def _add_matrix(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    matrix = commands.add_parser(
        "matrix",
        help="restore every stored checkpoint and print the compatibility matrix (cases by writer line)",
        description="Restores every stored checkpoint under PATH on today's Spark, as qtt run does, and "
        "prints a Markdown table: a row per stateful case, a column per Spark line that wrote its "
        "checkpoints, each cell passed or the verdict with its reason. Exit status: 0 when every restore "
        "passed, 1 otherwise, 2 when there is no stored checkpoint under PATH.",
    )
    matrix.add_argument(
        "paths", nargs="*", metavar="PATH", help="historical folders or directories (default: ./historical_plans)"
    )
    matrix.add_argument("--out", metavar="FILE", help="write the matrix into FILE instead of stdout")
    matrix.set_defaults(handler=_matrix)


def _matrix(args: argparse.Namespace) -> int:
    from qtt.harness import whole_file
    from qtt.harness.historical.matrix import render
    from qtt.harness.progress import ProgressLine
    from qtt.harness.session import Kind, run_items, stored_checkpoints
    from qtt.runtime.spark.lines import pyspark_version

    given = args.paths or [HISTORICAL_ROOT]
    stored = stored_checkpoints(given)
    if not stored:
        print(f"qtt matrix: no stored checkpoint under {' '.join(given)}", file=sys.stderr)
        return 2
    inputs.check_output(args.out, "--out")
    with ProgressLine(sys.stderr, began=time.perf_counter()) as line:
        results = run_items(Kind.RESTORED, stored, progress=line.stage(Kind.RESTORED))
    text = render(results, pyspark_version())
    if args.out:
        whole_file.write_whole(args.out, text)
    else:
        print(text, end="")
    return 0 if all(result.status == "passed" for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
