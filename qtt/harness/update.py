"""``qtt run --update``: write the actual outputs of failing cases into their case files.

A case whose variants failed on their outputs gets its ``outputs`` array replaced by the records
its queries wrote, for the user to review with ``git diff`` (as syrupy's ``--snapshot-update``
and insta's ``accept`` do). Every other character of the file stays as it was: comments, the
other cases, key order. The new array is laid out like the file's other record arrays (one
record a line, or indented over several lines), and its records are what the comparison reads
(:mod:`qtt.harness.replay.compare`): each actual record's decoded key and value, decimals exact,
bytes in base64 as the formats write them. An expected record that still matches the record
written in its place is kept as the file writes it, so that the diff shows only what changed.

Only what can be written honestly is written. A case is refused, with one line saying why, when
its variants disagree on their outputs, when it expects an exception, when one of its variants
errored or failed before its outputs were compared, when not all its variants ran, or when it has
no literal ``outputs`` array. SQL test files, scenarios (compared with the fresh replay, not the
file) and historical folders are never written. What the update writes is checked before the
file is: the new text must load strictly, and every variant that ran must pass against it.

Entry point: :func:`update_outputs`; :func:`Updates.lines` is what ``qtt run`` prints.
"""

from __future__ import annotations

import base64
import heapq
import shlex
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import simplejson

from qtt.errors import QttError, did_you_mean
from qtt.harness.cases.json_comments import blank_comments
from qtt.harness.cases.json_index import JsonIndex, json_index
from qtt.harness.cases.loader import LoadedFile, load_text
from qtt.harness.cases.model import CaseVariant, Record
from qtt.harness.replay.compare import compare
from qtt.harness.replay.scenarios import RESTORES
from qtt.harness.results import CaseResult
from qtt.harness.selection import HISTORICAL_ROOT
from qtt.harness.status import Status
from qtt.harness.whole_file import write_whole
from qtt.plan.ir.depth import deep_call
from qtt.serde.values import loads

if TYPE_CHECKING:
    from qtt.harness.replay.driver import OutputRecord
    from qtt.harness.replay.topic_serdes import TopicSerde

#: result kinds that are never written, and why (scenarios are named by their scenario)
NEVER_WRITTEN = {
    "sql": "a SQL test file holds ASSERT statements, not an outputs array: edit them by hand",
    "load": "it does not load (see the error above): fix it first",
}
FOLDER_KINDS = ("historical", *RESTORES)
#: the record fields a case file writes, in ksqlDB's order when the file shows none
FIELD_ORDER = ("topic", "key", "value", "timestamp", "window", "headers")


@dataclass(frozen=True)
class Updated:
    """A case whose ``outputs`` array was rewritten: per topic, records now and before."""

    file: str
    case: str
    counts: tuple[tuple[str, int, int], ...]
    #: what still fails and is not written (post-conditions, the processing log), or ""
    still: str = ""

    def line(self) -> str:
        counts = ", ".join(
            f"{now} record(s) on {topic} (was {was})" if n == 0 else f"{now} on {topic} (was {was})"
            for n, (topic, now, was) in enumerate(self.counts)
        )
        still = f"; still, {self.still} (not written: --update writes outputs only)" if self.still else ""
        return f"UPDATED {self.file}: case {self.case!r}: {counts or 'no record'}{still}"


@dataclass(frozen=True)
class Refused:
    """What ``--update`` did not write, and why (one line)."""

    file: str
    what: str
    reason: str

    def line(self) -> str:
        return f"NOT UPDATED {self.file}: {self.what + ': ' if self.what else ''}{self.reason}"


@dataclass
class Updates:
    """What an update wrote and what it refused, each in the run's order."""

    updated: list[Updated] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The report: an ``UPDATED`` or ``NOT UPDATED`` line each, then how to review."""
        lines = [u.line() for u in self.updated] + [r.line() for r in self.refused]
        if self.updated:
            folders = sorted({str(Path(u.file).parent) for u in self.updated})
            lines.append("review with: git diff " + " ".join(shlex.quote(f"{f.rstrip('/')}/") for f in folders))
        elif not self.refused:
            lines.append("qtt run --update: nothing to update: no case failed")
        return lines


class _Refusal(Exception):
    """Why one case is not written (never leaves this module: it becomes a :class:`Refused`)."""


def update_outputs(results: Sequence[CaseResult]) -> Updates:
    """Write the actual outputs of the cases that failed on them into their case files.

    ``results`` are a run's (``qtt run``): case variants carry their replay and comparison.
    A file is written whole or not at all (a temporary file renamed into place).
    """
    updates = Updates()
    cases: dict[str, dict[str, list[CaseResult]]] = {}
    folders: list[CaseResult] = []
    order: list[str | Refused] = []  # the run's order: a file where its first case was, or a refusal
    for result in results:
        if result.kind == "case":
            if result.file not in cases:
                order.append(result.file)
            cases.setdefault(result.file, {}).setdefault(result.case, []).append(result)
        elif not result.status.bad:
            continue
        elif result.kind in FOLDER_KINDS:
            folders.append(result)
        else:
            what = f"test {result.case!r}" if result.kind == "sql" else f"case {result.label!r}"
            what = "" if result.kind == "load" and result.case == "(file)" else what
            order.append(Refused(result.file, what, _never_written(result.kind)))
    for entry in order:
        if isinstance(entry, Refused):
            updates.refused.append(entry)
            continue
        failing = {case: group for case, group in cases[entry].items() if any(r.status.bad for r in group)}
        if failing:
            _update_file(entry, failing, updates)
    if folders:
        reason = "historical plans are never written: a folder that fails is a regression of the runtime, fix it"
        updates.refused.append(Refused(f"{len(folders)} historical folder(s)", "", reason))
    return updates


def _never_written(kind: str) -> str:
    if kind in NEVER_WRITTEN:
        return NEVER_WRITTEN[kind]
    return (
        f"the {kind} scenario is compared with the fresh replay, not with the case file "
        "(outputs, processing log and internal topics): nothing to write, the runtime differs"
    )


@dataclass
class _File:
    """A case file as read for an update: its text, that text with comments blanked, its index."""

    path: str
    text: str
    blanked: str
    index: JsonIndex
    loaded: LoadedFile
    raw: Any
    #: the lines of ``blanked``
    rows: list[str] = field(default_factory=list)


def _read(path: str) -> _File:
    if HISTORICAL_ROOT in Path(path).parts or Path(path).suffix != ".json":
        raise _Refusal("only case files (*.json outside historical_plans/) are written")
    try:
        text = Path(path).read_bytes().decode("utf-8")
        blanked = blank_comments(text)
        index = deep_call(json_index, blanked)
        raw = deep_call(loads, blanked)
        loaded = load_text(text, file=path)
    except (OSError, UnicodeDecodeError, ValueError, IndexError, QttError) as e:
        raise _Refusal(f"the file cannot be read back as it is now: {e}") from None
    return _File(path, text, blanked, index, loaded, raw, blanked.split("\n"))


def _update_file(path: str, failing: Mapping[str, list[CaseResult]], updates: Updates) -> None:
    """Update every failing case of one file, then write the file once."""
    try:
        read = _read(path)
    except _Refusal as e:
        updates.refused += [Refused(path, f"case {case!r}", str(e)) for case in failing]
        return
    pending: list[_Pending] = []
    for case, group in failing.items():
        try:
            pending.append(_update_case(read, case, group))
        except _Refusal as e:
            updates.refused.append(Refused(path, f"case {case!r}", str(e)))
    # The written file is read back once with every case's new array, not once per case (a file
    # of many failing cases would be parsed as many times); a case that does not read back is
    # refused and the rest checked again without it.
    while pending:
        refusals = _check(read, pending)
        if not refusals:
            break
        for item in pending:
            if item.updated.case in refusals:
                updates.refused.append(Refused(path, f"case {item.updated.case!r}", refusals[item.updated.case]))
        pending = [item for item in pending if item.updated.case not in refusals]
    if not pending:
        return
    done = [item.updated for item in pending]
    try:
        write_whole(path, _spliced(read.text, [(item.span, item.array) for item in pending]))
    except OSError as e:
        reason = f"the file could not be written ({e.strerror or e}); it was left as it was"
        updates.refused += [Refused(path, f"case {u.case!r}", reason) for u in done]
        return
    updates.updated += done


@dataclass(frozen=True)
class _Pending:
    """A case's new ``outputs`` array, before the written file is read back."""

    span: tuple[int, int]
    array: str
    updated: Updated
    index: int
    group: Sequence[CaseResult]
    chosen: CaseResult


def _update_case(read: _File, case: str, group: Sequence[CaseResult]) -> _Pending:
    """The span of a case's ``outputs`` array, its new text, and what changed; or a refusal."""
    indexes = sorted({v.index for v in read.loaded.variants if v.case == case})
    if not indexes:
        raise _Refusal("the case is not in the file as it is now (renamed, or it no longer loads)")
    if len(indexes) > 1:
        raise _Refusal(f"{len(indexes)} cases of the file are named so: rename one, then update")
    index = indexes[0]
    variants = [v for v in read.loaded.variants if v.index == index]
    chosen = _chosen(variants, group)
    assert chosen.replay is not None
    path = f"$.tests[{index}].outputs"
    span = read.index.spans.get(path)
    if span is None or read.blanked[span[0]] != "[":
        msg = "its outputs are not a literal 'outputs' array in the file: add \"outputs\": [] and update again"
        raise _Refusal(msg)
    old = variants[0].outputs
    records = _actual_records(old, chosen)
    kept = _kept(read, index, old, records, group)
    fields = _fields(read, index, old, records)
    array = _render(read, index, [kept.get(n) or _document(r, fields) for n, r in enumerate(records)])
    was = Counter(r.topic for r in old)
    now = Counter(r.topic for r in records)
    counts = tuple((topic, now[topic], was[topic]) for topic in dict.fromkeys([*now, *was]))
    return _Pending(span, array, Updated(read.path, case, counts, _other_failures(group)), index, group, chosen)


def _chosen(variants: Sequence[CaseVariant], group: Sequence[CaseResult]) -> CaseResult:
    """The variant whose actual outputs are written, once every variant's result allows it."""
    if variants[0].expected_exception is not None:
        raise _Refusal("it expects an exception (expectedException): it has no outputs to write")
    for result in group:
        label = f"variant [{result.variant}]" if result.variant else "it"
        first = result.reason.splitlines()[0] if result.reason else ""
        if result.status == Status.INFRA:
            raise _Refusal(f"{label} could not run (infrastructure error): rerun it, then update")
        if result.status == Status.TIMED_OUT:
            raise _Refusal(f"{label} timed out: its outputs are only what had arrived by then")
        if result.status in (Status.ERROR, Status.CORRUPT):
            raise _Refusal(f"{label} errored, which is not a comparison failure: {first}")
        if result.status == Status.FAILED and (result.comparison is None or result.replay is None):
            raise _Refusal(f"{label} failed before its outputs were compared: {first}")
    ran = {r.variant for r in group}
    missing = [v.variant for v in variants if v.variant not in ran]
    if missing:
        raise _Refusal(
            f"only {len(variants) - len(missing)} of its {len(variants)} variants ran (not "
            f"{', '.join(missing)}): run them all (no -k, --shard or -x that leaves one out), then update"
        )
    failed = [r for r in group if r.comparison is not None and not r.comparison.ok]
    if not failed:
        other = _other_failures(group) or "something else fails"
        raise _Refusal(f"its outputs match, but {other}: --update writes outputs only, fix it by hand")
    return failed[0]


def _other_failures(group: Sequence[CaseResult]) -> str:
    """What fails in a case besides its outputs (never written), or ""."""
    return " and ".join(
        what
        for what, failed in (
            ("its post-conditions fail", any(r.problems for r in group)),
            ("its processing log differs from qttProcessingLog", any(r.log_problems for r in group)),
        )
        if failed
    )


def _actual_records(old: Sequence[Record], chosen: CaseResult) -> list[OutputRecord]:
    """The records to write: on the topics the case expects (every topic when it expects none),
    each topic's in the order written (the records the case wrote there first, as compared),
    merged by the input that caused them, then by the statement order of the query that wrote
    them (the harness's ordering rule)."""
    outputs, sinks = _written(chosen)
    written = {topic for topic, records in outputs.items() if records} | set(sinks)
    topics = list(dict.fromkeys(r.topic for r in old)) or sorted(t for t, rs in outputs.items() if rs)
    for topic in topics:
        if topic not in written:
            folded = {name.casefold(): name for name in written}
            same = folded.get(topic.casefold())
            hint = f" Did you mean {same!r}?" if same else did_you_mean(topic, written)
            shown = ", ".join(sorted(written)) or "none"
            raise _Refusal(
                f"it expects records on {topic!r}, which no query writes (they write {shown}).{hint} "
                "Fix the topic's name, then update"
            )
    queries = [q.query_id for q in chosen.planned.plan.queries()] if chosen.planned is not None else []
    rank = {query: n for n, query in enumerate(queries)}
    by_topic = (outputs.get(topic, []) for topic in topics)
    return list(heapq.merge(*by_topic, key=lambda r: (r.seq, rank.get(r.query_id, len(rank)))))


def _kept(
    read: _File, index: int, old: Sequence[Record], records: Sequence[OutputRecord], group: Sequence[CaseResult]
) -> dict[int, str]:
    """The expected records that still hold, kept as written (by position in ``records``).

    The k-th record written on a topic is compared with the k-th expected one, as the comparison
    does; when it matches for every variant that ran, the file's own text of it stays (its field
    names, its number spelling, its comments), so that a diff shows only what changed.
    """
    placed: dict[str, list[tuple[int, Record]]] = {}
    for position, record in enumerate(old):
        placed.setdefault(record.topic, []).append((position, record))
    ran = [r for r in group if r.replay is not None and r.status != Status.SKIPPED]
    kept: dict[int, str] = {}
    seen: Counter[str] = Counter()
    for n, actual in enumerate(records):
        k = seen[actual.topic]
        seen[actual.topic] += 1
        if k >= len(placed.get(actual.topic, ())):
            continue
        position, expected = placed[actual.topic][k]
        span = read.index.spans.get(f"$.tests[{index}].outputs[{position}]")
        if span is not None and all(_holds(expected, result, k) for result in ran):
            kept[n] = read.text[span[0] : span[1]]
    return kept


def _holds(expected: Record, result: CaseResult, k: int) -> bool:
    """Whether ``expected`` matches the k-th record ``result`` read back on its topic."""
    outputs, sinks = _written(result)
    written = outputs.get(expected.topic, [])
    return k < len(written) and compare([expected], {expected.topic: [written[k]]}, sinks).ok


def _written(result: CaseResult) -> tuple[Mapping[str, list[OutputRecord]], Mapping[str, TopicSerde]]:
    """Per topic, the records a variant's outputs were compared with, and the topics' serdes."""
    if result.compared_with is not None:
        return result.compared_with
    assert result.replay is not None
    return result.replay.outputs, result.replay.sinks


@dataclass(frozen=True)
class _Fields:
    order: tuple[str, ...]
    null_key: bool
    timestamp: bool
    window: bool
    headers: bool


def _fields(read: _File, index: int, old: Sequence[Record], records: Sequence[OutputRecord]) -> _Fields:
    """The fields to write: those the case's expected records give (any of them gives them all),
    and a window or headers whenever an actual record carries them; for a case that expects
    nothing yet, those the actual records carry."""
    raw = _raw_records(read, index, "outputs") or _raw_records(read, index, "inputs")
    seen = [name for name in dict.fromkeys(k for r in raw for k in r) if name in FIELD_ORDER]
    order = tuple(seen + [name for name in FIELD_ORDER if name not in seen])
    if old:
        return _Fields(
            order,
            null_key=any("key" in r and r["key"] is None for r in _raw_records(read, index, "outputs")),
            timestamp=any(r.timestamp is not None for r in old),
            # the comparison checks windows and headers even where a case gives none
            window=any(r.window is not None for r in old) or any(r.window is not None for r in records),
            headers=any(r.headers is not None for r in old) or any(r.headers for r in records),
        )
    return _Fields(
        order,
        null_key=False,
        timestamp=any(r.timestamp for r in records),
        window=any(r.window is not None for r in records),
        headers=any(r.headers for r in records),
    )


def _raw_records(read: _File, index: int, name: str) -> list[dict[str, Any]]:
    try:
        found = read.raw["tests"][index].get(name) or []
    except (KeyError, IndexError, TypeError, AttributeError):
        return []
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def _document(record: OutputRecord, fields: _Fields) -> dict[str, Any]:
    """One actual record as a case file writes it (the shapes the comparison reads)."""
    values: dict[str, Any] = {"topic": record.topic, "value": record.value}
    if record.key is not None or fields.null_key:
        values["key"] = record.key
    if fields.timestamp:
        values["timestamp"] = record.timestamp
    if fields.window and record.window is not None:
        window = record.window
        values["window"] = {"start": window.start, "end": window.end, "type": str(window.type).lower()}
    if fields.headers:
        values["headers"] = [
            {"KEY": key, "VALUE": None if value is None else base64.b64encode(value).decode("ascii")}
            for key, value in record.headers
        ]
    return {name: values[name] for name in fields.order if name in values}


@dataclass(frozen=True)
class _Layout:
    inline: bool  # the whole array on one line
    expanded: bool  # each record over several lines
    step: str  # a record's indent past its array's key line
    unit: str  # one level of nesting inside an expanded record


def _layout(read: _File, index: int) -> _Layout:
    """How the file lays out record arrays: this case's, else any case's outputs or inputs."""
    tests = range(len(read.raw["tests"])) if isinstance(read.raw.get("tests"), list) else range(0)
    for j in [index, *tests]:
        for name in ("outputs", "inputs"):
            found = _layout_of(read, f"$.tests[{j}].{name}")
            if found is not None:
                return found
    unit = _indent(read, read.index.lines.get("$.tests", 1)) or "  "  # the file's first level of indent
    return _Layout(inline=False, expanded=False, step=unit, unit=unit)


def _layout_of(read: _File, path: str) -> _Layout | None:
    text, spans = read.blanked, read.index.spans  # comments blanked: only the structure counts
    if path not in spans or f"{path}[0]" not in spans:
        return None
    start, end = spans[path]
    first, last = spans[f"{path}[0]"]
    if "\n" not in text[start:end]:
        return _Layout(inline=True, expanded=False, step="", unit="")
    before = text[text.rfind("\n", 0, first) + 1 : first]
    key = _indent(read, read.index.lines[path])
    if before.strip() or not before.startswith(key) or len(before) == len(key):
        return None  # a first record that shares a line: no layout to follow
    step = before[len(key) :]
    if "\n" not in text[first:last]:
        return _Layout(inline=False, expanded=False, step=step, unit=step)
    second = text[first:last].split("\n", 2)[1]
    inner = second[: len(second) - len(second.lstrip(" \t"))]
    unit = inner[len(before) :] if inner.startswith(before) and len(inner) > len(before) else "  "
    return _Layout(inline=False, expanded=True, step=step, unit=unit)


def _indent(read: _File, line: int) -> str:
    """The leading blanks of a 1-based line of the file."""
    text = read.rows[line - 1] if 0 < line <= len(read.rows) else ""
    return text[: len(text) - len(text.lstrip(" \t"))]


def _render(read: _File, index: int, records: Sequence[str | dict[str, Any]]) -> str:
    """The new ``outputs`` array, laid out like the file's other record arrays.

    A record is a document to write, or the text of an expected record kept as it is.
    """
    if not records:
        return "[]"
    layout = _layout(read, index)
    newline = "\r\n" if "\r\n" in read.text else "\n"
    base = _indent(read, read.index.lines[f"$.tests[{index}].outputs"])
    inner = "" if layout.inline else base + layout.step
    items = []
    for record in records:
        if isinstance(record, str):  # kept: its later lines are indented already
            items.append(inner + record)
            continue
        try:
            text = _dumps(record, layout.unit if layout.expanded else None)
        except (TypeError, ValueError) as e:
            raise _Refusal(f"its actual outputs hold a value JSON cannot write: {e}") from None
        items.append(newline.join(inner + line for line in text.split("\n")))
    if layout.inline:
        return "[" + ", ".join(items) + "]"
    return "[" + newline + ("," + newline).join(items) + newline + base + "]"


def _dumps(document: dict[str, Any], indent: str | None) -> str:
    """A record as JSON text: decimals exact; non-ASCII as is, unless UTF-8 cannot hold it."""
    text = simplejson.dumps(document, use_decimal=True, ensure_ascii=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only an escape can write it
        text = simplejson.dumps(document, use_decimal=True, indent=indent)
    return text


def _check(read: _File, pending: Sequence[_Pending]) -> dict[str, str]:
    """Why each pending case may not be written, by case: the file with every new array must load
    strictly, and every variant of a case that ran must pass against its new array."""
    text = _spliced(read.text, [(item.span, item.array) for item in pending])
    try:
        loaded = load_text(text, file=read.path)
    except QttError as e:
        return {item.updated.case: f"the written file would not load (a qtt bug): {e}" for item in pending}
    if _errors(loaded) != _errors(read.loaded):
        reason = "the written file would not load (a qtt bug): a case of it no longer loads"
        return {item.updated.case: reason for item in pending}
    failures = {item.updated.case: _readback_failure(loaded, item) for item in pending}
    return {case: failure for case, failure in failures.items() if failure is not None}


def _readback_failure(loaded: LoadedFile, item: _Pending) -> str | None:
    variants = {v.variant: v for v in loaded.variants if v.index == item.index}
    for result in item.group:
        if result.replay is None or result.status == Status.SKIPPED:
            continue
        variant = variants.get(result.variant)
        comparison = compare(variant.outputs, *_written(result)) if variant else None
        if comparison is None or not comparison.ok:
            topics = ", ".join(d.topic for d in comparison.diffs) if comparison else "every topic"
            if result is item.chosen:
                return f"its actual outputs do not read back as the records they are (on {topics}): write them by hand"
            return f"its variants disagree on their outputs: [{result.variant}] would still fail on {topics}"
    return None


def _errors(loaded: LoadedFile) -> list[tuple[str | None, str | None]]:
    return [(e.case, e.message) for e in loaded.errors]


def _spliced(text: str, splices: Iterable[tuple[tuple[int, int], str]]) -> str:
    """``text`` with each span replaced (spans do not overlap)."""
    for (start, end), new in sorted(splices, reverse=True):
        text = text[:start] + new + text[end:]
    return text


__all__ = ["Refused", "Updated", "Updates", "update_outputs"]
