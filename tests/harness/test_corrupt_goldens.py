"""Damaged goldens are ``corrupt``, named by file, and every other result is still reported.

Copies of real historical folders are damaged as a user's repository can be (a flipped byte in
a recorded checkpoint archive, a checkpoint without its offset log, a manifest whose restore
point lies outside the inputs); one undamaged folder sits beside them. ``qtt run`` must judge
each damaged one ``corrupt`` with the file and what is wrong, pass the good one, print the
summary and write every result to ``--json``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qtt import cli
from qtt.harness.historical import checkpoints, ledger
from tests.harness.test_ledger import STATEFUL, STATELESS, without_offsets

pytestmark = [pytest.mark.spark, pytest.mark.slow]

OTHER_STATEFUL = (
    Path(__file__).parents[2]
    / "historical_plans"
    / "aggregation__group_by_an_expression_names_the_key_after_its_alias__186ede68"
    / "0.7.0_1795620141001"
)
HAVING = (
    Path(__file__).parents[2]
    / "historical_plans"
    / "aggregation__having_turns_groups_below_the_bar_into_deletes__7a027071"
    / "0.7.0_1795620141001"
)


@pytest.mark.usefixtures("spark", "no_active_streams")
def test_damaged_folders_are_corrupt_and_the_run_reports_everything(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "historical_plans"
    flipped, good = (root / f.parent.name / f.name for f in (STATEFUL, STATELESS))
    no_offsets, far_point = (root / f.parent.name / f.name for f in (OTHER_STATEFUL, HAVING))
    for source, target in ((STATEFUL, flipped), (STATELESS, good), (OTHER_STATEFUL, no_offsets), (HAVING, far_point)):
        shutil.copytree(source, target)
    ledger.append(root, [flipped, good])  # the other two were stored before the ledger: no lines
    archive = flipped / checkpoints.ARCHIVE_FILE
    data = bytearray(archive.read_bytes())
    data[200] ^= 0xFF
    archive.write_bytes(bytes(data))
    stored = no_offsets / checkpoints.ARCHIVE_FILE
    stored.write_bytes(without_offsets(stored.read_bytes()))
    manifest = json.loads((far_point / checkpoints.MANIFEST_FILE).read_text())
    manifest["restorePoint"] = 99
    (far_point / checkpoints.MANIFEST_FILE).write_text(json.dumps(manifest))
    report = tmp_path / "report.json"

    status = cli.main(["run", str(root), "--jsonl", str(report)])
    out = capsys.readouterr().out

    lines = [json.loads(line) for line in report.read_text().splitlines()]
    by_item = {(Path(line["file"]).parent.name, line["kind"]): line for line in lines}
    assert status == 1
    assert len(lines) == 7, "four fresh replays and three restored ones: every item has a result"
    corrupt = {key: line["reason"] for key, line in by_item.items() if line["status"] == "corrupt"}
    assert set(corrupt) == {
        (flipped.parent.name, "historical"),
        (flipped.parent.name, "restored"),
        (no_offsets.parent.name, "restored"),
        (far_point.parent.name, "restored"),
    }, by_item
    assert "checkpoint.tar.gz: its content differs from the ledger's hash" in corrupt[(flipped.parent.name, "restored")]
    assert "has no offsets (Spark's offset log)" in corrupt[(no_offsets.parent.name, "restored")]
    assert "restore point 99 lies outside the folder's" in corrupt[(far_point.parent.name, "restored")]
    assert all(line["status"] == "passed" for key, line in by_item.items() if key not in corrupt)
    assert "0 failed" in out.splitlines()[-1] and "4 corrupt" in out.splitlines()[-1]
    assert "hint: restore it from version control" in out
