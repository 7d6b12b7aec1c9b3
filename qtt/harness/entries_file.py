"""The small TOML files a project keeps beside its goldens (``quarantine.toml``,
``retired.toml``, ``completeness.toml``, qtt's own ``spark_refusals.toml``): an array of tables,
each entry's fields text. One reader, so every such file says what is wrong the same way."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path

from qtt.errors import QttError


def read_entries(
    path: Path, table: str, required: Sequence[str], optional: Sequence[str] = (), *, hint: str = ""
) -> list[dict[str, str]]:
    """The ``[[table]]`` entries of ``path`` (none when it does not exist), each checked: every
    ``required`` field present as non-empty text, no field but those and ``optional``.

    Raises:
        QttError: the file is not TOML, holds another table, or an entry is malformed; names the
            file, the entry's number and what was expected.
    """
    if not path.is_file():
        return []
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise QttError(f"{path}: not valid TOML: {e}", hint=hint) from None
    others = sorted(set(document) - {table})
    if others:
        raise QttError(f"{path}: unknown table {', '.join(others)}; entries are [[{table}]] tables", hint=hint)
    fields = (*required, *optional)
    out = []
    for index, entry in enumerate(document.get(table, []), start=1):
        missing = [name for name in required if not isinstance(entry.get(name), str) or not entry[name].strip()]
        unknown = sorted(set(entry) - set(fields))
        wrong = [name for name in optional if name in entry and not isinstance(entry[name], str)]
        if missing or unknown or wrong:
            problem = (
                f"missing {', '.join(missing)}"
                if missing
                else f"unknown field {', '.join(unknown)}"
                if unknown
                else f"{', '.join(wrong)} must be text"
            )
            has = f"{', '.join(required)}" + (f" and may have {', '.join(optional)}" if optional else "")
            raise QttError(f"{path}: {table} entry {index}: {problem}; an entry has {has}", hint=hint)
        out.append(dict(entry))
    return out
