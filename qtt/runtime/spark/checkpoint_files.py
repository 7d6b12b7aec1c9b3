"""Moving a Spark checkpoint to another directory, and saying why a moved one cannot be read.

Spark's operator metadata (``state/<op>/_metadata/v2/<batch>``) names its state schema files
by absolute path, so a checkpoint copied elsewhere points back at where it was written. A
copy is made usable by writing its own location into those files in place of the original
one; nothing else in the checkpoint holds a path.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def copy_checkpoint(source: Path, dest: Path, written_at: str) -> None:
    """Copy the checkpoint ``source``, written by Spark at ``written_at``, to ``dest``, and relocate it."""
    shutil.copytree(source, dest)
    if written_at:
        relocate(dest, written_at, str(dest.absolute()))


def relocate(checkpoint: Path, written_at: str, location: str) -> None:
    """Make the checkpoint in ``checkpoint``, written by Spark at ``written_at``, name
    ``location`` as its place instead."""
    for metadata in sorted(checkpoint.glob("state/*/_metadata/v2/*")):
        if metadata.name.startswith("."):  # Hadoop's checksum of the file beside it
            continue
        text = metadata.read_text(encoding="utf-8")
        moved = text.replace(written_at.rstrip("/") + "/", location.rstrip("/") + "/")
        if moved != text:
            metadata.write_text(moved, encoding="utf-8")
            # the old checksum no longer matches; Hadoop reads a file without one unchecked
            metadata.with_name(f".{metadata.name}.crc").unlink(missing_ok=True)


_SCHEMA_ERROR = re.compile(
    r"\[(?P<code>STATE_STORE_(?:KEY|VALUE)_SCHEMA_NOT_COMPATIBLE)\].*?"
    r"Existing (?P<part>key|value)_schema=(?P<old>.*?) and new (?P=part)_schema=(?P<new>.*?)\.?\s*$",
    re.S | re.M,
)


def unreadable_state(session: SparkSession, checkpoint: Path, error: BaseException) -> str | None:
    """Which stored state variable today's operators cannot read, from Spark's schema check.

    Spark names the schemas but not the state variable; the checkpoint's own metadata says
    which variable holds the stored schema. None when ``error`` is not such a failure.
    """
    text = "\n".join(str(e) for e in _chain(error))
    found = _SCHEMA_ERROR.search(text)
    if found is None:
        return None
    old, new, part = found["old"], found["new"], found["part"]
    where = "a state variable"
    stored_fields = _field_names(old)
    for operator, name in _variables(session, checkpoint):
        schema = session.read.format("statestore").option("operatorId", operator).option("stateVarName", name)
        fields = schema.load(str(checkpoint)).schema[part].dataType
        if [f.name for f in fields.fields] == stored_fields:  # type: ignore[attr-defined]
            where = f"operator {operator}, state variable {name}"
            break
    return (
        f"{where}: the stored checkpoint holds {part} schema {old}, today's operator expects {new} "
        f"({found['code']}): today's runtime cannot read the state this plan wrote"
    )


def _chain(error: BaseException | None) -> list[BaseException]:
    out = []
    while error is not None and error not in out:
        out.append(error)
        error = error.__cause__ or error.__context__
    return out


def _field_names(schema_text: str) -> list[str]:
    """The top-level field names of a Scala ``StructType(StructField(NAME,type,nullable),...)``."""
    names, depth, i = [], 0, 0
    while i < len(schema_text):
        if schema_text.startswith("StructField(", i) and depth == 1:
            start = i + len("StructField(")
            names.append(schema_text[start : schema_text.index(",", start)])
        if schema_text[i] == "(":
            depth += 1
        elif schema_text[i] == ")":
            depth -= 1
        i += 1
    return names


def _variables(session: SparkSession, checkpoint: Path) -> list[tuple[int, str]]:
    rows = session.read.format("state-metadata").load(str(checkpoint)).collect()
    return [
        (row["operatorId"], variable["stateName"])
        for row in sorted(rows, key=lambda r: r["operatorId"])
        for variable in json.loads(row["operatorProperties"] or "{}").get("stateVariables", [])
    ]
