"""``qtt upgrade OLD NEW``: the options and the command of the upgrade advisor
(:mod:`qtt.harness.sqltests.advisor`)."""

from __future__ import annotations

import argparse
import sys
import time


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = commands.add_parser(
        "upgrade",
        help="say whether a running query can take a new statement in place (CREATE OR REPLACE), and prove it",
        description="OLD is a SQL script: the sources, the running queries and INSERT INTO ... VALUES rows; "
        "NEW holds one statement, the new CREATE [OR REPLACE] STREAM|TABLE of one of OLD's queries. "
        "OLD may also be a case file (--case NAME picks one of its cases): the walk and the verdict. Prints "
        "the walk over both plans from the sink upstream (each step passive or enforcing, unchanged, "
        "changed, added, removed or matched, or why it stops the upgrade) and the verdict of CREATE OR "
        "REPLACE, under ksqlDB's rules unless OLD sets 'qtt.upgrades.extended' or --extended is given. "
        "With --prove, an allowed upgrade is replayed on Spark: OLD's query over the rows before the "
        "upgrade point, upgraded there, NEW's over the rest, beside NEW's query over every row from the "
        "start, and the records each row caused from the upgrade on are shown side by side. Exit status: "
        "0 when the upgrade is allowed, 1 when it is refused, 2 on a usage error.",
    )
    command.add_argument(
        "old", metavar="OLD", help="the SQL script the query runs in today, with INSERTs; or a case file (*.json)"
    )
    command.add_argument("--case", metavar="NAME", help="the case of OLD, a case file that holds several")
    command.add_argument("new", metavar="NEW", help="a SQL file with the query's new statement")
    command.add_argument(
        "--extended",
        action="store_true",
        help="judge by qtt's extended rules (SET 'qtt.upgrades.extended' = 'true'): filters and "
        "projections may change around joins, windowed aggregations and table functions",
    )
    command.add_argument("--prove", action="store_true", help="replay the upgrade and a fresh run of NEW on Spark")
    command.add_argument(
        "--at", type=int, metavar="N", help="with --prove: upgrade after the first N INSERTs (default: half)"
    )
    command.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from qtt.harness.sqltests import advisor

    if args.at is not None and not args.prove:
        print("qtt upgrade: --at needs --prove", file=sys.stderr)
        return 2
    if args.prove:
        from qtt.harness.progress import ProgressLine
        from qtt.harness.replay.runner import spark_session

        with ProgressLine(sys.stderr, began=time.perf_counter()) as line:
            advice = advisor.prove(
                args.old, args.new, spark_session, at=args.at, extended=args.extended, progress=line.stage("runs")
            )
    else:
        advice = advisor.advise(args.old, args.new, extended=args.extended, case=args.case)
    print(advisor.render(advice))
    return 0 if advice.refused is None else 1
