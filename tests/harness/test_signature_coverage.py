"""Every signature the planner resolves has a case in cases/ that calls it."""

from __future__ import annotations

from pathlib import Path

from qtt.harness.upkeep.signature_coverage import signatures, uncovered
from qtt.plan.functions.signature_matching import observing_resolutions

CASES = str(Path(__file__).resolve().parents[2] / "cases")


def test_every_signature_has_a_case() -> None:
    missing = uncovered([CASES])
    assert not missing, f"no case calls {missing}: add one (python -m qtt.harness.upkeep.signature_coverage cases)"


def test_the_list_holds_scalar_lambda_and_aggregate_signatures() -> None:
    listed = signatures()
    assert {"ROUND(DECIMAL, INTEGER)", "TRANSFORM(ARRAY<T>, LAMBDA (T) => R)", "MIN(BYTES)"} <= listed
    assert not any(text.startswith(("WHENCONDITION", "WHENRESULT", "BAD_UDF")) for text in listed)  # test UDFs


def test_resolutions_are_seen_only_inside_the_block() -> None:
    from qtt.plan.functions.scalar_signatures import resolve
    from qtt.sqltypes import INTEGER

    resolve("ABS", [INTEGER])
    with observing_resolutions() as seen:
        resolve("ABS", [INTEGER])
    resolve("ABS", [INTEGER])
    assert seen == {"ABS(INTEGER)": 1}
