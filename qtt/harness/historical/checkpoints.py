"""Stored checkpoints: a stateful plan's real Spark checkpoint at a restore point, kept in its folder.

``qtt snapshot`` runs each stateful query of a new folder alone over the inputs before the
restore point, stops it, and stores its checkpoint directory (offsets, commits, metadata, state
store files) as ``checkpoint.tar.gz``, with ``checkpoint.json``: the Spark and pyspark
versions and state store provider that wrote it, the qtt version, the state format
(:mod:`~qtt.harness.historical.provenance`), the restore point, and what the replay before it
consumed and produced. Like the rest of the folder, both are written once and never changed;
this qtt writes manifest version 2 and reads 1 and 2.

The restore point is the input record marked ``qttRestorePoint``, or else the middle one: the
records before it are in the checkpoint, the records from it on are replayed from it.
"""

from __future__ import annotations

import io
import json
import tarfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qtt.errors import CorruptGoldenError, PlanFileError
from qtt.harness.replay.driver import ReplayResult
from qtt.plan.ir.depth import MAX_JSON_DEPTH, deep_call, json_error_position, json_too_deep, too_deep_message
from qtt.serde.excerpt import json_value

MANIFEST_FILE = "checkpoint.json"
ARCHIVE_FILE = "checkpoint.tar.gz"
MANIFEST_VERSION = 2
#: the manifest versions this qtt reads (1: before the pyspark version and state format were recorded)
READS = (1, 2)


@dataclass(frozen=True)
class Manifest:
    """What ``checkpoint.json`` records about the stored checkpoint."""

    spark_version: str
    state_store_provider: str
    qtt_version: str
    #: the input record (0-based, in the folder's inputs) that comes first after the restore point
    restore_point: int
    #: per stateful query: how many of its records the checkpoint consumed (its micro-batches)
    consumed: dict[str, int] = field(default_factory=dict)
    #: per output topic: how many of its recorded records the inputs before the point caused
    outputs_before: dict[str, int] = field(default_factory=dict)
    #: per stateful query: the directory its checkpoint's metadata names (version 1: a temporary
    #: directory of the writer's machine; version 2: ``provenance.STORED_AT/<queryId>``)
    written_at: dict[str, str] = field(default_factory=dict)
    #: the pyspark version that wrote it ("" in a version 1 manifest)
    pyspark_version: str = ""
    #: the state format it was written in (:func:`~qtt.harness.historical.provenance.state_format`;
    #: empty in a version 1 manifest)
    state_format: dict[str, Any] = field(default_factory=dict)

    @property
    def writer(self) -> str:
        """Who wrote it, as results name it: ``spark 4.1.4``."""
        return f"spark {self.spark_version}"

    def as_json(self) -> dict[str, Any]:
        return {
            "manifestVersion": MANIFEST_VERSION,
            "sparkVersion": self.spark_version,
            "pysparkVersion": self.pyspark_version,
            "stateStoreProvider": self.state_store_provider,
            "qttVersion": self.qtt_version,
            "stateFormat": self.state_format,
            "restorePoint": self.restore_point,
            "consumed": dict(sorted(self.consumed.items())),
            "outputsBefore": dict(sorted(self.outputs_before.items())),
            "writtenAt": dict(sorted(self.written_at.items())),
        }


def restore_point(markers: Sequence[bool]) -> int:
    """The first input record after the restore point: the marked one, else the middle one."""
    marked = [i for i, marker in enumerate(markers) if marker]
    if len(marked) > 1:
        raise ValueError(f"inputs {marked} are all marked qttRestorePoint; a case has one restore point")
    return marked[0] if marked else len(markers) // 2


def manifest_of(
    outcome: ReplayResult,
    point: int,
    *,
    spark_version: str,
    state_store_provider: str,
    qtt_version: str,
    pyspark_version: str = "",
    state_format: dict[str, Any] | None = None,
) -> Manifest:
    """The manifest of the checkpoints a replay with ``Restore(point, ..., capture=True)`` kept."""
    return Manifest(
        spark_version=spark_version,
        pyspark_version=pyspark_version,
        state_format=state_format or {},
        state_store_provider=state_store_provider,
        qtt_version=qtt_version,
        restore_point=point,
        consumed=dict(outcome.consumed),
        outputs_before={
            topic: sum(1 for record in records if record.seq < point) for topic, records in outcome.outputs.items()
        },
        written_at=dict(outcome.written_at),
    )


def pack(folder: Path) -> bytes:
    """``folder``'s files as a gzipped tar, the same bytes for the same files (no times, no owners)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=9) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_dir() or path.name.endswith(".crc"):
                continue  # Hadoop's checksum files: Spark writes them again and never needs them to read
            info = archive.gettarinfo(str(path), arcname=path.relative_to(folder).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname, info.mode = 0, 0, 0, "", "", 0o644
            with path.open("rb") as data:
                archive.addfile(info, data)
    return buffer.getvalue()


def unpack(data: bytes, dest: Path, *, file: str) -> None:
    """Extract an archive that :func:`pack` wrote into ``dest``; refuse anything else."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            if hasattr(tarfile, "data_filter"):  # Python 3.11.4 on: refuses links and paths outside dest
                archive.extractall(dest, filter="data")
            else:
                for member in archive.getmembers():
                    if not member.isfile() or member.name.startswith("/") or ".." in Path(member.name).parts:
                        raise tarfile.TarError(f"unexpected member {member.name!r}")
                archive.extractall(dest)
    except (tarfile.TarError, OSError, EOFError, zlib.error, ValueError) as e:
        # a flipped byte surfaces as zlib's error, a cut archive as EOF: the golden is damaged
        raise CorruptGoldenError(f"the stored checkpoint cannot be read: {type(e).__name__}: {e}", file=file) from None


def check_fits(manifest: Manifest, unpacked: Path, *, inputs: int, outputs: dict[str, int], file: str) -> None:
    """Refuse a stored checkpoint that does not fit its manifest and folder.

    The restore point lies within the folder's inputs; no query consumed more records than the
    inputs before the point and the outputs they caused; each query the manifest says consumed
    records has a checkpoint with Spark's metadata, offset log and commit log, holding a batch
    for each record it consumed; no topic had more outputs before the point than the folder
    recorded.

    Raises:
        CorruptGoldenError: what does not fit, naming the query and the missing part.
    """
    if not 0 <= manifest.restore_point <= inputs:
        msg = f"its restore point {manifest.restore_point} lies outside the folder's {inputs} input record(s)"
        raise CorruptGoldenError(msg, file=file, path="$.restorePoint")
    for topic, before in sorted(manifest.outputs_before.items()):
        if before > outputs.get(topic, 0):
            recorded = outputs.get(topic, 0)
            msg = f"{before} output(s) of {topic} before the restore point, but the folder records {recorded}"
            raise CorruptGoldenError(msg, file=file, path=f"$.outputsBefore.{topic}")
    # a query reads the inputs before the point and what earlier queries wrote for them
    readable = manifest.restore_point + sum(manifest.outputs_before.values())
    for query, consumed in sorted(manifest.consumed.items()):
        if consumed > readable:
            msg = (
                f"{query} consumed {consumed} record(s) before the restore point {manifest.restore_point}, "
                f"where {manifest.restore_point} input(s) and {readable - manifest.restore_point} output(s) were"
            )
            raise CorruptGoldenError(msg, file=file, path=f"$.consumed.{query}")
        if not consumed:
            continue
        checkpoint = unpacked / query
        for part in ("metadata", "offsets", "commits"):
            if not (checkpoint / part).exists():
                msg = f"the stored checkpoint of {query} has no {part} (Spark's {_PARTS[part]}); the archive is damaged"
                raise CorruptGoldenError(msg, file=file)
        last = consumed - 1  # one micro-batch per consumed record, numbered from 0
        for part in ("offsets", "commits"):
            if not (checkpoint / part / str(last)).is_file():
                msg = f"the stored checkpoint of {query} has no {part}/{last} for the {consumed} record(s) it consumed"
                raise CorruptGoldenError(msg, file=file)


_PARTS = {"metadata": "query metadata", "offsets": "offset log", "commits": "commit log"}


def dumps(manifest: Manifest) -> str:
    return json.dumps(manifest.as_json(), indent=2) + "\n"


def loads(text: str, *, file: str) -> Manifest:
    """Parse ``checkpoint.json``; a damaged file is a PlanFileError naming the field."""
    deep = json_too_deep(text)
    if deep is not None:  # found by the fuzz suite: json's reader recursed out of the stack
        msg = too_deep_message("the manifest", MAX_JSON_DEPTH)
        raise PlanFileError(msg, file=file, path=deep[0], line=deep[1], column=deep[2])
    try:
        raw = deep_call(json.loads, text)
    except ValueError as e:
        line, column = json_error_position(text, e)
        raise PlanFileError(f"invalid JSON: {getattr(e, 'msg', e)}", file=file, line=line, column=column) from None
    if not isinstance(raw, dict):
        raise PlanFileError("expected a JSON object", file=file, path="$")
    version = raw.get("manifestVersion")
    if version not in READS or isinstance(version, bool):
        reads = " and ".join(str(v) for v in READS)
        msg = f"manifestVersion is {json_value(version)}; this qtt reads versions {reads}"
        raise PlanFileError(msg, file=file, path="$.manifestVersion")
    fields: dict[str, type] = {
        "sparkVersion": str,
        "stateStoreProvider": str,
        "qttVersion": str,
        "restorePoint": int,
        "consumed": dict,
        "outputsBefore": dict,
        "writtenAt": dict,
    }
    if version >= 2:
        fields |= {"pysparkVersion": str, "stateFormat": dict}
    for name, kind in fields.items():
        if not isinstance(raw.get(name), kind) or isinstance(raw.get(name), bool):
            msg = f"expected {kind.__name__} for {name}, got {json_value(raw.get(name))}"
            raise PlanFileError(msg, file=file, path=f"$.{name}")
    for name in ("consumed", "outputsBefore"):
        for key, value in raw[name].items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise PlanFileError(f"expected a count, got {json_value(value)}", file=file, path=f"$.{name}.{key}")
    return Manifest(
        spark_version=raw["sparkVersion"],
        state_store_provider=raw["stateStoreProvider"],
        qtt_version=raw["qttVersion"],
        restore_point=raw["restorePoint"],
        consumed=dict(raw["consumed"]),
        outputs_before=dict(raw["outputsBefore"]),
        written_at={str(k): v if isinstance(v, str) else json_value(v) for k, v in raw["writtenAt"].items()},
        pyspark_version=raw.get("pysparkVersion", ""),
        state_format=raw.get("stateFormat", {}),
    )


def stored(folder: Path) -> Manifest | None:
    """The manifest of ``folder``'s stored checkpoint, or None if it has none."""
    path = folder / MANIFEST_FILE
    if not path.is_file():
        return None
    return loads(path.read_text(encoding="utf-8"), file=str(path))
