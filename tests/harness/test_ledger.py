"""The ledger tells a damaged golden from a runtime regression, and is only ever appended to."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from qtt.errors import CorruptGoldenError, PlanFileError
from qtt.harness.historical import checkpoints, ledger, plan_store
from qtt.harness.historical.replay import load
from qtt.harness.historical.uptodate import check_ledger

HISTORICAL = Path(__file__).parents[2] / "historical_plans"
#: a stateful folder with a stored checkpoint, and a stateless one
STATEFUL = HISTORICAL / "aggregation__counts_sums_and_averages_per_station__880598fa" / "0.7.0_1795620141001"
STATELESS = HISTORICAL / "aggregation__counts_sums_and_averages_per_station__880598fa" / "0.3.0_1795228811139"


def _copy(root: Path, *folders: Path) -> list[Path]:
    copies = []
    for folder in folders:
        target = root / folder.parent.name / folder.name
        shutil.copytree(folder, target)
        copies.append(target)
    return copies


def test_the_repository_ledger_records_every_folder_as_it_is() -> None:
    found = check_ledger(HISTORICAL)
    assert found.corrupt == []
    assert found.unrecorded == [], "qtt snapshot records every folder it writes"


def test_a_changed_missing_or_added_file_is_named(tmp_path: Path) -> None:
    folder, other = _copy(tmp_path, STATEFUL, STATELESS)
    assert ledger.append(tmp_path, plan_store.folders(tmp_path)) == sorted([folder, other])
    book = ledger.load(tmp_path)
    assert book.problems(folder) == [] and book.recorded(folder)
    spec = folder / "spec.json"
    spec.write_bytes(spec.read_bytes().replace(b'"', b"'", 1))
    (folder / "topology").unlink()
    (folder / "notes.txt").write_text("x")
    problems = ledger.load(tmp_path).problems(folder)
    assert problems == [
        f"{spec}: its content differs from the ledger's hash (the file was changed)",
        f"{folder / 'topology'}: missing (the ledger records it)",
        f"{folder / 'notes.txt'}: not in the ledger (a file was added to a stored folder)",
    ]
    with pytest.raises(CorruptGoldenError, match="differs from the ledger"):
        ledger.Checker().check(folder)
    ledger.Checker().check(other)  # the other folder is fine
    found = check_ledger(tmp_path)
    assert [f for f, _ in found.corrupt] == [folder]


def test_appending_keeps_every_earlier_byte_and_records_a_folder_once(tmp_path: Path) -> None:
    first, second = _copy(tmp_path, STATELESS, STATEFUL)
    ledger.append(tmp_path, [first])
    before = (tmp_path / ledger.LEDGER_FILE).read_bytes()
    assert ledger.append(tmp_path, [first, second]) == [second]
    after = (tmp_path / ledger.LEDGER_FILE).read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    assert ledger.append(tmp_path, [first, second]) == []
    assert (tmp_path / ledger.LEDGER_FILE).read_bytes() == after
    assert not list(tmp_path.glob(f".{ledger.LEDGER_FILE}*")), "no staged ledger is left behind"


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="coreutils' sha256sum is not installed")
def test_the_ledger_is_sha256sums_own_format(tmp_path: Path) -> None:
    _copy(tmp_path, STATEFUL)
    ledger.append(tmp_path, plan_store.folders(tmp_path))
    checked = subprocess.run(
        ["sha256sum", "-c", "--strict", "--quiet", ledger.LEDGER_FILE], cwd=tmp_path, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize(
    ("line", "what"),
    [("not a hash  a/b/plan.json", "expected '<sha-256"), (f"{'0' * 64} a/b/plan.json", "expected '<sha-256")],
)
def test_a_damaged_ledger_line_is_named(tmp_path: Path, line: str, what: str) -> None:
    (tmp_path / ledger.LEDGER_FILE).write_text(f"{'a' * 64}  x/y/plan.json\n{line}\n")
    with pytest.raises(PlanFileError, match=what) as raised:
        ledger.load(tmp_path)
    assert raised.value.line == 2


def test_a_ledger_that_records_a_file_twice_with_two_hashes_is_refused(tmp_path: Path) -> None:
    (tmp_path / ledger.LEDGER_FILE).write_text(f"{'a' * 64}  x/y/plan.json\n{'b' * 64}  x/y/plan.json\n")
    with pytest.raises(PlanFileError, match="recorded twice"):
        ledger.load(tmp_path)


def _unpacked(tmp_path: Path) -> tuple[checkpoints.Manifest, Path, int, dict[str, int]]:
    manifest = checkpoints.stored(STATEFUL)
    assert manifest is not None
    target = tmp_path / "unpacked"
    checkpoints.unpack((STATEFUL / checkpoints.ARCHIVE_FILE).read_bytes(), target, file="x")
    loaded = load(STATEFUL)
    return manifest, target, len(loaded.spec.inputs), dict(Counter(r.topic for r in loaded.spec.outputs))


def test_every_stored_checkpoint_of_the_repository_fits_its_manifest(tmp_path: Path) -> None:
    for folder in plan_store.folders(HISTORICAL):
        manifest = checkpoints.stored(folder)
        if manifest is None:
            continue
        target = tmp_path / folder.parent.name / folder.name
        checkpoints.unpack((folder / checkpoints.ARCHIVE_FILE).read_bytes(), target, file=str(folder))
        loaded = load(folder)
        outputs = dict(Counter(r.topic for r in loaded.spec.outputs))
        checkpoints.check_fits(manifest, target, inputs=len(loaded.spec.inputs), outputs=outputs, file=str(folder))


def test_a_restore_point_outside_the_inputs_is_corrupt(tmp_path: Path) -> None:
    manifest, unpacked, inputs, outputs = _unpacked(tmp_path)
    for point in (-1, inputs + 1):
        bad = checkpoints.Manifest(**{**manifest.__dict__, "restore_point": point})
        with pytest.raises(CorruptGoldenError, match="lies outside the folder's") as raised:
            checkpoints.check_fits(bad, unpacked, inputs=inputs, outputs=outputs, file="checkpoint.json")
        assert raised.value.path == "$.restorePoint"


def test_a_query_that_consumed_more_than_the_inputs_and_outputs_before_the_point_is_corrupt(tmp_path: Path) -> None:
    manifest, unpacked, inputs, outputs = _unpacked(tmp_path)
    query = next(q for q, n in manifest.consumed.items() if n)
    # a query reading another's sink consumes more records than inputs before the point: it fits
    readable = manifest.restore_point + sum(manifest.outputs_before.values())
    bad = checkpoints.Manifest(**{**manifest.__dict__, "consumed": {**manifest.consumed, query: readable + 1}})
    with pytest.raises(CorruptGoldenError, match=f"{query} consumed {readable + 1} record") as raised:
        checkpoints.check_fits(bad, unpacked, inputs=inputs, outputs=outputs, file="checkpoint.json")
    assert raised.value.path == f"$.consumed.{query}"


def test_a_checkpoint_without_its_offsets_or_a_batch_is_corrupt(tmp_path: Path) -> None:
    manifest, unpacked, inputs, outputs = _unpacked(tmp_path)
    query = next(q for q, n in manifest.consumed.items() if n)
    last = manifest.consumed[query] - 1
    (unpacked / query / "commits" / str(last)).unlink()
    with pytest.raises(CorruptGoldenError, match=f"no commits/{last}"):
        checkpoints.check_fits(manifest, unpacked, inputs=inputs, outputs=outputs, file="checkpoint.tar.gz")
    shutil.rmtree(unpacked / query / "offsets")
    with pytest.raises(CorruptGoldenError, match=r"has no offsets \(Spark's offset log\)"):
        checkpoints.check_fits(manifest, unpacked, inputs=inputs, outputs=outputs, file="checkpoint.tar.gz")


@pytest.mark.parametrize("offset", [10, 200])
def test_a_flipped_byte_in_the_compressed_stream_is_corrupt_never_a_crash(tmp_path: Path, offset: int) -> None:
    data = bytearray((STATEFUL / checkpoints.ARCHIVE_FILE).read_bytes())
    data[offset] ^= 0xFF  # zlib's error before: it ended the whole run
    with pytest.raises(CorruptGoldenError, match="the stored checkpoint cannot be read: ReadError"):
        checkpoints.unpack(bytes(data), tmp_path / "out", file="checkpoint.tar.gz")


def test_a_flip_the_archive_does_not_notice_is_caught_by_the_ledger(tmp_path: Path) -> None:
    # tarfile stops before gzip's CRC, so a flip near the end unpacks silently: the hash does not
    (folder,) = _copy(tmp_path, STATEFUL)
    ledger.append(tmp_path, [folder])
    archive = folder / checkpoints.ARCHIVE_FILE
    data = bytearray(archive.read_bytes())
    data[-6] ^= 0xFF
    archive.write_bytes(bytes(data))
    checkpoints.unpack(bytes(data), tmp_path / "out", file=str(archive))
    with pytest.raises(CorruptGoldenError, match=r"checkpoint\.tar\.gz: its content differs from the ledger.s hash"):
        ledger.Checker().check(folder)


def test_a_cut_archive_is_corrupt(tmp_path: Path) -> None:
    data = (STATEFUL / checkpoints.ARCHIVE_FILE).read_bytes()
    with pytest.raises(CorruptGoldenError, match="cannot be read"):
        checkpoints.unpack(data[: len(data) // 2], tmp_path / "out", file="checkpoint.tar.gz")


def without_offsets(archive: bytes) -> bytes:
    """``archive`` repacked without any query's ``offsets/`` (a damaged golden)."""
    out = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as source,
        tarfile.open(fileobj=out, mode="w:gz") as kept,
    ):
        for member in source.getmembers():
            if "/offsets/" not in f"/{member.name}":
                kept.addfile(member, source.extractfile(member) if member.isfile() else None)
    return out.getvalue()


def test_a_manifest_nested_deep_is_a_located_error_not_a_recursion() -> None:
    # found by tests/fuzz/test_stored_checkpoints.py: the reader and the message both recursed
    deep = '{"manifestVersion": ' + "[" * 3000 + "1" + "]" * 3000 + "}"
    with pytest.raises(PlanFileError, match=r"manifestVersion is an array of 1 element\(s\)") as raised:
        checkpoints.loads(deep, file="checkpoint.json")
    assert raised.value.path == "$.manifestVersion"
    deeper = '{"a": ' + "[" * 6000 + "]" * 6000 + "}"
    with pytest.raises(PlanFileError, match="nests deeper than"):
        checkpoints.loads(deeper, file="checkpoint.json")
