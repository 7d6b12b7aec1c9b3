"""Who wrote a stored checkpoint, and in which state format: what decides whether it can be read.

A checkpoint's manifest (``checkpoint.json``, version 2) records, besides the Spark version and
state store provider: the pyspark version, qtt's version, and the state format: the session
settings that shape the files (the state store checkpoint format version, changelog
checkpointing), the settings Spark itself pins in the checkpoint's first offset log entry
(``conf``: state format versions, encodings, shuffle partitions), and each stateful operator's
metadata and state schema file versions. None of it names the machine that wrote it: the
checkpoint is moved to a fixed location (:data:`STORED_AT`) before it is packed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: where a stored checkpoint says it was written (per query: ``STORED_AT/<queryId>``); no
#: machine has it, a restore moves the checkpoint to its own place
STORED_AT = "/qtt-stored-checkpoint"

#: the session settings that decide the state files' format, recorded as the writer had them
SETTINGS = {
    "checkpointFormatVersion": "spark.sql.streaming.stateStore.checkpointFormatVersion",
    "changelogCheckpointing": "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled",
}


def stored_at(query_id: str) -> str:
    return f"{STORED_AT}/{query_id}"


def state_format(folder: Path, setting: Callable[[str], str | None]) -> dict[str, Any]:
    """The state format of the checkpoints under ``folder`` (one directory per query), with the
    session's ``setting(name)`` for each of :data:`SETTINGS` (None when not set)."""
    return {
        "settings": {name: setting(key) for name, key in SETTINGS.items()},
        "queries": {query.name: _query_format(query) for query in sorted(folder.iterdir()) if query.is_dir()},
    }


def _query_format(checkpoint: Path) -> dict[str, Any]:
    return {"pinned": _pinned(checkpoint), "operators": _operators(checkpoint)}


def _pinned(checkpoint: Path) -> dict[str, str]:
    """The settings Spark recorded in the first offset log entry (its line 2, ``conf``)."""
    first = checkpoint / "offsets" / "0"
    if not first.is_file():
        return {}
    lines = first.read_text(encoding="utf-8").splitlines()
    conf = json.loads(lines[1]).get("conf", {}) if len(lines) > 1 else {}
    return dict(sorted(conf.items()))


def _operators(checkpoint: Path) -> list[dict[str, Any]]:
    operators = []
    state = checkpoint / "state"
    for operator in sorted(state.iterdir() if state.is_dir() else [], key=lambda p: p.name):
        if not operator.name.isdigit():
            continue
        metadata = _first_file(operator / "_metadata")
        described: dict[str, Any] = {"id": int(operator.name)}
        if metadata is not None:
            head, _, body = metadata.read_text(encoding="utf-8").partition("\n")
            described["metadataVersion"] = head.strip()
            info = json.loads(body or "{}").get("operatorInfo", {})
            described["name"] = info.get("operatorName")
        schemas = sorted(p for p in (operator / "_stateSchema").rglob("*") if _is_data(p))
        described["stateSchemaVersions"] = sorted({_schema_version(p) for p in schemas})
        operators.append(described)
    return operators


def _first_file(folder: Path) -> Path | None:
    found = sorted(p for p in folder.rglob("*") if _is_data(p)) if folder.is_dir() else []
    return found[0] if found else None


def _is_data(path: Path) -> bool:
    return path.is_file() and not path.name.startswith(".")


def _schema_version(path: Path) -> str:
    """A state schema file's version: its first bytes up to the first non-printable one (``v3``)."""
    head = path.read_bytes()[:8]
    text = "".join(chr(b) for b in head if 32 < b < 127)
    return text.split()[0] if text else ""
