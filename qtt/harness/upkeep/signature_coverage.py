"""Which signatures of the dialect no case calls: every overload needs a case of its own.

ksqlDB defines most functions over several type families (numbers, DATE, TIME, TIMESTAMP,
BYTES, STRING); an overload that no case resolves to is one whose behaviour nothing pins.
This plans every case under the given paths (no Spark) and lists each signature of the scalar
table, of the lambda invocations and of the aggregates that no call resolved to, and each pair
of base types of ksqlDB's CAST table that no ``CAST`` converts between.
``tests/harness/test_signature_coverage.py`` keeps the list of ``cases/`` empty. Run it with
``python -m qtt.harness.upkeep.signature_coverage cases``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from qtt.errors import QttError
from qtt.plan.analysis.coercion import cast_pairs
from qtt.plan.functions import aggregate_signatures, scalar_signatures
from qtt.plan.functions.reference import REFERENCE
from qtt.plan.functions.signature_matching import observing_resolutions


def signatures() -> set[str]:
    """Every signature qtt resolves calls to, as text (``ROUND(DECIMAL, INTEGER)``), and every
    pair of types ksqlDB's CAST converts between (``CAST(BIGINT AS INTEGER)``). Scalar functions
    outside ksqlDB's reference are its test-suite UDFs (``WHENCONDITION``, ``BAD_UDF`` ...),
    which ksqlDB's own files exercise, so no case of qtt's needs to."""
    reference = {function.name for function in REFERENCE}
    scalar = {
        f"{function.name}{signature.describe()}"
        for function in scalar_signatures.FUNCTIONS.values()
        if function.name in reference
        for signature in function.signatures
        if signature.unsupported is None
    }
    aggregates = {
        text
        for name in aggregate_signatures.RUN_AGGREGATES - set(aggregate_signatures.PERSISTED_ONLY_AGGREGATES)
        for text in aggregate_signatures.overload_texts(name)[0]
    }
    return scalar | aggregates | set(cast_pairs())


def uncovered(paths: Sequence[str]) -> list[str]:
    """The signatures that no case under ``paths`` calls, sorted."""
    from qtt.harness.replay.runner import plan_variant, unevaluated
    from qtt.harness.selection import load_variants

    variants, _ = load_variants(paths)
    with observing_resolutions() as seen:
        for variant in variants:
            try:
                plan_variant(variant, unevaluated)
            except QttError:  # a case that expects an error still resolved what came before it
                continue
    return sorted(signatures() - set(seen))


def report(missing: Sequence[str], what: str) -> int:
    """Print what no case covers, one a line, and the count on stderr; the exit status."""
    for item in missing:
        print(item)
    print(f"{len(missing)} {what} without a case", file=sys.stderr)
    return 1 if missing else 0


def main(argv: Sequence[str]) -> int:
    return report(uncovered(argv or ["cases"]), "signature(s)")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
