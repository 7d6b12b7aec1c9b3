"""What the ``qtt`` subcommands share about their input: the paths and options they take,
the case variants they load, and the messages when there is nothing to do."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from qtt.errors import QttError
from qtt.harness.selection import HISTORICAL_ROOT

if TYPE_CHECKING:
    from qtt.harness.cases.model import CaseVariant
    from qtt.harness.results import CaseResult


def check_output(path: str | None, option: str = "--json") -> None:
    """Fail before any replay if ``option PATH`` cannot be written.

    Raises:
        QttError: the parent directory is missing, or the file or directory is not writable.
    """
    if not path:
        return
    target = Path(path)
    parent = target.parent
    if not parent.is_dir():
        msg = f"{option} {path}: the directory {parent} does not exist; create it or choose another path"
        raise QttError(msg)
    if target.is_dir():
        raise QttError(f"{option} {path}: is a directory; give a file name")
    if not os.access(target if target.exists() else parent, os.W_OK):
        what = "the file" if target.exists() else f"the directory {parent}"
        raise QttError(f"{option} {path}: {what} is not writable; choose another path")


def nothing(command: str, given: Sequence[str], keyword: str | None, *, found: bool) -> int:
    """Say why there is nothing to do and return the usage-error status: never a green run."""
    where = " ".join(given) if given else "./cases (there is none here)"
    if keyword and found:
        print(f"qtt {command}: -k {keyword!r} matches nothing under {where}", file=sys.stderr)
    else:
        print(f"qtt {command}: nothing to {command}: no case variant under {where}", file=sys.stderr)
    return 2


def any_case(paths: Sequence[str]) -> bool:
    """Whether ``paths`` hold any case variant at all (to tell an empty -k selection apart)."""
    from qtt.harness.selection import load_variants

    return bool(load_variants(paths)[0])


def load_variants(paths: Sequence[str], keyword: str | None) -> tuple[list[CaseVariant], int]:
    """The variants under ``paths`` and the number of cases (or files) that do not load,
    each printed on stderr."""
    from qtt.harness.selection import load_variants

    variants, errors = load_variants(paths, keyword)
    for error in errors:
        print(f"ERROR {error}", file=sys.stderr)
    return variants, len(errors)


def outside_project(variants: Sequence[CaseVariant], historical: Path) -> int | None:
    """Exit status 2 if a case file is outside the project root its slug is hashed against."""
    from qtt.harness.cases.slugs import is_outside, project_root, relative_file

    root = project_root(historical)
    outside = sorted({v.file for v in variants if is_outside(relative_file(v.file, root))})
    if not outside:
        return None
    print(
        f"qtt: {outside[0]}{f' and {len(outside) - 1} other file(s)' if len(outside) > 1 else ''} "
        f"lie outside the project {root}, the directory that holds {historical}; case paths are "
        "hashed relative to it.\nhint: run qtt from the project directory, or pass --historical DIR",
        file=sys.stderr,
    )
    return 2


def add_registry_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--schema-registry",
        metavar="URL",
        help=(
            "a Confluent-compatible schema registry for the AVRO, PROTOBUF and JSON_SR formats, or "
            "'docker' to start Confluent's registry image (default: an embedded one per replay; "
            "also QTT_SCHEMA_REGISTRY_URL)"
        ),
    )


def add_cases_and_root(command: argparse.ArgumentParser) -> None:
    command.add_argument("paths", nargs="*", metavar="PATH", help="case files or directories (default: ./cases)")

    command.add_argument(
        "--historical",
        metavar="DIR",
        default=HISTORICAL_ROOT,
        help="the historical plans directory (default: ./historical_plans)",
    )


def add_time_limit_option(command: argparse.ArgumentParser) -> None:
    from qtt.runtime.spark import time_limit

    command.add_argument(
        "--time-limit",
        metavar="SECONDS",
        type=_seconds,
        help=(
            "stop a streaming query that has not ended after SECONDS: its replay is 'timed out' (T), "
            "shows what had arrived on each topic by then, and the run goes on "
            f"(default {time_limit.DEFAULT_SECONDS:g}, or {time_limit.ENV})"
        ),
    )


def apply_time_limit(args: argparse.Namespace) -> None:
    """Make ``--time-limit`` the limit of every streaming query this process (and its workers) runs."""
    from qtt.runtime.spark import time_limit

    if args.time_limit is not None:
        time_limit.set_seconds(args.time_limit)


def _seconds(text: str) -> float:
    from qtt.runtime.spark import time_limit

    try:
        return time_limit.parse(text)
    except QttError as e:
        raise argparse.ArgumentTypeError(e.message) from e


def add_html_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--html",
        metavar="FILE",
        help=(
            "also write the results as one self-contained HTML page to FILE (opens from disk): a grid of "
            "cases by replay (fresh, each scenario, each release's plan, each restored checkpoint), each "
            "cell coloured by status; a click shows the reason and the labelled diff; filters by status and text"
        ),
    )


def write_html(results: Sequence[CaseResult], path: str, *, title: str, seconds: float) -> None:
    """The ``--html`` page of ``results``; a page that cannot be written is said, the run's
    results stand."""
    from qtt.harness import html_report

    try:
        html_report.write([html_report.Shown.of(result) for result in results], path, title=title, seconds=seconds)
    except OSError as e:
        print(f"qtt: --html {path}: the page could not be written: {e}", file=sys.stderr)
