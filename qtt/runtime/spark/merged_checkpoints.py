"""Several stored checkpoints merged into one, so that their restores share a streaming query.

Each stored checkpoint belongs to one query, resumed alone: a query start, a micro-batch and a
read-back of its state for every restore. Queries that share a streaming query (a union of
their sink branches, as fresh replays run) share those costs, and their checkpoint is one
directory. A
merged checkpoint is that directory, made of the stored ones with nothing but Spark's own
files, renamed:

- Spark numbers the stateful operators of a union depth-first, so the queries' operators take
  consecutive ids in union order: stored operator ``op`` of the *i*-th checkpoint becomes
  ``first_i + op`` (its directory, and the id and schema paths in its operator metadata).
- Every operator of a streaming query loads the state version of the query's last batch. A
  checkpoint whose last batch ``b`` is before the merged one's last batch ``B`` has its
  versioned state files (``<version>.zip`` snapshots, ``<version>.changelog`` change logs)
  renamed ``version + (B - b)``: its newest snapshot at or below its last version, and the
  change logs after it, are then the ones that load at version ``B + 1``; the versions below
  the snapshot are never read.
- The offset and commit logs are those of a checkpoint that ended at ``B`` (its settings and
  watermarks), with the merged query's own source offsets: a stored offset log names the
  replay source's offset once per source, the same for all; the merged one names the merged
  source's offset after that batch once per source of the merged query.

Only checkpoints that Spark's files make safe to merge are merged (:func:`merge_key`): format
version 1 state files (no unique ids), one partition directory per operator with a snapshot,
no watermark, and the same pinned settings in their offset logs. The others restore alone.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_VERSIONED = re.compile(r"^(?P<dot>\.?)(?P<version>\d+)\.(?P<kind>zip|changelog)(?P<crc>\.crc)?$")


@dataclass(frozen=True)
class StoredCheckpoint:
    """One query's checkpoint directory, and where Spark wrote it ('' when never moved)."""

    path: Path
    written_at: str = ""


@dataclass(frozen=True)
class Placement:
    """Where a stored checkpoint went in the merged one."""

    #: the merged id of its operator 0
    first_operator: int
    operators: int
    #: its batch ``b`` is the merged checkpoint's batch ``b + shift``
    shift: int


def last_batch(checkpoint: Path) -> int | None:
    """The last batch both logged and committed, or None when there is none."""
    offsets, commits = _batches(checkpoint / "offsets"), _batches(checkpoint / "commits")
    if not offsets or not commits or max(offsets) != max(commits):
        return None
    return max(offsets)


def merge_key(checkpoint: Path) -> str | None:
    """What checkpoints must share to be merged (their pinned settings), or None when this one
    cannot be merged and restores alone."""
    batch = last_batch(checkpoint)
    if batch is None:
        return None
    lines = (checkpoint / "offsets" / str(batch)).read_text(encoding="utf-8").splitlines()
    commit = (checkpoint / "commits" / str(batch)).read_text(encoding="utf-8").splitlines()
    if len(lines) < 3 or lines[0] != "v1" or len(commit) != 2 or commit[0] != "v1":
        return None
    metadata, committed = json.loads(lines[1]), json.loads(commit[1])
    if metadata.get("batchWatermarkMs", 0) != 0 or committed != {"nextBatchWatermarkMs": 0}:
        return None  # a watermark, or state unique ids (checkpoint format 2): restore alone
    if len(set(lines[2:])) != 1 or not (checkpoint / "state").is_dir():
        return None
    operators = _operators(checkpoint)
    variables = [_state_variables(operator) for operator in operators]
    if len(set(variables)) != len(variables):
        # a repartition branch's copy of an operator: numbered after every sink's in a union
        return None
    for operator in operators:
        partitions = [p for p in operator.iterdir() if p.name.isdigit()]
        if len(partitions) != 1 or _snapshot_at_or_below(partitions[0], batch + 1) is None:
            return None
        if any(_VERSIONED.match(f.name) is None for f in partitions[0].iterdir() if f.is_file()):
            return None  # a file this module does not know how to place
    return json.dumps(metadata.get("conf", {}), sort_keys=True)


def operator_count(checkpoint: Path) -> int:
    return len(_operators(checkpoint))


def merge(parts: Sequence[StoredCheckpoint], dest: Path, source_offset: Callable[[int], str]) -> list[Placement]:
    """Write the checkpoint of one streaming query whose union holds the parts' queries, in order.

    Every part must have a :func:`merge_key`, the same for all. ``source_offset(batch)`` is the
    merged query's source offset after ``batch``, as the offset log holds it.
    """
    batches = [last_batch(part.path) for part in parts]
    assert all(b is not None for b in batches), "merge only checkpoints with a merge key"
    last = max(b for b in batches if b is not None)
    donor = parts[batches.index(last)].path
    dest.mkdir(parents=True)
    shutil.copyfile(donor / "metadata", dest / "metadata")
    sources = sum(_source_count(part.path) for part in parts)
    shutil.copytree(donor / "commits", dest / "commits")
    (dest / "offsets").mkdir()
    for logged in _batches(donor / "offsets"):  # Spark reads the batch before the last one too
        lines = (donor / "offsets" / str(logged)).read_text(encoding="utf-8").splitlines()
        offset = source_offset(logged)
        (dest / "offsets" / str(logged)).write_text("\n".join([*lines[:2], *[offset] * sources]), encoding="utf-8")
    placements, first = [], 0
    for part, batch in zip(parts, batches, strict=True):
        assert batch is not None
        shift = last - batch
        operators = _operators(part.path)
        for operator in operators:
            _place_operator(part, operator, dest, first + int(operator.name), shift)
        placements.append(Placement(first, len(operators), shift))
        first += len(operators)
    return placements


def _place_operator(part: StoredCheckpoint, operator: Path, dest: Path, merged_id: int, shift: int) -> None:
    target = dest / "state" / str(merged_id)
    shutil.copytree(operator, target)
    for partition in (p for p in target.iterdir() if p.name.isdigit()):
        # highest version first: a renamed file never lands on one not yet renamed
        for file in sorted(partition.iterdir(), key=_version, reverse=True):
            found = _VERSIONED.match(file.name)
            if found is not None and shift:
                version = int(found["version"]) + shift
                file.rename(file.with_name(f"{found['dot']}{version}.{found['kind']}{found['crc'] or ''}"))
    # the operator metadata names its state schema files by absolute path, and its own id
    stored_at = f"{part.written_at.rstrip('/')}/state/{operator.name}/" if part.written_at else ""
    for metadata in _metadata_files(target):
        text = metadata.read_text(encoding="utf-8")
        if stored_at:
            text = text.replace(stored_at, f"{target.absolute()}/")
        head, document = _metadata_document(text)
        document["operatorInfo"]["operatorId"] = merged_id
        metadata.write_text(f"{head}\n{json.dumps(document, separators=(',', ':'))}", encoding="utf-8")
        metadata.with_name(f".{metadata.name}.crc").unlink(missing_ok=True)


def _version(file: Path) -> int:
    found = _VERSIONED.match(file.name)
    return int(found["version"]) if found is not None else -1


def _snapshot_at_or_below(partition: Path, version: int) -> int | None:
    snapshots = [
        int(found["version"])
        for f in partition.iterdir()
        if (found := _VERSIONED.match(f.name)) is not None and found["kind"] == "zip" and not found["dot"]
    ]
    below = [v for v in snapshots if v <= version]
    return max(below) if below else None


def _operators(checkpoint: Path) -> list[Path]:
    state = checkpoint / "state"
    if not state.is_dir():
        return []
    return sorted((p for p in state.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))


def _metadata_files(operator: Path) -> list[Path]:
    """The operator's metadata files (not Hadoop's checksums beside them)."""
    return sorted(f for f in operator.glob("_metadata/v2/*") if not f.name.startswith("."))


def _metadata_document(text: str) -> tuple[str, dict[str, Any]]:
    """An operator metadata file: its version line, and its JSON document."""
    head, _, body = text.partition("\n")
    return head, json.loads(body)


def _state_variables(operator: Path) -> tuple[str, ...]:
    """The state variables the operator's last metadata file names."""
    files = _metadata_files(operator)
    if not files:
        return ()
    _, document = _metadata_document(files[-1].read_text(encoding="utf-8"))
    properties = json.loads(document.get("operatorPropertiesJson") or "{}")
    return tuple(sorted(variable["stateName"] for variable in properties.get("stateVariables", [])))


def _source_count(checkpoint: Path) -> int:
    batch = last_batch(checkpoint)
    lines = (checkpoint / "offsets" / str(batch)).read_text(encoding="utf-8").splitlines()
    return len(lines) - 2


def _batches(log: Path) -> list[int]:
    return [int(p.name) for p in log.iterdir() if p.name.isdigit()] if log.is_dir() else []
