"""Load case files strictly.

ksqlDB ignores unknown fields, so a typo such as ``"ouputs"`` silently turns a test into a
test of nothing. qtt rejects it with a :class:`~qtt.errors.CaseFileError` that names the
file, the case, the JSON path and the line. One bad case does not stop the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import cattrs

from qtt.errors import CaseFileError
from qtt.harness.model import ANNOTATION_KEYS, CaseNode, CaseVariant, Record, TopicSpec
from qtt.plan.codec import describe_structure_error, make_converter

FILE_KEYS = frozenset(["tests"]) | ANNOTATION_KEYS


@dataclass(frozen=True)
class LoadedFile:
    """A case file: its variants, plus the cases that could not be loaded."""

    path: str
    variants: tuple[CaseVariant, ...]
    errors: tuple[CaseFileError, ...]


@cache
def _converter() -> cattrs.Converter:
    return make_converter()


def load_file(path: str | Path, *, display: str | None = None) -> LoadedFile:
    """Load every case of a file. A malformed file raises; a malformed case is collected.

    Raises:
        CaseFileError: the file is not JSON, or not an object with a ``tests`` array.
    """
    shown = display or str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CaseFileError(f"cannot read the file: {e}", file=shown) from None
    return load_text(text, file=shown)


def load_text(text: str, *, file: str) -> LoadedFile:
    """Load a case file from its text (``file`` names it in errors)."""
    from qtt.serde.values import loads

    try:
        data = loads(text)
    except ValueError as e:
        line, column = getattr(e, "lineno", None), getattr(e, "colno", None)
        msg = f"not valid JSON: {getattr(e, 'msg', e)}"
        raise CaseFileError(msg, file=file, line=line, column=column) from None
    if not isinstance(data, dict):
        msg = f"expected a JSON object with a 'tests' array, got {type(data).__name__}"
        raise CaseFileError(msg, file=file, path="$")
    unknown = sorted(set(data) - FILE_KEYS)
    if unknown:
        msg = f"unknown top-level field(s) {', '.join(map(repr, unknown))}; expected 'tests' (and comments)"
        raise CaseFileError(msg, file=file, path="$")
    tests = data.get("tests")
    if not isinstance(tests, list):
        msg = f"'tests' must be an array of cases, got {type(tests).__name__}"
        raise CaseFileError(msg, file=file, path="$.tests")
    variants: list[CaseVariant] = []
    errors: list[CaseFileError] = []
    for index, raw in enumerate(tests):
        try:
            node = parse_case(raw, file=file, index=index, text=text)
            variants.extend(expand(node, file=file, index=index))
        except CaseFileError as e:
            errors.append(e)
    return LoadedFile(file, tuple(variants), tuple(errors))


def _case_name(raw: Any, index: int) -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    return name if isinstance(name, str) and name else f"#{index}"


def _line_of(text: str, name: str) -> int | None:
    match = re.search(r'"name"\s*:\s*' + re.escape(_json_string(name)), text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _json_string(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def parse_case(raw: Any, *, file: str, index: int, text: str = "") -> CaseNode:
    """Structure one entry of ``tests``; raise :class:`CaseFileError` with its JSON path."""
    name = _case_name(raw, index)
    where = f"$.tests[{index}]"
    line = _line_of(text, name) if text else None
    if not isinstance(raw, dict):
        raise CaseFileError(f"a case must be an object, got {type(raw).__name__}", file=file, path=where)
    cleaned = _strip_annotations(raw)
    try:
        node = _converter().structure(cleaned, CaseNode)
    except Exception as e:  # cattrs groups every problem of the case
        problems = describe_structure_error(e).replace(" @ $", f" @ {where}")
        raise CaseFileError(problems, file=file, case=name, line=line) from None
    if not node.statements:
        raise CaseFileError("'statements' is empty; a case needs at least one statement",
                            file=file, case=name, path=f"{where}.statements", line=line)
    if node.expected_exception is None and not node.inputs and not node.outputs:
        raise CaseFileError("the case has no inputs, no outputs and no expectedException, so it tests nothing",
                            file=file, case=name, path=where, line=line)
    return node


def _strip_annotations(case: dict[str, Any]) -> dict[str, Any]:
    """Drop free-text keys at the structural levels only, never inside record data."""

    def clean(obj: Any) -> Any:
        if isinstance(obj, dict):
            return {k: v for k, v in obj.items() if k not in ANNOTATION_KEYS}
        return obj

    def clean_list(value: Any) -> Any:
        return [clean(item) for item in value] if isinstance(value, list) else value

    out = clean(case)
    for key in ("inputs", "outputs", "topics"):
        if key in out:
            out[key] = clean_list(out[key])
    if isinstance(out.get("post"), dict):
        post = clean(out["post"])
        if "sources" in post:
            post["sources"] = clean_list(post["sources"])
        if isinstance(post.get("topics"), dict):
            topics = clean(post["topics"])
            if "topics" in topics:
                topics["topics"] = clean_list(topics["topics"])
            post["topics"] = topics
        out["post"] = post
    if isinstance(out.get("expectedException"), dict):
        out["expectedException"] = clean(out["expectedException"])
    return out


def expand(node: CaseNode, *, file: str, index: int) -> Iterator[CaseVariant]:
    """One variant per ``format`` x ``config`` value, with ``{FORMAT}``/``{CONFIG}`` replaced."""
    formats: Iterable[str | None] = node.format or (None,)
    configs: Iterable[str | None] = node.config or (None,)
    for fmt in formats:
        for cfg in configs:
            label = "-".join(v for v in (fmt, cfg) if v is not None)

            def sub(value: Any, fmt: str | None = fmt, cfg: str | None = cfg) -> Any:
                if not isinstance(value, str):
                    return value
                if fmt is not None:
                    value = value.replace("{FORMAT}", fmt)
                if cfg is not None:
                    value = value.replace("{CONFIG}", cfg)
                return value

            yield CaseVariant(
                file=file,
                case=node.name,
                index=index,
                variant=label,
                statements=tuple(sub(s) for s in node.statements),
                inputs=node.inputs,
                outputs=node.outputs,
                topics=tuple(_substitute_topic(t, sub) for t in node.topics),
                properties={k: sub(v) for k, v in node.properties.items()},
                expected_exception=node.expected_exception,
                post=node.post,
                enabled=node.enabled,
            )


def _substitute_topic(topic: TopicSpec, sub: Any) -> TopicSpec:
    return replace(topic, format=sub(topic.format), key_format=sub(topic.key_format),
                   value_format=sub(topic.value_format))


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """Case files under ``paths``: ``*.json`` files, searched recursively in directories."""
    found: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found.extend(sorted(q for q in p.rglob("*.json") if q.is_file()))
        elif p.exists():
            found.append(p)
        else:
            raise CaseFileError("no such file or directory", file=str(path))
    return found


def record_path(variant: CaseVariant, kind: str, position: int) -> str:
    """The JSON path of an input or output record, for error messages."""
    return f"$.tests[{variant.index}].{kind}[{position}]"


__all__ = ["LoadedFile", "Record", "discover", "expand", "load_file", "load_text", "parse_case", "record_path"]


