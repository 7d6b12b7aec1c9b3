"""``qtt upgrade OLD NEW``: may a running query take a new plan in place, and what would change?

OLD is a SQL script: the sources, the running queries, and ``INSERT INTO ... VALUES`` rows
(the records ``--prove`` replays); or a case of a case file (its statements and properties;
the walk and the verdict only). NEW holds the new statement of one of OLD's queries
(``CREATE [OR REPLACE] STREAM|TABLE name AS SELECT ...``, ``OR REPLACE`` implied). The advice is
the walk over both plans (:func:`qtt.plan.ddl.upgrades.upgrade_walk`), the verdict of
``CREATE OR REPLACE`` itself, and with ``--prove`` two replays as SQL tests: OLD's query over the
records before the upgrade point, upgraded there, NEW's over the rest (the upgrade), beside
NEW's query over every record from the start (a fresh run).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qtt.errors import QttError, SqlError, UsageError
from qtt.harness.replay.runner import SessionProvider
from qtt.harness.sqltests.files import parse_sql_tests
from qtt.harness.sqltests.run import SeenRecord, run_sql_tests
from qtt.harness.status import Status
from qtt.plan.ddl.upgrades import EXTENDED, KsqlAggregate, WalkEntry, extended_upgrades, upgrade_walk
from qtt.plan.ir import steps as s
from qtt.plan.statements import SWAP_IN_PLACE, plan_statements
from qtt.sql import ast, parse_statements

_CREATE = re.compile(r"^\s*CREATE\s+(OR\s+REPLACE\s+)?", re.IGNORECASE)
#: the swap property in a WITH clause: first or in the middle, or last after a comma
_SWAP = re.compile(rf"\b{SWAP_IN_PLACE}\s*=\s*true\s*,\s*", re.IGNORECASE)
_SWAP_LAST = re.compile(rf",?\s*\b{SWAP_IN_PLACE}\s*=\s*true\b", re.IGNORECASE)
_EMPTY_WITH = re.compile(r"\s+WITH\s*\(\s*\)\s*", re.IGNORECASE)


@dataclass
class Advice:
    """What ``qtt upgrade`` found."""

    sink: str
    #: the topic the sink writes
    topic: str
    walk: list[WalkEntry]
    #: why ``CREATE OR REPLACE`` is refused; None: it is allowed
    refused: str | None
    extended: bool
    #: NEW swaps the query in place (``WITH (SWAP_IN_PLACE=true)``): the walk shows what the
    #: new plan could not have resumed, and the verdict is the swap's
    swap: bool = False
    #: what to do about a refusal, when the planner says
    hint: str | None = None
    #: with ``--prove``: the sink's records in each run, by the insert that caused them
    upgraded: list[SeenRecord] = field(default_factory=list)
    fresh: list[SeenRecord] = field(default_factory=list)
    inserts: int = 0
    point: int = 0
    proven: bool = False


@dataclass(frozen=True)
class _Scripts:
    old: list[ast.Statement]
    new: ast.CreateAsSelect
    replaced: ast.CreateAsSelect
    #: a case's properties (a SQL script sets its own)
    properties: Mapping[str, object] = field(default_factory=dict)


def advise(old_file: str, new_file: str, *, extended: bool = False, case: str | None = None) -> Advice:
    """The walk and the verdict of upgrading OLD's query to NEW's statement. ``case``: the case
    of OLD, a case file, whose statements run today (needed when the file holds several).

    Raises:
        UsageError: the files cannot be read, or NEW does not replace a query of OLD.
        QttError: OLD or NEW does not plan (its message names the statement).
    """
    return _advise(_read(old_file, new_file, case), extended)


def _advise(scripts: _Scripts, extended: bool) -> Advice:
    setting = [_set_extended()] if extended else []
    properties = scripts.properties
    old_planned = plan_statements([*setting, *_without_inserts(scripts.old)], properties)
    new_planned = plan_statements([*setting, *_standalone(scripts)], properties)
    old_query = _query_of(old_planned.plan, scripts.replaced.name)
    new_query = _query_of(new_planned.plan, scripts.new.name)
    aggregates = (
        old_planned.ksql_aggregates.get(old_query.query_id, KsqlAggregate()),
        new_planned.ksql_aggregates.get(new_query.query_id, KsqlAggregate()),
    )
    in_force = (
        extended
        or extended_upgrades(properties)
        or any(isinstance(st, ast.SetProperty) and extended_upgrades({st.name: st.value}) for st in scripts.old)
    )
    walk, _ = upgrade_walk(old_query.physical_plan, new_query.physical_plan, extended=in_force, aggregates=aggregates)
    refused, hint = None, None
    try:
        plan_statements([*setting, *_without_inserts(scripts.old), _as(scripts.new, replace=True)], properties)
    except SqlError as e:
        refused, hint = e.message, e.hint
    sink = new_query.physical_plan
    assert isinstance(sink, s.SinkStep)
    swap = scripts.new.properties.get(SWAP_IN_PLACE) is True
    return Advice(scripts.replaced.name, sink.topic, walk, refused, in_force, swap=swap, hint=hint)


def prove(
    old_file: str,
    new_file: str,
    session: SessionProvider,
    *,
    at: int | None = None,
    extended: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Advice:
    """:func:`advise`, then the upgrade and a fresh run of NEW replayed over OLD's inserts; the
    upgrade happens after ``at`` of them (default: half). OLD must be a SQL script."""
    if old_file.endswith(".json"):
        msg = (
            f"--prove replays the INSERT INTO ... VALUES rows of a SQL script, and {old_file} is a case file: "
            "write the case's statements and inputs as a SQL script to prove the upgrade"
        )
        raise UsageError(msg)
    scripts = _read(old_file, new_file)
    advice = _advise(scripts, extended)
    if advice.refused is not None:
        return advice
    inserts = [st for st in scripts.old if isinstance(st, ast.InsertValues)]
    if not inserts:
        raise UsageError(f"{old_file} has no INSERT INTO ... VALUES rows to replay: add some to prove the upgrade")
    point = len(inserts) // 2 if at is None else at
    if not 0 <= point <= len(inserts):
        msg = f"--at {point}: {old_file} has {len(inserts)} INSERT(s); give a number from 0 to {len(inserts)}"
        raise UsageError(msg)
    setting = [_set_extended()] if extended else []
    before = [st for st in scripts.old if not isinstance(st, ast.InsertValues)]
    upgraded = [*setting, *before, *inserts[:point], _as(scripts.new, replace=True), *inserts[point:]]
    fresh = [*setting, *_standalone(scripts), *inserts]
    text = "\n".join(
        f"--@test: {name}\n" + "\n".join(_text(st) for st in statements)
        for name, statements in (("upgraded", upgraded), ("fresh", fresh))
    )
    tests = parse_sql_tests(text, file=f"{old_file} -> {new_file}")
    seen: dict[int, dict[str, list[SeenRecord]]] = {}
    results = run_sql_tests(tests, session, progress=progress, topics=seen)
    for result in results:
        if result.status != Status.PASSED:
            raise QttError(f"the {result.case} run did not complete: {result.reason}")
    advice.upgraded, advice.fresh = seen[0].get(advice.topic, []), seen[1].get(advice.topic, [])
    advice.inserts, advice.point, advice.proven = len(inserts), point, True
    return advice


def render(advice: Advice) -> str:
    """The advice as ``qtt upgrade`` prints it."""
    rules = f"qtt's extended rules ('{EXTENDED}')" if advice.extended else "ksqlDB's rules"
    if advice.swap:
        title = f"Swapping the query of {advice.sink} in place ({SWAP_IN_PLACE}); "
        title += f"what it could resume in place, under {rules}:"
    else:
        title = f"Upgrading the query of {advice.sink} in place, under {rules}:"
    lines = [title, ""]
    width = max([len(e.old or "-") for e in advice.walk] + [len("old plan")])
    lines.append(f"  {'role':<12} {'old plan':<{width}}   {'new plan':<{width}}   step")
    for entry in advice.walk:
        lines.append(f"  {entry.role:<12} {entry.old or '-':<{width}}   {entry.new or '-':<{width}}   {entry.verdict}")
    lines.append("")
    if advice.refused is None and advice.swap:
        lines.append(
            "verdict: ALLOWED: swapped in place: the new query builds its state from the first record beside the "
            "old one, and the two cut over at control events (docs/upgrades.md, 'Swap-in-place')"
        )
    elif advice.refused is None:
        lines.append("verdict: ALLOWED: the new plan resumes the old plan's offsets and state")
    else:
        lines.append(f"verdict: REFUSED: {advice.refused}")
        if not advice.extended and "qtt.upgrades.extended" in advice.refused:
            lines.append("hint: try again with --extended to see qtt's rules")
        elif advice.hint:
            lines.append(f"hint: {advice.hint}")
    if advice.proven:
        lines += ["", *_outputs(advice)]
    return "\n".join(lines)


def _outputs(advice: Advice) -> list[str]:
    """Both runs' sink records from the upgrade point on, side by side by the insert that caused them."""
    lines = [
        f"proof: {advice.inserts} insert(s), the upgrade after insert {advice.point}; "
        f"the records of {advice.sink} each insert from the upgrade on caused:",
        "",
    ]
    by_insert: dict[int, tuple[list[str], list[str]]] = {}
    for index, records in enumerate((advice.upgraded, advice.fresh)):
        for record in records:
            if record.seq >= advice.point:
                by_insert.setdefault(record.seq, ([], []))[index].append(_shown(record))
    differing = 0
    for seq in sorted(by_insert):
        upgraded, fresh = by_insert[seq]
        mark = "  " if upgraded == fresh else "!="
        differing += upgraded != fresh
        lines.append(f"  insert {seq + 1:>3}  {mark} upgrade: {'; '.join(upgraded) or '(nothing)'}")
        lines.append(f"              fresh:   {'; '.join(fresh) or '(nothing)'}")
    if not by_insert:
        lines.append("  (no records from the upgrade on)")
    lines.append("")
    if differing:
        lines.append(
            f"{differing} insert(s) caused other records after the upgrade than a fresh run of the new query: "
            "the upgraded query resumed the state the old plan built from the records before the upgrade, "
            "a fresh run built it with the new plan from the start"
        )
    else:
        lines.append("after the upgrade, the upgraded query wrote what a fresh run of the new query writes")
    return lines


def _shown(record: SeenRecord) -> str:
    if record.tombstone:
        keys = {k: v for k, v in record.columns.items() if k != "ROWTIME"}
        return f"delete {keys}"
    return str({k: v for k, v in record.columns.items() if k != "ROWTIME"})


def _read(old_file: str, new_file: str, case: str | None = None) -> _Scripts:
    properties: Mapping[str, object] = {}
    if old_file.endswith(".json"):
        old, properties = _case_statements(old_file, case)
    elif case is not None:
        raise UsageError(f"--case picks a case of a case file, and {old_file} is a SQL script")
    else:
        old = _statements(old_file)
    new = _statements(new_file)
    creates = [st for st in new if isinstance(st, ast.CreateAsSelect)]
    if len(creates) != 1 or len(new) != 1:
        raise UsageError(f"{new_file} must hold one statement, CREATE [OR REPLACE] STREAM|TABLE name AS SELECT ...")
    (created,) = creates
    replaced = [st for st in old if isinstance(st, ast.CreateAsSelect) and st.name == created.name]
    if not replaced:
        names = ", ".join(st.name for st in old if isinstance(st, ast.CreateAsSelect)) or "none"
        msg = f"{new_file} creates {created.name}, which no query of {old_file} writes (its queries: {names})"
        raise UsageError(msg)
    return _Scripts(old, created, replaced[-1], properties)


def _case_statements(path: str, name: str | None) -> tuple[list[ast.Statement], Mapping[str, object]]:
    """The statements and properties of the case ``name`` of case file ``path``."""
    from qtt.harness.selection import load_variants

    variants, problems = load_variants([path])
    if problems:
        raise problems[0]
    chosen = [v for v in variants if name is None or v.case == name]
    names = sorted({v.case for v in variants})
    if not chosen:
        raise UsageError(f"{path} has no case named {name!r} (its cases: {', '.join(names) or 'none'})")
    if len({v.case for v in chosen}) > 1:
        raise UsageError(f"{path} holds {len(names)} cases: pick one with --case NAME ({', '.join(names)})")
    variant = chosen[0]
    try:
        return parse_statements("\n".join(variant.statements)), variant.properties
    except QttError as e:
        e.message = f"{path}: case {variant.case!r}: {e.message}"
        raise


def _statements(path: str) -> list[ast.Statement]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        return parse_statements(text)
    except QttError as e:
        e.message = f"{path}: {e.message}"
        raise


def _without_inserts(statements: Sequence[ast.Statement]) -> list[ast.Statement]:
    return [st for st in statements if not isinstance(st, ast.InsertValues)]


def _standalone(scripts: _Scripts) -> list[ast.Statement]:
    """OLD's statements with the replaced query's statement swapped for NEW's."""
    return [_as(scripts.new, replace=False) if st is scripts.replaced else st for st in _without_inserts(scripts.old)]


def _as(statement: ast.CreateAsSelect, *, replace: bool) -> ast.Statement:
    text = _CREATE.sub("CREATE OR REPLACE " if replace else "CREATE ", statement.text, count=1)
    if not replace:  # a query started afresh swaps nothing
        text = _EMPTY_WITH.sub(" ", _SWAP_LAST.sub("", _SWAP.sub("", text)))
    (parsed,) = parse_statements(text + ";")
    return parsed


def _set_extended() -> ast.Statement:
    (parsed,) = parse_statements(f"SET '{EXTENDED}' = 'true';")
    return parsed


def _text(statement: ast.Statement) -> str:
    return statement.text.rstrip().rstrip(";") + ";"


def _query_of(plan: s.Plan, name: str) -> s.QueryPlan:
    for statement in plan.statements:
        command, query = getattr(statement, "ddl_command", None), getattr(statement, "query_plan", None)
        if query is not None and getattr(command, "source_name", None) == name:
            return query
    raise UsageError(f"no query writes {name}")
