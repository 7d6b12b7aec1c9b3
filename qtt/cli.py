"""The ``qtt`` command. A thin adapter: every subcommand calls :mod:`qtt.harness`."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from qtt import __version__
from qtt.errors import QttError

DEFAULT_PATHS = ("cases",)

DESCRIPTION = """\
qtt replays streaming-SQL cases (ksqlDB's QTT format) through execution plans built on
Apache Spark Structured Streaming, and compares the outputs with the expected ones.
"""

EPILOG = """\
examples:
  qtt run                          replay every case under ./cases
  qtt run cases/filters.json -k null --json report.json
  qtt run ../ksql/query-validation-tests/

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
        "paths", nargs="*", metavar="PATH", help="case files or directories (default: ./cases)"
    )
    run.add_argument(
        "--json", metavar="FILE", help="write one JSON object per case variant to FILE"
    )
    run.add_argument(
        "-k",
        metavar="TEXT",
        dest="keyword",
        help="only variants whose case name (or [variant]) contains TEXT, ignoring case",
    )
    run.add_argument(
        "-q", "--quiet", action="store_true", help="print only failures and the summary"
    )
    run.add_argument(
        "--per-file",
        action="store_true",
        help="also print passed/failed/skipped/error counts per file",
    )
    run.set_defaults(handler=_run)
    _add_bench(commands)
    return parser


def _run(args: argparse.Namespace) -> int:
    from qtt.harness import report
    from qtt.harness.loader import discover, load_file
    from qtt.harness.model import CaseVariant
    from qtt.harness.runner import ERROR, FAILED, SKIPPED, CaseResult, run_variants
    from qtt.runtime.session import get_session

    began = time.perf_counter()
    paths = args.paths or [p for p in DEFAULT_PATHS if Path(p).exists()]
    if not paths:
        print("qtt: no PATH given and no ./cases directory here", file=sys.stderr)
        return 2
    files = discover(paths)
    variants: list[CaseVariant] = []
    # (file position, case position, result): the report follows the files' own order
    placed: list[tuple[int, int, CaseResult]] = []
    keyword = (args.keyword or "").lower()
    for file_index, path in enumerate(files):
        try:
            loaded = load_file(path, display=str(path))
        except QttError as unreadable:  # one error for the file; the other files go on
            reason = report.without_file_and_case(unreadable)
            result = CaseResult(str(path), "(file)", "", ERROR, reason=reason, kind="load")
            placed.append((file_index, -1, result))
            continue
        for error in loaded.errors:
            if keyword in (error.case or "").lower():
                reason = report.without_file_and_case(error)
                result = CaseResult(
                    str(path), error.case or "?", "", ERROR, reason=reason, kind="load"
                )
                placed.append((file_index, _case_index(error.path), result))
        variants.extend(v for v in loaded.variants if keyword in v.label.lower())
    broken = len(placed)
    print(
        f"qtt {__version__}: {len(variants)} case variant(s) in {len(files)} file(s)"
        + (f", {broken} case(s) that do not load" if broken else ""),
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
    for variant, result in zip(
        variants, run_variants(variants, get_session, progress=progress), strict=True
    ):
        placed.append((file_order[variant.file], variant.index, result))
    placed.sort(key=lambda entry: entry[:2])  # stable: variants of one case keep their order
    results = [result for _, _, result in placed]
    if not args.quiet:
        for file, line in report.file_lines(results):
            print(f"{file} {line}")
    for result in results:
        if result.status in (FAILED, ERROR):
            print()
            print(report.render_failure(result, hint=_hint(result)))
        elif result.status == SKIPPED and not args.quiet:
            print(f"SKIPPED {result.file}: {_label(result)}: {result.reason}")
    if args.per_file:
        for file, counts in report.per_file(results):
            print(f"{file}: " + ", ".join(f"{counts.get(s, 0)} {s}" for s in report.STATUSES))
    if args.json:
        report.write_json(results, args.json)
    elapsed = time.perf_counter() - began
    print(f"{len(results)} variant(s): {report.summary(results)} in {elapsed:.1f}s")
    return 1 if any(r.status in (FAILED, ERROR) for r in results) else 0


def _add_bench(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser(
        "bench",
        help="measure replay cost against Spark's own floor on this machine",
        description="Start Spark, measure the floor (one query start, one micro-batch of a "
        "trivial query), replay every case variant under PATH, and print the JVM start, the "
        "floor, the median seconds per case variant, case variants per minute, and each "
        "figure's ratio to the floor.",
    )
    bench.add_argument(
        "paths", nargs="*", metavar="PATH", help="case files or directories (default: ./cases)"
    )
    bench.add_argument(
        "--repetitions", type=int, default=3, help="repetitions of each floor measurement"
    )
    bench.add_argument("--json", metavar="FILE", help="also write the figures as JSON to FILE")
    bench.set_defaults(handler=_bench)


def _bench(args: argparse.Namespace) -> int:
    from qtt import bench

    paths = args.paths or [p for p in DEFAULT_PATHS if Path(p).exists()]
    figures = bench.run(paths, repetitions=args.repetitions)
    print(bench.render(figures))
    if args.json:
        bench.write_json(figures, args.json)
    return 0


def _label(result: object) -> str:
    case, variant = getattr(result, "case", ""), getattr(result, "variant", "")
    return f"{case} [{variant}]" if variant else case


def _hint(result: object) -> str:
    file, case = getattr(result, "file", ""), getattr(result, "case", "")
    if getattr(result, "kind", "") == "load":
        return f"fix the case file, then check it with: qtt run {file}"
    return f"rerun it alone: qtt run {file} -k {_quote(case)}"


def _case_index(path: str | None) -> int:
    """The position of the case a JSON path points into (``$.tests[3]...`` -> 3)."""
    import re

    match = re.match(r"\$\.tests\[(\d+)\]", path or "")
    return int(match.group(1)) if match else -1


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


if __name__ == "__main__":
    sys.exit(main())
