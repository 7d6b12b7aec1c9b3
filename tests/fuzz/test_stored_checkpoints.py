"""Fuzz stored checkpoints: ``checkpoint.tar.gz`` archives and ``checkpoint.json`` manifests, damaged.

The contract: a damaged archive is a :class:`~qtt.errors.CorruptGoldenError` naming the file
(unpacking, or the check against its manifest), never zlib's, tarfile's or Python's own error;
a damaged manifest is a :class:`~qtt.errors.PlanFileError` naming the file.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from functools import cache, partial
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from qtt.harness.historical import checkpoints
from qtt.harness.historical.replay import load
from tests.fuzz.escapes import attempt
from tests.fuzz.inputs import (
    HISTORICAL,
    dump,
    historical_documents,
    historical_files,
    mutated_json,
    mutated_text,
    one_of,
)
from tests.fuzz.profiles import fuzz_settings

pytestmark = pytest.mark.fuzz

ARCHIVE = "checkpoint.tar.gz"


@cache
def stored() -> tuple[tuple[bytes, checkpoints.Manifest, int, dict[str, int]], ...]:
    """Each stored checkpoint of the repository: archive bytes, manifest, inputs, outputs per topic."""
    found = []
    for folder in sorted(HISTORICAL.glob("*/*")):
        manifest = checkpoints.stored(folder)
        if manifest is None:
            continue
        loaded = load(folder)
        outputs = dict(Counter(record.topic for record in loaded.spec.outputs))
        found.append(((folder / ARCHIVE).read_bytes(), manifest, len(loaded.spec.inputs), outputs))
    return tuple(found[:12])


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with a few bytes flipped, cut short, or with bytes added."""
    out = bytearray(data)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        how = draw(st.sampled_from(["flip", "cut", "append", "zero"]))
        at = draw(st.integers(min_value=0, max_value=max(len(out) - 1, 0)))
        if how == "flip" and out:
            out[at] ^= draw(st.integers(min_value=1, max_value=255))
        elif how == "cut":
            del out[at:]
        elif how == "append":
            out += draw(st.binary(min_size=1, max_size=64))
        elif out:
            out[at : at + 16] = bytes(len(out[at : at + 16]))
    return bytes(out)


def unpack_and_fit(archive: bytes, manifest: checkpoints.Manifest, inputs: int, outputs: dict[str, int]) -> None:
    with tempfile.TemporaryDirectory() as work:
        checkpoints.unpack(archive, Path(work), file=ARCHIVE)
        checkpoints.check_fits(manifest, Path(work), inputs=inputs, outputs=outputs, file=ARCHIVE)


def test_the_originals_unpack_and_fit() -> None:
    assert stored(), "the repository stores checkpoints"
    for archive, manifest, inputs, outputs in stored():
        unpack_and_fit(archive, manifest, inputs, outputs)


@fuzz_settings
@given(one_of(stored).flatmap(lambda found: st.tuples(damaged(found[0]), st.just(found))))
def test_a_damaged_archive_is_corrupt_or_still_fits(drawn: tuple[bytes, tuple]) -> None:  # type: ignore[type-arg]
    archive, (_, manifest, inputs, outputs) = drawn
    _, raised = attempt(lambda: unpack_and_fit(archive, manifest, inputs, outputs), lambda e: e.file == ARCHIVE)
    assert raised in (None, "CorruptGoldenError"), raised
    event(raised or "still fits")


def manifests() -> st.SearchStrategy[str]:
    return st.one_of(
        mutated_json(partial(historical_documents, checkpoints.MANIFEST_FILE)).map(dump),
        one_of(partial(historical_files, checkpoints.MANIFEST_FILE)).flatmap(mutated_text),
    )


@fuzz_settings
@given(manifests())
def test_a_damaged_manifest_is_a_located_plan_file_error(text: str) -> None:
    file = checkpoints.MANIFEST_FILE
    _, raised = attempt(lambda: checkpoints.loads(text, file=file), lambda e: e.file == file)
    event(raised or "loaded")
