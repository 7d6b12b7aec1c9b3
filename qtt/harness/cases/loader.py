"""Load case files strictly.

ksqlDB ignores unknown fields, so a typo such as ``"ouputs"`` silently turns a test into a
test of nothing. qtt rejects it with a :class:`~qtt.errors.CaseFileError` that names the
file, the case, the JSON path and the line. One bad case does not stop the others.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields, is_dataclass, replace
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any, get_args, get_type_hints

import cattrs

from qtt import sqltypes as t
from qtt.errors import CaseFileError, ConfigError, did_you_mean
from qtt.harness.cases.json_comments import UnterminatedCommentError, blank_comments
from qtt.harness.cases.json_index import json_lines
from qtt.harness.cases.model import (
    ANNOTATION_KEYS,
    QTT_PROCESSING_LOG_KEY,
    CaseNode,
    CaseVariant,
    Record,
    at_line,
)
from qtt.plan.ir.codec import camel, describe_structure_error, make_converter
from qtt.plan.ir.depth import MAX_JSON_DEPTH, deep_call, json_error_position, json_too_deep, too_deep_message
from qtt.plan.settings import check_settings

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
    return load_text(read_case_text(path, shown), file=shown)


def read_case_text(path: str | Path, shown: str) -> str:
    """A case file's text (UTF-8); a file that cannot be read is a :class:`CaseFileError`."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CaseFileError(f"cannot read the file: {e}", file=shown) from None


def load_text(text: str, *, file: str) -> LoadedFile:
    """Load a case file from its text (``file`` names it in errors).

    Runs on the large stack of :func:`~qtt.plan.ir.depth.deep_call`, so that values nested up to
    :data:`~qtt.plan.ir.depth.MAX_JSON_DEPTH` levels load.

    Raises:
        CaseFileError: the file is not JSON, nests too deeply, or is not an object with a
            ``tests`` array, or a ``/*`` comment is not closed.
    """
    try:
        text = blank_comments(text)
    except UnterminatedCommentError as e:
        line = text.count("\n", 0, e.offset) + 1
        column = e.offset - (text.rfind("\n", 0, e.offset) + 1) + 1
        raise CaseFileError(f"not valid JSON: {e}", file=file, line=line, column=column) from None
    deep = json_too_deep(text)
    if deep is not None:
        path, line, column = deep
        msg = too_deep_message("the case file", MAX_JSON_DEPTH)
        raise CaseFileError(msg, file=file, path=path, line=line, column=column)
    return deep_call(_load_text, text, file)


def _load_text(text: str, file: str) -> LoadedFile:
    from qtt.serde.values import loads

    try:
        data = loads(text)
    except ValueError as e:
        line, column = json_error_position(text, e)
        msg = f"not valid JSON: {getattr(e, 'msg', e)}"
        raise CaseFileError(msg, file=file, line=line, column=column) from None
    if not isinstance(data, dict):
        msg = f"expected a JSON object with a 'tests' array, got {type(data).__name__}"
        raise CaseFileError(msg, file=file, path="$")
    unknown = sorted(set(data) - FILE_KEYS)
    if unknown:
        shown = ", ".join(map(repr, unknown))
        msg = f"unknown top-level field(s) {shown}; expected 'tests' (and comments)"
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
            _note_output_lines(text, index, node)
            lines = _statement_lines(text, index, len(node.statements))
            expanded = [replace(v, statement_lines=lines) for v in expand(node, file=file, index=index)]
            for variant in expanded:
                _check_properties(variant, text)
            variants.extend(expanded)
        except CaseFileError as e:
            errors.append(e)
    return LoadedFile(file, tuple(variants), tuple(errors))


def _check_properties(variant: CaseVariant, text: str) -> None:
    """ksqlDB's runner reads a case's properties as a ``KsqlConfig`` while it builds the test: a
    value a setting's type cannot read makes the case an invalid test, not a case's failure."""
    try:
        check_settings(variant.properties)
    except ConfigError as e:
        path = f"$.tests[{variant.index}].properties"
        msg = f"Invalid test. {e.message}"
        raise CaseFileError(msg, file=variant.file, case=variant.case, path=path, line=_line_of(text, path)) from None


def _statement_lines(text: str, index: int, count: int) -> tuple[int, ...]:
    """The line in ``text`` of each of case ``index``'s statements, so SQL errors can point there."""
    try:
        lines = json_lines(text)
    except (IndexError, ValueError):
        return ()
    found = tuple(lines.get(f"$.tests[{index}].statements[{j}]", 0) for j in range(count))
    return found if all(found) else ()


def _note_output_lines(text: str, index: int, node: CaseNode) -> None:
    """Note on each expected output of case ``index`` its line in ``text``, so reports can point there."""
    try:
        lines = json_lines(text)
    except (IndexError, ValueError):
        return
    for j, record in enumerate(node.outputs):
        at_line(record, lines.get(f"$.tests[{index}].outputs[{j}]"))


def _case_name(raw: Any, index: int) -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    return name if isinstance(name, str) and name else f"#{index}"


def _line_of(text: str, path: str) -> int | None:
    """The line of ``path`` in ``text``, or of its closest enclosing value that is there."""
    if not text:
        return None
    try:
        lines = json_lines(text)
    except (IndexError, ValueError):  # not the text the case came from; no line then
        return None
    while path:
        if path in lines:
            return lines[path]
        shorter = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", path) if path != "$" else ""
        if shorter == path:  # a key the path syntax cannot take apart (``"x["``): no line, rather than a loop
            return None
        path = shorter
    return None


_PROBLEM = re.compile(r"^(?P<problem>.*) @ (?P<path>\$\S*)$")
_UNKNOWN = re.compile(r"^unknown field\(s\) '(?P<name>[^']+)'")


def _structure_problem(error: BaseException, where: str) -> tuple[str, str | None]:
    """A cattrs error as (message, path of its first problem), with paths from the file's root.

    An unknown field gets "did you mean" with the closest field of the object it is in.
    """
    problems = [p.replace(" @ $", f" @ {where}", 1) for p in describe_structure_error(error).split("; ")]
    matches = [_PROBLEM.match(problem) for problem in problems]
    for index, match in enumerate(matches):
        unknown = _UNKNOWN.match(match["problem"]) if match else None
        if match and unknown:
            hint = did_you_mean(unknown["name"], _known_keys(match["path"][len(where) :]))
            problems[index] = f"{match['problem']}{hint} @ {match['path']}"
    first = matches[0]
    if first is None:
        return "; ".join(problems), None
    unknown = _UNKNOWN.match(first["problem"])
    path = f"{first['path']}.{unknown['name']}" if unknown else first["path"]
    if len(problems) == 1:
        return problems[0].rpartition(" @ ")[0], path
    return "; ".join(problems), path


def _known_keys(path: str) -> list[str]:
    """The JSON keys of the case-file object at ``path`` (relative to the case: ``.inputs[0]``)."""
    model: Any = CaseNode
    for name in re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)", path):
        hints = {camel(f.name): f.name for f in fields(model) if f.init}
        if name not in hints:
            return []
        model = _dataclass_in(get_type_hints(model)[hints[name]])
        if model is None:
            return []
    return [camel(f.name) for f in fields(model) if f.init]


def _dataclass_in(hint: Any) -> type | None:
    """The dataclass a field holds, through ``X | None`` and ``tuple[X, ...]``."""
    if is_dataclass(hint) and isinstance(hint, type):
        return hint
    return next((found for arg in get_args(hint) if (found := _dataclass_in(arg)) is not None), None)


def parse_case(raw: Any, *, file: str, index: int, text: str = "") -> CaseNode:
    """Structure one entry of ``tests``; raise :class:`CaseFileError` with its JSON path.

    ``text`` is the whole file's text; when given, errors carry the line they point at.
    """
    name = _case_name(raw, index)
    where = f"$.tests[{index}]"

    def fail(msg: str, path: str | None) -> CaseFileError:
        return CaseFileError(msg, file=file, case=name, path=path, line=_line_of(text, path or where))

    if not isinstance(raw, dict):
        msg = f"a case must be an object, got {type(raw).__name__}"
        raise CaseFileError(msg, file=file, path=where, line=_line_of(text, where))
    cleaned = _jackson_longs(_strip_annotations(raw))
    try:
        node = _converter().structure(cleaned, CaseNode)
    except Exception as e:  # cattrs groups every problem of the case
        raise fail(*_structure_problem(e, where)) from None
    if not node.statements:
        raise fail("'statements' is empty; a case needs at least one statement", f"{where}.statements")
    if node.expected_exception is None and not node.inputs and not node.outputs:
        raise fail(
            "the case has no inputs, no outputs and no expectedException, so it tests nothing",
            where,
        )
    thrown = node.expected_exception
    if thrown is not None and (
        (thrown.type is None and thrown.message is None) or (thrown.cause_message and not thrown.cause)
    ):
        # ksqlDB's ExpectedExceptionNode refuses the test with these words as it loads
        missing = (
            "expectedException.cause"
            if thrown.type is not None or thrown.message is not None
            else "expectedException.type or expectedException.message"
        )
        raise fail(f"test must define '{missing}' field", f"{where}.expectedException")
    for key, records in (("inputs", node.inputs), ("outputs", node.outputs)):
        for position, record in enumerate(records):
            if not record.topic:  # ksqlDB's RecordNode reads an empty topic as a missing one
                raise fail("test must define 'topic' field", f"{where}.{key}[{position}].topic")
            if record.topic.strip() != record.topic:  # ksqlDB's Record, in its words
                msg = f"Record topic names must not start or end with whitespace: '{record.topic}'"
                raise fail(msg, f"{where}.{key}[{position}].topic")
    for position, source in enumerate(node.post.sources if node.post else ()):
        # ksqlDB's SourceNode: a source's type is required, and is a stream or a table
        if source.type is None:
            raise fail("test must define 'type' field", f"{where}.post.sources[{position}]")
        if source.type.upper() not in ("STREAM", "TABLE"):
            raise fail("type: must be either STREAM or TABLE", f"{where}.post.sources[{position}].type")
    blacklist = node.post.topics.blacklist if node.post and node.post.topics else None
    if blacklist:
        try:
            re.compile(blacklist)
        except (re.error, OverflowError, RecursionError) as e:
            shown = blacklist if len(blacklist) <= 60 else blacklist[:60] + "..."
            msg = f"'blacklist' must be a regular expression; {shown!r} is not: {e}"
            raise fail(msg, f"{where}.post.topics.blacklist") from None
    for position, entry in enumerate(node.qtt_processing_log or ()):
        if not 0 <= entry.input < len(node.inputs):
            msg = (
                f"'input' must be the position of one of the case's {len(node.inputs)} inputs "
                f"(0 to {len(node.inputs) - 1}), got {entry.input}"
            )
            raise fail(msg, f"{where}.{QTT_PROCESSING_LOG_KEY}[{position}].input")
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
    for key in ("inputs", "outputs", "topics", QTT_PROCESSING_LOG_KEY):
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


_JAVA_LONG = re.compile(r"[+-]?[0-9]+")
_LONG_RANGE = range(t.BIGINT_MIN, t.BIGINT_MAX + 1)


def _jackson_long(value: Any) -> Any:
    """``value`` as Jackson's ``readValueAs(Long.class)`` reads it where it can: a number written
    as text is parsed and a fraction is truncated; anything else is left for the strict check."""
    if isinstance(value, str) and _JAVA_LONG.fullmatch(value) and int(value) in _LONG_RANGE:
        return int(value)
    if isinstance(value, float | Decimal) and math.isfinite(value) and int(value) in _LONG_RANGE:
        return int(value)
    return value


def _jackson_longs(case: dict[str, Any]) -> dict[str, Any]:
    """A record's ``timestamp`` and its window's ``start`` and ``end``, read as ksqlDB's runner
    reads them (``RecordNode``, ``WindowData``: Java longs through Jackson, which takes ``"1500"``
    and ``2500.9`` as 1500 and 2500)."""

    def record(rec: Any) -> Any:
        if not isinstance(rec, dict):
            return rec
        rec = dict(rec)
        if "timestamp" in rec:
            rec["timestamp"] = _jackson_long(rec["timestamp"])
        if isinstance(rec.get("window"), dict):
            rec["window"] = {k: _jackson_long(v) if k in ("start", "end") else v for k, v in rec["window"].items()}
        return rec

    out = dict(case)
    for key in ("inputs", "outputs"):
        if isinstance(out.get(key), list):
            out[key] = [record(rec) for rec in out[key]]
    return out


#: what ksqlDB's runner puts in place of ``{FORMAT}`` in a case without a ``format`` list
FORMAT_REPLACE_ERROR = "To use {FORMAT} in your statements please set the 'format' test case element"


def expand(node: CaseNode, *, file: str, index: int) -> Iterator[CaseVariant]:
    """One variant per ``format`` x ``config`` value, as ksqlDB's ``TestCaseBuilder`` makes them.

    ``{FORMAT}`` is replaced in the statements only, and by ksqlDB's words in a case without a
    ``format`` list (so such a statement fails); a ``config`` value replaces the one property
    whose whole value is ``{CONFIG}`` in any case, which a ``config`` list requires.

    Raises:
        CaseFileError: a ``config`` list without exactly one ``{CONFIG}`` property.
    """
    formats: Iterable[str | None] = node.format or (None,)
    configs: Iterable[str | None] = node.config or (None,)
    overwrite = _config_property(node, file=file, index=index) if node.config else None
    for fmt in formats:
        statements = tuple(s.replace("{FORMAT}", FORMAT_REPLACE_ERROR if fmt is None else fmt) for s in node.statements)
        for cfg in configs:
            label = "-".join(v for v in (fmt, cfg) if v is not None)
            properties = dict(node.properties)
            if overwrite is not None and cfg is not None:
                properties[overwrite] = cfg
            yield CaseVariant(
                file=file,
                case=node.name,
                index=index,
                variant=label,
                statements=statements,
                inputs=node.inputs,
                outputs=node.outputs,
                topics=node.topics,
                properties=properties,
                expected_exception=node.expected_exception,
                post=node.post,
                enabled=node.enabled,
                qtt_processing_log=node.qtt_processing_log,
                qtt_former_names=node.qtt_former_names,
            )


def _config_property(node: CaseNode, *, file: str, index: int) -> str:
    """The property a ``config`` value replaces; ksqlDB takes the only one whose value is
    ``{CONFIG}`` (Guava's ``Iterables.getOnlyElement``, whose words the error keeps)."""
    found = [k for k, v in node.properties.items() if isinstance(v, str) and v.upper() == "{CONFIG}"]
    if len(found) == 1:
        return found[0]
    if found:
        shown = ", ".join(f"{k}={node.properties[k]}" for k in found[:2]) + (", ..." if len(found) > 2 else "")
        why = f"expected one element but was: <{shown}>"
    else:
        why = "null"
    msg = f"Invalid test '{node.name}': {why} (a 'config' list replaces the one property whose value is '{{CONFIG}}')"
    raise CaseFileError(msg, file=file, case=node.name, path=f"$.tests[{index}].properties")


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """Case files under ``paths``: ``*.json`` files, searched recursively in directories.

    SQL test files (``*.sql``) are found by :func:`qtt.harness.sqltests.files.discover_sql`.
    """
    found: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found.extend(sorted(q for q in p.rglob("*.json") if q.is_file()))
        elif p.suffix == ".sql" and p.is_file():
            continue  # a SQL test file (qtt.harness.sqltests.files)
        elif p.exists():
            found.append(p)
        else:
            raise CaseFileError("no such file or directory", file=str(path))
    return found


__all__ = [
    "LoadedFile",
    "Record",
    "discover",
    "expand",
    "load_file",
    "load_text",
    "parse_case",
]
