"""Reports: the one-line-per-case JSON report, summaries, and failure rendering."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import simplejson

from qtt.errors import QttError, did_you_mean
from qtt.harness.replay.compare import Comparison, UnknownField
from qtt.harness.results import CaseResult
from qtt.harness.status import Status
from qtt.harness.status import exit_status as status_exit
from qtt.harness.whole_file import write_whole


def without_file_and_case(error: QttError) -> str:
    """The error's text for a line that already names its file and case."""
    where = ": ".join(
        part
        for part in (
            error.path,
            (f"line {error.line}:{error.column}" if error.column else f"line {error.line}")
            if error.line is not None
            else None,
        )
        if part
    )
    text = f"{where}: {error.message}" if where else error.message
    return text + (f"\nhint: {error.hint}" if error.hint else "")


def load_error_result(file: str, error: QttError) -> CaseResult:
    """The result of a case (or a whole file, when ``error.case`` is None) that does not load."""
    hint = f"fix the case file, then check it with: qtt run {file}"
    case = error.case or "(file)"
    return CaseResult(file, case, "", Status.ERROR, reason=without_file_and_case(error), kind="load", hint=hint)


def counts_text(counts: Counter[str], *, all_statuses: bool = True) -> str:
    """``2 passed, 0 failed, ...`` in :class:`Status` order (only the non-zero ones unless ``all_statuses``).

    Corrupt goldens, infrastructure errors, time-outs and quarantined items are rare: they are named only
    when there are some.
    """
    rare = (Status.CORRUPT, Status.INFRA, Status.TIMED_OUT, Status.QUARANTINED)
    return ", ".join(f"{counts.get(s, 0)} {s}" for s in Status if counts.get(s) or (all_statuses and s not in rare))


def exit_status(results: Iterable[CaseResult]) -> int:
    """0; 1 for a failure, an error or a corrupt golden; 3 when only infrastructure errors (see status)."""
    return status_exit(r.status for r in results)


def write_json(results: Iterable[CaseResult], path: str | Path) -> None:
    """Write JSON Lines: one JSON object per line (file, case, variant, status, reason, seconds, kind).

    A file is written whole or not at all (:func:`~qtt.harness.whole_file.write_whole`), so a
    full disk never leaves a truncated report; a device such as ``/dev/stdout`` is written
    directly.

    Raises:
        QttError: the report could not be written; says why, and that nothing was left behind.
    """
    target = Path(path)
    text = "".join(json.dumps(result.as_json(), ensure_ascii=False) + "\n" for result in results)
    direct = target.exists() and not target.is_file()
    try:
        if direct:
            with target.open("w", encoding="utf-8") as out:
                out.write(text)
        else:
            write_whole(target, text)
    except OSError as e:
        left = "" if direct else f"; {target} was left as it was"
        msg = f"--jsonl {path}: the report could not be written ({e.strerror or e}){left}"
        raise QttError(msg, hint="free space or choose another path; the results above are complete") from None


def summary(results: Sequence[CaseResult]) -> str:
    return counts_text(Counter(r.status for r in results))


def per_file(results: Sequence[CaseResult]) -> list[tuple[str, str]]:
    """(file, its status counts as text) in file order."""
    files: dict[str, Counter[str]] = {}
    for result in results:
        files.setdefault(result.file, Counter())[result.status] += 1
    return [(file, counts_text(counts)) for file, counts in files.items()]


def file_lines(results: Sequence[CaseResult]) -> list[tuple[str, str]]:
    """Per file, in order: one mark per variant (``.FsE``), then the status counts."""
    files: dict[str, list[CaseResult]] = {}
    for result in results:
        files.setdefault(result.file, []).append(result)
    lines = []
    for file, group in files.items():
        marks = "".join(r.status.mark for r in group)
        lines.append((file, f"{marks}  {counts_text(Counter(r.status for r in group), all_statuses=False)}"))
    return lines


def _short(value: Any, width: int = 160) -> str:
    # simplejson writes DECIMAL values as the exact numbers they are, as case files do
    text = simplejson.dumps(value, default=str, ensure_ascii=False, use_decimal=True, allow_nan=True)
    return text if len(text) <= width else text[: width - 3] + "..."


def render_comparison(comparison: Comparison, *, limit: int = 5, file: str | None = None) -> list[str]:
    """A labelled diff per topic, from the first record that differs.

    Records are numbered per topic from 0, in the order they were written; the first differing
    expected record is also named by its index in the case's ``outputs`` array and its line in
    ``file``, when known. A topic no query writes, and fields the written records do not have,
    are said as such (with "did you mean"), not as a diff.
    """
    lines: list[str] = []
    for diff in comparison.diffs:
        where = _expected_at(diff.expected_output, diff.expected_line, file)
        if diff.written is not None:
            lines.append(f"topic {diff.topic}: {_no_such_topic(diff.topic, diff.written, where)}")
            continue
        if diff.unknown_fields:
            lines += [f"topic {diff.topic}: {_no_such_field(diff.topic, u, file)}" for u in diff.unknown_fields[:limit]]
            if len(diff.unknown_fields) > limit:
                lines.append(f"  ... and {len(diff.unknown_fields) - limit} more")
        else:
            at = f" (expected: {where})" if where else ""
            lines.append(
                f"topic {diff.topic}: first difference at record {diff.first_index} of {diff.topic}, "
                f"counting from 0{at}"
            )
        for detail in diff.details[:limit]:
            lines.append(f"  {detail}")
        if len(diff.details) > limit:
            lines.append(f"  ... and {len(diff.details) - limit} more")
        for i in range(min(max(len(diff.expected), len(diff.actual)), limit)):
            if i < len(diff.expected):
                lines.append(f"  - expected: {_short(diff.expected[i])}")
            if i < len(diff.actual):
                lines.append(f"  + actual:   {_short(diff.actual[i])}")
    return lines


def _expected_at(output: int | None, line: int | None, file: str | None) -> str:
    """``outputs[3], cases/x.json line 14``: where an expected record is written, as far as known."""
    if output is None:
        return ""
    if line is None:
        return f"outputs[{output}]"
    return f"outputs[{output}], {file} line {line}" if file else f"outputs[{output}], line {line}"


def _no_such_topic(topic: str, written: tuple[str, ...], where: str) -> str:
    by = f" (expected by {where})" if where else ""
    if not written:
        return f"no such topic: no query writes {topic}{by}, nor any other topic"
    hint = did_you_mean(topic, written) or did_you_mean(topic.upper(), written)
    return f"no such topic: no query writes {topic}{by}; the queries write {', '.join(written)}.{hint}"


def _no_such_field(topic: str, found: tuple[int, int, int | None, UnknownField], file: str | None) -> str:
    index, output, line, unknown = found
    name = ".".join(unknown.path)
    where = _expected_at(output, line, file)
    inside = f" in {'.'.join(unknown.path[:-1])}" if len(unknown.path) > 1 else ""
    last = unknown.path[-1]
    hint = did_you_mean(last, unknown.have) or did_you_mean(last.upper(), unknown.have)
    return (
        f"no such field: expected record {index} ({where}) names the {unknown.side} field {name}, which "
        f"record {index} written to {topic} does not have (its {unknown.side}{inside} has "
        f"{', '.join(unknown.have) or 'no fields'}).{hint}"
    )


def render_failure(result: CaseResult) -> str:
    """What failed and where, then the labelled diff, then the result's one hint."""
    where = f"{result.file}: {result.label}"
    # an error's own text starts with its file and case too: say them once
    reason = result.reason.removeprefix(f"{result.file}: case {result.case!r}: ")
    lines = [f"{result.status.upper()} {where}: {reason.splitlines()[0] if reason else ''}"]
    lines += [f"  {line}" for line in reason.splitlines()[1:]]
    if result.comparison is not None and not result.comparison.ok:
        lines += render_comparison(result.comparison, file=result.file)
    for problem in result.problems:
        lines.append(f"  post: {problem}")
    for problem in result.log_problems:
        lines.append(f"  processing log {problem}")
    if result.replay is not None and result.replay.processing_log and result.status == Status.FAILED:
        lines.append("  processing log:")
        for entry in result.replay.processing_log[:5]:
            lines.append(f"    input #{entry.seq} ({entry.query_id} {entry.context}): {entry.message}")
    if result.hint:
        lines.append(f"hint: {result.hint}")
    return "\n".join(lines)
