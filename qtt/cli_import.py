"""``qtt import-ksqldb``: the options and the command that turn ksqlDB's historical plans into
qtt historical folders (:mod:`qtt.harness.ksqldb.importer`)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from qtt.harness.selection import HISTORICAL_ROOT


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = commands.add_parser(
        "import-ksqldb",
        help="turn ksqlDB's historical plans into qtt historical folders, each replayed first",
        description="For every ksqlDB historical plan folder under PATH (ksqlDB's historical_plans tree, "
        "one case folder, or one <version>_<ms> folder): translate its plan.json into qtt's plan, replay "
        "its case's inputs on Spark and, if the outputs match the case, write <into>/<slug>/<qtt version>_"
        "<ksqlDB epoch ms>/ with the translated plan.json, a spec.json holding the recorded bytes and a "
        "provenance (the ksqlDB release, folder and case file), and the topology. A case's folders are "
        "imported in release order, each only when its translated plan differs from the newest one "
        "there. From then on qtt run replays them like qtt's own folders. Existing folders are never "
        "changed. Exit status: 0 when every folder was imported, unchanged or skipped (a plan qtt "
        "cannot translate, with the step that stops it), 1 when one was not imported, 2 on a usage error.",
    )
    command.add_argument("paths", nargs="+", metavar="PATH", help="ksqlDB historical plan folders or trees")
    command.add_argument(
        "--into",
        metavar="DIR",
        default=HISTORICAL_ROOT,
        help=f"the historical plans directory to write into (default: ./{HISTORICAL_ROOT})",
    )
    command.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from qtt.harness.ksqldb.folders import holds_ksqldb_plans, ksqldb_folders
    from qtt.harness.ksqldb.importer import Action, import_folders
    from qtt.harness.progress import ProgressLine

    folders: list[Path] = []
    for given in args.paths:
        path = Path(given)
        if not holds_ksqldb_plans(path):
            print(
                f"qtt import-ksqldb: {given} holds no ksqlDB historical plan folder "
                "(<case>/<version>_<ms>/ with plan.json and a spec.json holding a testCase)",
                file=sys.stderr,
            )
            return 2
        folders += ksqldb_folders(path)
    with ProgressLine(sys.stderr, began=time.perf_counter()) as line:
        entries = import_folders(folders, Path(args.into), progress=line.stage("ksqlDB plans"))
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.action] = counts.get(entry.action, 0) + 1
        if entry.action is Action.IMPORTED:
            print(f"IMPORTED {entry.folder}: from {entry.source} ({entry.reason})")
        elif entry.action is not Action.UNCHANGED:
            print(f"{entry.action.upper()} {entry.source}: {entry.reason}")
    print(", ".join(f"{n} {action}" for action, n in sorted(counts.items())))
    return 1 if counts.get(Action.NOT_IMPORTED) else 0
