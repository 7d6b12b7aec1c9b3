"""Compare expected and actual records per topic, with ksqlDB's rules.

Integers compare exactly, DOUBLE values within 1e-6, DECIMAL values exactly; windowed keys
by start, end and type. A record's window and headers are compared even where the expected
record gives none, as ksqlDB's runner compares them: it then expects none. An expected
object's fields are looked up as ksqlDB's test runner does (``ExpectedRecordComparator``): by
name, then, when that reads null, by the name in upper case, and a field the record lacks
reads as null; the two must have as many fields. An expected number for an INT or BIGINT is
read by its integer part, as ksqlDB reads it with ``intValue()``. Types come from the sink's
schema, so a DECIMAL column is never compared with a tolerance.
An empty ``outputs`` list asserts that nothing was emitted.
"""

from __future__ import annotations

import base64
import decimal
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from deepdiff import DeepDiff
from deepdiff.operator import BaseOperator

from qtt import sqltypes as t
from qtt.harness.cases.model import ExpectedLogEntry, Record
from qtt.harness.replay.driver import OutputRecord
from qtt.harness.replay.topic_serdes import TopicSerde
from qtt.runtime.jobs import LogEntry
from qtt.serde.java_numbers import java_double
from qtt.serde.values import jackson_base64

DOUBLE_TOLERANCE = 1e-6
#: the formats ksqlDB's runner reads back as JSON text (``ValueSpecJsonSerdeSupplier``)
_JSON_FORMATS = frozenset(["JSON", "JSON_SR"])


@dataclass(frozen=True)
class Exact:
    """A DECIMAL value: compared exactly (numerically), printed as written."""

    value: decimal.Decimal

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Exact) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Approx:
    """A DOUBLE value: equal to another within :data:`DOUBLE_TOLERANCE`."""

    value: float

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Approx):
            return False
        a, b = self.value, other.value
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= DOUBLE_TOLERANCE

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return repr(self.value)


_JAVA_BIG_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class JsonDoubleText:
    """An expected DOUBLE written as a string, for a JSON sink: ksqlDB's runner reads the sink's
    JSON number as a ``BigDecimal`` and matches it with ``new BigDecimal(text).equals(...)``
    (``compareText``), so the text must give the number Java wrote, with its scale
    (``Double.toString``: ``"2.5"`` matches 2.5, ``"2.50"`` does not)."""

    text: str

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JsonDoubleText | str):  # Jackson writes NaN and the infinities as strings
            return self.text == (other.text if isinstance(other, JsonDoubleText) else other)
        if not isinstance(other, Approx):
            return False
        if not math.isfinite(other.value):
            return self.text == java_double(other.value)
        if not _JAVA_BIG_DECIMAL.fullmatch(self.text):
            return False
        mine, written = decimal.Decimal(self.text), decimal.Decimal(java_double(other.value))
        return mine == written and mine.as_tuple().exponent == written.as_tuple().exponent

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return repr(self.text)


class _NumberOperator(BaseOperator):
    """Lets DeepDiff compare :class:`Approx`, :class:`Exact` and :class:`JsonDoubleText` by their own equality."""

    def __init__(self) -> None:
        super().__init__(types=[Approx, Exact, JsonDoubleText])

    def match(self, level: Any) -> bool:
        # a JsonDoubleText meets an Approx: DeepDiff's own match wants both of one type
        numbers: tuple[type, ...] = (Approx, Exact, JsonDoubleText)
        if isinstance(level.t1, JsonDoubleText) or isinstance(level.t2, JsonDoubleText):
            numbers = (*numbers, str)  # NaN and the infinities are strings in JSON
        return isinstance(level.t1, numbers) and isinstance(level.t2, numbers)

    def give_up_diffing(self, level: Any, diff_instance: Any) -> bool:
        if level.t1 != level.t2:
            diff_instance.custom_report_result("values_changed", level)
        return True


_OPERATORS = [_NumberOperator()]


@dataclass(frozen=True)
class UnknownField:
    """A field an expected record names that the record written in its place does not have.

    ``path`` is the field's name, or the names down to it in a struct; ``have`` the names the
    written record has there. Checked against the records written (their decoded key and value),
    so the check is the comparison's own view whatever the format.
    """

    side: str  # "key" or "value"
    path: tuple[str, ...]
    have: tuple[str, ...]


@dataclass
class TopicDiff:
    """The differences on one topic, from the first record that differs.

    Records are numbered per topic from 0, in the order they were written (``first_index``,
    and ``record N`` in ``details``). ``expected_output`` is the first differing expected
    record's index in the case's ``outputs`` array and ``expected_line`` its line in the case
    file, when known. ``written`` is set when no query writes ``topic``: the topics they do write.
    """

    topic: str
    first_index: int
    expected: list[dict[str, Any]]
    actual: list[dict[str, Any]]
    details: list[str] = field(default_factory=list)
    expected_output: int | None = None
    expected_line: int | None = None
    #: per differing record (numbered as ``first_index``): the fields its expected record
    #: names that the written record does not have, with that expected record's place
    unknown_fields: list[tuple[int, int, int | None, UnknownField]] = field(default_factory=list)
    written: tuple[str, ...] | None = None


@dataclass
class Comparison:
    """The result of comparing a case's outputs."""

    diffs: list[TopicDiff] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.diffs


def normalize(document: Any, type_: t.SqlType | None, *, json: bool = False) -> Any:
    """Wrap numbers so that equality follows ksqlDB's rules for ``type_``; ``json``: the
    document was written in a JSON format, whose numbers ksqlDB's runner reads as written."""
    if document is None:
        return None
    if isinstance(type_, t.Struct) and isinstance(document, Mapping):
        fields = {f.name: f.type for f in type_.fields}
        return {k: normalize(v, fields.get(k, fields.get(str(k).upper())), json=json) for k, v in document.items()}
    if isinstance(type_, t.Map) and isinstance(document, Mapping):
        return {k: normalize(v, type_.value, json=json) for k, v in document.items()}
    if isinstance(type_, t.Array) and isinstance(document, list):
        return [normalize(v, type_.element, json=json) for v in document]
    if isinstance(document, Mapping):
        return {k: normalize(v, None) for k, v in document.items()}
    if isinstance(document, list):
        return [normalize(v, None) for v in document]
    if json and isinstance(document, str) and type_ is not None and type_.base == "DOUBLE":
        return JsonDoubleText(document)
    if isinstance(document, str) and type_ is not None and type_.base == "DECIMAL":
        # a DECIMAL may be written as a string ("3.40"), as ksqlDB's JSON reader accepts it
        try:
            return Exact(decimal.Decimal(document))
        except decimal.InvalidOperation:
            return document
    if isinstance(document, bool | str):
        return document
    if isinstance(document, int) and (type_ is None or type_.base in ("INTEGER", "BIGINT")):
        return document
    if (
        isinstance(document, float | decimal.Decimal)
        and type_ is not None
        and type_.base in ("INTEGER", "BIGINT")
        and math.isfinite(document)
    ):
        # ksqlDB's comparator reads an expected number with intValue()/longValue() for an INT
        # or BIGINT, which drops a fraction (``compareNumber``): 3.0 and 3.9 both match 3
        return int(document)
    if isinstance(document, int | float | decimal.Decimal):
        if type_ is not None and type_.base == "DECIMAL":
            return Exact(decimal.Decimal(str(document)))
        return Approx(float(document))
    return document


def ksql_field_view(actual: Any, expected: Any) -> Any:
    """``actual`` seen through ``expected``'s field names, as ksqlDB's test runner reads it.

    ksqlDB looks each expected field up by its name, then, when that reads null, by its name
    in upper case (so ``"val"`` matches the column ``VAL``), and a field the record lacks reads
    as null. It only does so when both objects have as many fields; otherwise ``actual`` is
    returned unchanged, and the comparison reports the difference.
    """
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        if len(expected) != len(actual):
            return actual
        view: dict[str, Any] = {}
        for name, wanted in expected.items():
            # ksqlDB's getter answers null for a missing field and a null one alike, and then
            # tries the upper-case name (``compareStruct``)
            found = actual.get(name)
            if found is None:
                found = actual.get(str(name).upper())
            view[name] = ksql_field_view(found, wanted)
        return view
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [ksql_field_view(a, w) for a, w in zip(actual, expected, strict=True)]
    return actual


def _columns_type(serde: TopicSerde | None, *, key: bool, document: Any) -> t.SqlType | None:
    """The type a key or value document has: a struct of the columns, or the single column."""
    if serde is None:
        return None
    columns = serde.schema.key if key else serde.schema.value
    if not columns:
        return None
    if len(columns) == 1 and not isinstance(document, Mapping):
        return columns[0].type
    return t.Struct(tuple(t.Field(c.name, c.type) for c in columns))


def _record_view(record: Record | OutputRecord, serde: TopicSerde | None, *, like: Record) -> dict[str, Any]:
    """What is compared: key, value, window and headers, plus the timestamp if ``like`` declares one."""
    key = ksql_field_view(record.key, like.key) if record is not like else record.key
    value = ksql_field_view(record.value, like.value) if record is not like else record.value
    formats = serde.formats if serde is not None else None
    view = {
        "key": normalize(
            key,
            _columns_type(serde, key=True, document=key),
            json=formats is not None and formats.key_format.format in _JSON_FORMATS,
        ),
        "value": normalize(
            value,
            _columns_type(serde, key=False, document=value),
            json=formats is not None and formats.value_format.format in _JSON_FORMATS,
        ),
    }
    if like.timestamp is not None:
        view["timestamp"] = record.timestamp
    # ksqlDB's runner compares a record's window and headers even where the expected record
    # gives none (TestExecutor.validateCreatedMessage): then it expects an unwindowed key and
    # no headers
    view["window"] = _window(getattr(record, "window", None))
    view["headers"] = _headers(record)
    return view


def _headers(record: Record | OutputRecord) -> list[dict[str, str | None]]:
    """A record's headers as the case file writes them: ``KEY`` and base64 ``VALUE``.

    An expected ``VALUE`` is read as ksqlDB's runner reads it (Jackson's Base64 into bytes,
    compared as bytes), then written canonically, so ``" AQI="`` matches the bytes 1, 2.
    """
    if isinstance(record, Record):
        return [{"KEY": h.KEY, "VALUE": _canonical_base64(h.VALUE)} for h in record.headers or ()]
    return [
        {"KEY": key, "VALUE": None if value is None else base64.b64encode(value).decode("ascii")}
        for key, value in getattr(record, "headers", ())
    ]


def _canonical_base64(text: str | None) -> str | None:
    """``text`` decoded as Jackson decodes Base64 and encoded again; as written if it does not decode."""
    if text is None:
        return None
    try:
        return base64.b64encode(jackson_base64(text)).decode("ascii")
    except ValueError:
        return text


def compare(
    expected: Sequence[Record],
    actual: Mapping[str, Sequence[OutputRecord]],
    sinks: Mapping[str, TopicSerde],
) -> Comparison:
    """Compare per topic, in order. Only topics named by ``expected`` are checked, unless
    ``expected`` is empty: then no query may have emitted anything at all.

    ``expected`` is the case's ``outputs`` array: a record's index there names it in the report.
    A topic that no query writes (in ``sinks`` or ``actual``) is reported as such, with the
    topics written; a differing record whose expected key or value names a field the written
    record lacks is reported by that field, not by the values it then reads as null.
    """
    result = Comparison()
    if not expected:
        for topic, records in sorted(actual.items()):
            if records:
                result.diffs.append(
                    TopicDiff(
                        topic,
                        0,
                        [],
                        [_shown(r, None, with_timestamp=False) for r in records],
                        [f"expected no output at all, but {len(records)} record(s) went there"],
                    )
                )
        return result
    by_topic: dict[str, list[tuple[int, Record]]] = {}
    for position, record in enumerate(expected):
        by_topic.setdefault(record.topic, []).append((position, record))
    written = tuple(sorted(set(sinks) | {topic for topic, records in actual.items() if records}))
    for topic, placed in by_topic.items():
        wanted = [record for _, record in placed]
        if topic not in sinks and topic not in actual:
            shown = [_shown(r, r, with_timestamp=r.timestamp is not None) for r in wanted]
            position, first_record = placed[0]
            result.diffs.append(TopicDiff(topic, 0, shown, [], [], position, first_record.line, written=written))
            continue
        result.diffs.extend(_compare_topic(topic, placed, list(actual.get(topic, [])), sinks.get(topic)))
    return result


def _compare_topic(
    topic: str, placed: list[tuple[int, Record]], got: list[OutputRecord], serde: TopicSerde | None
) -> list[TopicDiff]:
    wanted = [record for _, record in placed]
    first: int | None = None
    details: list[str] = []
    unknown: list[tuple[int, int, int | None, UnknownField]] = []
    for i in range(max(len(wanted), len(got))):
        if i >= len(wanted):
            details.append(f"record {i}: unexpected extra record")
        elif i >= len(got):
            details.append(f"record {i}: missing")
        else:
            exp = _record_view(wanted[i], serde, like=wanted[i])
            act = _record_view(got[i], serde, like=wanted[i])
            differences = DeepDiff(exp, act, verbose_level=2, custom_operators=_OPERATORS)
            if not differences:
                continue
            fields_ = unknown_fields(wanted[i], got[i])
            if fields_:
                unknown += [(i, placed[i][0], wanted[i].line, f) for f in fields_]
            else:
                details.extend(f"record {i}: {line}" for line in _describe(differences))
        if first is None:
            first = i
    if first is None:
        return []
    # Extra records are shown with a timestamp only if the case cares about timestamps.
    timed = any(r.timestamp is not None for r in wanted)
    position, line = (placed[first][0], placed[first][1].line) if first < len(placed) else (None, None)
    diff = TopicDiff(
        topic,
        first,
        [_shown(r, r, with_timestamp=r.timestamp is not None) for r in wanted[first:]],
        [
            _shown(r, wanted[first + n] if first + n < len(wanted) else None, with_timestamp=timed)
            for n, r in enumerate(got[first:])
        ],
        details,
        position,
        line,
        unknown,
    )
    return [diff]


def unknown_fields(expected: Record, actual: Record | OutputRecord) -> list[UnknownField]:
    """The fields ``expected``'s key and value name that ``actual``'s do not have.

    A name is looked up as ksqlDB's test runner does, as written and then in upper case; struct
    values are looked into. Only objects are checked: a bare key or value has no field names.
    """
    found: list[UnknownField] = []
    for side in ("key", "value"):
        found += [
            UnknownField(side, path, have) for path, have in _missing(getattr(expected, side), getattr(actual, side))
        ]
    return found


def _missing(expected: Any, actual: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    if not (isinstance(expected, Mapping) and isinstance(actual, Mapping)):
        return []
    found = []
    for name, wanted in expected.items():
        key = name if name in actual else str(name).upper()
        if key in actual:
            found += _missing(wanted, actual[key], (*path, str(name)))
        else:
            found.append(((*path, str(name)), tuple(str(k) for k in actual)))
    return found


def _shown(record: Record | OutputRecord, like: Record | None, *, with_timestamp: bool) -> dict[str, Any]:
    """A record for the failure diff, with only the fields the expected record declares."""
    out: dict[str, Any] = {"key": record.key, "value": record.value}
    if like is not None:
        with_timestamp = like.timestamp is not None
        if like.window is not None or getattr(record, "window", None) is not None:
            out["window"] = _window(getattr(record, "window", None))
    if with_timestamp:
        out["timestamp"] = record.timestamp
    return out


def _window(window: Any) -> dict[str, Any] | None:
    if window is None:
        return None
    return {"start": window.start, "end": window.end, "type": str(window.type).lower()}


def check_processing_log(expected: Sequence[ExpectedLogEntry], actual: Sequence[LogEntry]) -> list[str]:
    """Compare ``qttProcessingLog`` with the replay's processing log, entry by entry.

    Actual entries are ordered by the input they belong to (stable, so the entries of one input
    keep query order); each must name the expected input and contain the expected message.
    """
    got = sorted(actual, key=lambda entry: entry.seq)
    problems = []
    for i in range(max(len(expected), len(got))):
        if i >= len(got):
            want = expected[i]
            problems.append(
                f"entry {i}: missing: expected input #{want.input} with a message containing "
                f"{want.message!r}, but nothing more was logged"
            )
        elif i >= len(expected):
            problems.append(f"entry {i}: unexpected: input #{got[i].seq}: {got[i].message}")
        elif got[i].seq != expected[i].input or expected[i].message not in got[i].message:
            want = expected[i]
            problems.append(
                f"entry {i}: expected input #{want.input} with a message containing "
                f"{want.message!r}, got input #{got[i].seq}: {got[i].message}"
            )
    return problems


def _describe(diff: DeepDiff) -> list[str]:
    lines = []
    for kind, items in diff.items():
        if isinstance(items, Mapping):
            for path, change in items.items():
                where = str(path).replace("root", "", 1) or "(whole record)"
                if isinstance(change, Mapping) and "old_value" in change:
                    lines.append(f"{where}: expected {change['old_value']!r}, got {change['new_value']!r}")
                else:
                    label = kind.replace("_", " ")
                    lines.append(f"{where}: {label} {change!r}")
        else:
            for path in items:
                lines.append(f"{str(path).replace('root', '', 1)}: {kind.replace('_', ' ')}")
    return lines
