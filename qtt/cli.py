"""The ``qtt`` command. A thin adapter: every subcommand calls :mod:`qtt.harness`."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from qtt import __version__
from qtt.errors import QttError
from qtt.harness.selection import HISTORICAL_ROOT

if TYPE_CHECKING:
    from qtt.harness.model import CaseVariant

DESCRIPTION = """\
qtt replays streaming-SQL cases (ksqlDB's QTT format) through execution plans built on
Apache Spark Structured Streaming, and compares the outputs with the expected ones.
"""

EPILOG = """\
examples:
  qtt run                          replay every case under ./cases and every plan under ./historical_plans
  qtt run cases/filters.json -k null --json report.json
  qtt run ../ksql/query-validation-tests/
  qtt check                        fail if any case's plan differs from its newest persisted plan
  qtt snapshot --dry-run           show which plans a release would persist, and why

environment:
  QTT_SPARK_MASTER   Spark master: local[N] (default local[2]), spark://host:7077, sc://host:15002
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``qtt`` console script; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args))
    except QttError as e:
        print(f"qtt: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("qtt: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qtt",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"qtt {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="replay cases and report passed, failed, skipped and errored variants",
        description="Replay every case variant found under PATH (files or directories of *.json) "
        "and compare its outputs with the expected ones. Prints one line per file "
        "(. passed, F failed, s skipped, E error), then every failure with a labelled "
        "diff, then a summary. Exit status: 0 when nothing failed, 1 when a variant "
        "failed or errored, 2 on a usage error.",
    )
    run.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="case files or directories; historical_plans/, one case's historical_plans/<slug>/, or one "
        "<slug>/<version>_<ms>/ folder (default: ./cases and ./historical_plans)",
    )
    run.add_argument("--json", metavar="FILE", help="write one JSON object per case variant to FILE")
    run.add_argument(
        "-k",
        metavar="TEXT",
        dest="keyword",
        help="only variants whose case name (or [variant]) contains TEXT, ignoring case",
    )
    run.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    run.add_argument(
        "--per-file",
        action="store_true",
        help="also print passed/failed/skipped/error counts per file",
    )
    run.set_defaults(handler=_run)
    _add_snapshot(commands)
    _add_check(commands)
    _add_bench(commands)
    return parser


def _run(args: argparse.Namespace) -> int:
    from qtt.harness import report, selection
    from qtt.harness.loader import discover, load_file
    from qtt.harness.runner import CaseResult, run_variants, spark_session
    from qtt.harness.status import Status

    began = time.perf_counter()
    given = args.paths or selection.default_paths(historical=True)
    if not given:
        print("qtt: no PATH given and no ./cases directory here", file=sys.stderr)
        return 2
    paths, folders = selection.split_paths(given)
    files = discover(paths)
    variants: list[CaseVariant] = []
    # (file position, case position, result): the report follows the files' own order
    placed: list[tuple[int, int, CaseResult]] = []
    keyword = (args.keyword or "").lower()
    for file_index, path in enumerate(files):
        try:
            loaded = load_file(path, display=str(path))
        except QttError as unreadable:  # one error for the file; the other files go on
            placed.append((file_index, -1, report.load_error_result(str(path), unreadable)))
            continue
        for error in loaded.errors:
            if keyword in (error.case or "").lower():
                placed.append((file_index, _case_index(error.path), report.load_error_result(str(path), error)))
        variants.extend(v for v in loaded.variants if keyword in v.label.lower())
    broken = len(placed)
    print(
        f"qtt {__version__}: {len(variants)} case variant(s) in {len(files)} file(s)"
        + (f", {broken} case(s) that do not load" if broken else "")
        + (f", {len(folders)} historical plan(s)" if folders else ""),
        file=sys.stderr,
    )

    live = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if args.quiet:
            return
        line = f"  replayed {done}/{total} queries ({time.perf_counter() - began:.0f}s)"
        print(
            "\r" + line if live else line,
            end="" if live and done < total else "\n",
            file=sys.stderr,
            flush=True,
        )

    file_order = {str(path): i for i, path in enumerate(files)}
    for variant, result in zip(variants, run_variants(variants, spark_session, progress=progress), strict=True):
        placed.append((file_order[variant.file], variant.index, result))
    placed.sort(key=lambda entry: entry[:2])  # stable: variants of one case keep their order
    results = [result for _, _, result in placed]
    if folders:
        from qtt.harness.historical_replay import replay_folders

        historical = replay_folders(folders, spark_session, progress=progress)
        results += historical
        for folder_result in historical:
            for line in folder_result.drift:
                print(f"DRIFT {folder_result.file}: {line}", file=sys.stderr)
    if not args.quiet:
        for file, line in report.file_lines(results):
            print(f"{file} {line}")
    for result in results:
        if result.status.bad:
            print()
            print(report.render_failure(result))
        elif result.status == Status.SKIPPED and not args.quiet:
            print(f"SKIPPED {result.file}: {result.label}: {result.reason}")
    if args.per_file:
        for file, counts in report.per_file(results):
            print(f"{file}: {counts}")
    if args.json:
        report.write_json(results, args.json)
    elapsed = time.perf_counter() - began
    print(f"{len(results)} variant(s): {report.summary(results)} in {elapsed:.1f}s")
    return 1 if any(r.status.bad for r in results) else 0


def _load_variants(paths: Sequence[str], keyword: str | None) -> list[CaseVariant]:
    from qtt.harness.selection import load_variants

    variants, errors = load_variants(paths, keyword)
    for error in errors:
        print(f"qtt: {error}", file=sys.stderr)
    return variants


def _add_snapshot(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    snapshot = commands.add_parser(
        "snapshot",
        help="persist a new historical plan for every case whose plan is new or changed",
        description="The release tool. For every case variant under PATH, plan it with today's engine; "
        "if no plan is persisted yet or the plan differs from the newest persisted one, replay it and, "
        "if the replay passes, write historical_plans/<case-slug>/<version>_<epoch-ms>/ with plan.json, "
        "spec.json and topology. Existing folders are never changed. Prints what was added and why "
        "(a diff of the steps). Exit status 1 if a changed case could not be snapshotted.",
    )
    _add_cases_and_root(snapshot)
    snapshot.add_argument("--dry-run", action="store_true", help="replay and report, but write nothing")
    snapshot.add_argument("-k", metavar="TEXT", dest="keyword", help="only cases whose name contains TEXT")
    snapshot.set_defaults(handler=_snapshot)


def _add_cases_and_root(command: argparse.ArgumentParser) -> None:
    command.add_argument("paths", nargs="*", metavar="PATH", help="case files or directories (default: ./cases)")
    command.add_argument(
        "--historical",
        metavar="DIR",
        default=HISTORICAL_ROOT,
        help="the historical plans directory (default: ./historical_plans)",
    )


def _snapshot(args: argparse.Namespace) -> int:
    from qtt.harness.runner import spark_session
    from qtt.harness.selection import default_paths
    from qtt.harness.snapshot import Action, snapshot

    variants = _load_variants(args.paths or default_paths(historical=False), args.keyword)
    entries = snapshot(variants, spark_session, root=Path(args.historical), dry_run=args.dry_run)
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.action] = counts.get(entry.action, 0) + 1
        if entry.action in (Action.ADDED, Action.WOULD_ADD):
            where = entry.folder or Path(args.historical) / entry.slug
            print(f"{entry.action.upper()} {where}: {entry.variant.label} ({entry.reason})")
            for line in entry.diff[:60]:
                print(f"    {line}")
        elif entry.action == Action.NOT_SNAPSHOTTED:
            print(f"NOT SNAPSHOTTED {entry.variant.file}: {entry.variant.label}: {entry.reason}")
    print(", ".join(f"{n} {action}" for action, n in sorted(counts.items())) or "no case variants")
    return 1 if counts.get(Action.NOT_SNAPSHOTTED) else 0


def _add_check(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "check",
        help="fail if today's plan of any case differs from its newest persisted plan",
        description="The up-to-date check (no Spark needed): plans every case variant under PATH and "
        "compares the canonical plan with the newest one persisted under historical_plans/. Prints the "
        "step diff of every case that changed, and exits 1 if any did; `qtt snapshot` fixes it.",
    )
    _add_cases_and_root(check)
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    from qtt.harness import uptodate
    from qtt.harness.selection import default_paths

    entries = uptodate.check(_load_variants(args.paths or default_paths(historical=False), None), Path(args.historical))
    stale = [e for e in entries if not e.ok]
    for entry in stale:
        print(f"{entry.status.upper()} {entry.variant.file}: {entry.variant.label}: {entry.reason}")
        for line in entry.diff[:40]:
            print(f"    {line}")
    up = sum(1 for e in entries if e.status == uptodate.PlanStatus.UP_TO_DATE)
    skipped = sum(1 for e in entries if e.status == uptodate.PlanStatus.SKIPPED)
    print(f"{up} up to date, {len(stale)} out of date, {skipped} without a plan")
    if stale:
        print(f"hint: {uptodate.HINT}")
    return 1 if stale else 0


def _add_bench(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser(
        "bench",
        help="measure replay cost against Spark's own floor on this machine",
        description="Start Spark, measure the floor (one query start, one micro-batch of a "
        "trivial query), replay every case variant and historical plan under PATH, and print the "
        "JVM start, the floor, the median seconds per case variant and per historical plan "
        "(stateless and stateful apart), replays per minute, and each figure's ratio to the floor.",
    )
    bench.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="case files or directories, and historical plan folders (default: ./cases and ./historical_plans)",
    )
    bench.add_argument("--repetitions", type=int, default=3, help="repetitions of each floor measurement")
    bench.add_argument("--json", metavar="FILE", help="also write the figures as JSON to FILE")
    bench.set_defaults(handler=_bench)


def _bench(args: argparse.Namespace) -> int:
    from qtt import bench
    from qtt.harness.selection import default_paths, split_paths

    paths, folders = split_paths(args.paths or default_paths(historical=True))
    figures = bench.run(paths, folders, repetitions=args.repetitions)
    print(bench.render(figures))
    if args.json:
        bench.write_json(figures, args.json)
    return 0


def _case_index(path: str | None) -> int:
    """The position of the case a JSON path points into (``$.tests[3]...`` -> 3)."""
    import re

    match = re.match(r"\$\.tests\[(\d+)\]", path or "")
    return int(match.group(1)) if match else -1


if __name__ == "__main__":
    sys.exit(main())
