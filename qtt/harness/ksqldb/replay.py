"""Replay ksqlDB's historical plans on Spark: each folder's ``plan.json`` translated into qtt's
plan (:mod:`qtt.plan.ksqldb`), its case's inputs replayed, its outputs compared with the case's.

A folder whose plan does not translate is skipped with the step that stops it; one that does
not read is an error of its own. Folders whose translated plan and case are equal (ksqlDB wrote
the same plan at several releases) replay once, and each gets the result.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from qtt.errors import SqlError, UnsupportedFeatureError
from qtt.harness.cases.loader import expand, parse_case
from qtt.harness.cases.model import CaseVariant
from qtt.harness.ksqldb.folders import SPEC_FILE, KsqldbFolder, read_folder
from qtt.harness.replay.runner import SessionProvider, guarded, run_variants
from qtt.harness.results import CaseResult
from qtt.harness.status import Status
from qtt.plan.ir import codec
from qtt.plan.ir.schema import LogicalSchema
from qtt.plan.ksqldb.plans import translate_plan
from qtt.plan.statements import PlannedCase
from qtt.runtime.jobs import FRESH, ReplayMode

KIND = "ksqldb"
#: what ``spec.json`` writes of a topic beyond a case file's topic
_SPEC_TOPIC_ONLY = frozenset({"numPartitions", "keySerdeFeatures", "valueSerdeFeatures"})
#: what ``spec.json``'s ``post`` writes of a topic beyond a case file's: the driver's partition
#: count and the ids its registry gave the topic's schemas
_SPEC_POST_TOPIC_ONLY = frozenset({"partitions", "keySchemaId", "valueSchemaId"})
#: the prefix of the internal topics of ksqlDB's queries (its service id's)
_KSQLDB_INTERNAL = "_confluent-ksql-"


@dataclass
class Prepared:
    folder: KsqldbFolder
    result: CaseResult
    variant: CaseVariant
    planned: PlannedCase
    #: what makes two folders' replays the same: the translated plan and the case's records
    identity: str


def replay_ksqldb_folders(
    paths: Sequence[Path],
    session: SessionProvider,
    *,
    progress: Callable[[int, int], None] | None = None,
    mode: ReplayMode = FRESH,
) -> list[CaseResult]:
    """One result per folder, in order, whatever happens to the others.

    ``mode``: :data:`~qtt.runtime.jobs.CAPTURE` keeps what a historical folder records (the
    importer's replay).
    """
    results, prepared = prepare(paths)
    groups: dict[str, list[Prepared]] = {}
    for entry in prepared:
        groups.setdefault(entry.identity, []).append(entry)
    firsts = [group[0] for group in groups.values()]
    plans = {id(entry.variant): entry.planned for entry in firsts}
    # folders done after the first n replays: those that need none, and each replay's copies
    done = [len(paths) - len(prepared)]
    for group in groups.values():
        done.append(done[-1] + len(group))

    def counted(finished: int, _: int) -> None:
        if progress is not None:
            progress(done[finished], len(paths))

    ran = run_variants(
        [entry.variant for entry in firsts],
        session,
        progress=counted if progress is not None else None,
        planner=lambda variant: plans[id(variant)],
        mode=mode,
    )
    for group, outcome in zip(groups.values(), ran, strict=True):
        for copy in group:
            _take(copy.result, outcome)
            schemas = step_schema_problems(copy)
            if schemas.problems and copy.result.status is Status.PASSED:
                copy.result.status = Status.FAILED
                copy.result.reason = f"{len(schemas.problems)} step schema(s) differ from what ksqlDB recorded"
            copy.result.problems = [*copy.result.problems, *schemas.problems]
            if copy.result.status is Status.PASSED:
                copy.result.reason = compared(copy.variant, schemas.compared)
    return results


@dataclass
class SchemaCheck:
    compared: int
    problems: list[str]


def step_schema_problems(entry: Prepared) -> SchemaCheck:
    """The step schemas ``spec.json`` recorded that have a counterpart in qtt's plan: each
    source (``.../Source``), each projection (``Project``, ``Aggregate/Project``) and each sink,
    compared with the schema qtt's replay gives the same step. ksqlDB's other steps' schemas
    carry copies of the key and pseudo columns in their values, which qtt's steps do not."""
    replay = entry.result.replay
    if replay is None:
        return SchemaCheck(0, [])
    sinks = {query.physical_plan.context for query in entry.planned.plan.queries()}
    ours = {
        f"{query_id}.{context.replace('/', '.')}": schema
        for query_id, steps in replay.step_schemas.items()
        for context, schema in steps.items()
        if context.endswith("Source") or context.rsplit("/", 1)[-1] == "Project" or context in sinks
    }
    recorded = entry.folder.recorded_schemas()
    names = sorted(set(ours) & set(recorded))
    problems = [
        f"step schema {name}: ksqlDB recorded {recorded[name]}, qtt's plan gives {ours[name]}"
        for name in names
        if rowkey_named(recorded[name]) != ours[name]
    ]
    return SchemaCheck(len(names), problems)


def rowkey_named(recorded: str) -> str:
    """A recorded step schema with its one key column renamed ``ROWKEY`` where a value column
    has the key's name: ksqlDB before 0.10 printed such a step's key under the column's name and
    held it as ``ROWKEY`` (its DDL's name, and qtt's), so the two compare on types and order."""
    try:
        schema = LogicalSchema.parse(recorded)
    except ValueError:
        return recorded
    key = schema.key
    if len(key) != 1 or key[0].name not in {c.name for c in schema.value}:
        return recorded
    return str(LogicalSchema(tuple(replace(c, name="ROWKEY") if c is key[0] else c for c in schema.columns)))


def compared(variant: CaseVariant, step_schemas: int = 0) -> str:
    """What a passed folder's replay compared, for the report."""
    topics = sorted({record.topic for record in variant.outputs})
    parts = [f"compared {len(variant.outputs)} output record(s)" + (f" on {', '.join(topics)}" if topics else "")]
    if step_schemas:
        parts.append(f"{step_schemas} step schema(s)")
    post = variant.post
    if post is not None and post.sources:
        parts.append(f"{len(post.sources)} source(s)")
    if post is not None and post.topics is not None and post.topics.topics:
        parts.append(f"the formats and schemas of {len(post.topics.topics)} topic(s)")
    return "; ".join(parts)


def prepare(paths: Sequence[Path]) -> tuple[list[CaseResult], list[Prepared]]:
    """A result for every folder, and what the replay needs for those whose plan translated."""
    results: list[CaseResult] = []
    prepared: list[Prepared] = []
    for path in paths:
        result = CaseResult(str(path), path.parent.name, path.name, Status.PASSED, kind=KIND, hint=_hint(path))
        holder: list[Prepared] = []
        guarded(result, partial(_prepare, path, result, holder))
        prepared += holder
        results.append(result)
    return results, prepared


def _hint(path: Path) -> str:
    return f"rerun it: qtt run {shlex.quote(str(path))}"


def spec_case(folder: KsqldbFolder) -> dict[str, Any]:
    """The folder's ``testCase`` as a case of a ksqlDB case file.

    ``spec.json`` writes each topic's partition count as ``numPartitions``, 4 when the case
    named none; ksqlDB's test driver ran every topic as one partition, so that is dropped, as
    are the serde features it wrote beside a topic's schema (qtt derives them from the
    formats) and the spelling ``blackList`` of older releases. Its ``post`` lists every topic
    ksqlDB's run created: Kafka Streams' internal topics (``_confluent-ksql-...-changelog``) are
    not qtt's, and each topic's partition count is the driver's 4 and its schema ids the ones
    ksqlDB's registry gave; they are left out, and the formats and registered schemas of the
    case's own topics stay. The records 5.5.0 recorded
    on internal topics are left out of the outputs for the same reason.
    """
    raw_case = folder.test_case
    raw_case["topics"] = [
        {k: v for k, v in topic.items() if k not in _SPEC_TOPIC_ONLY} if isinstance(topic, dict) else topic
        for topic in raw_case.get("topics") or ()
    ]
    raw_case["outputs"] = [
        record
        for record in raw_case.get("outputs") or ()
        if not (isinstance(record, dict) and str(record.get("topic", "")).startswith(_KSQLDB_INTERNAL))
    ]
    post_topics = (raw_case.get("post") or {}).get("topics")
    if isinstance(post_topics, dict):
        if "blackList" in post_topics:
            post_topics["blacklist"] = post_topics.pop("blackList")
        post_topics["topics"] = [
            {k: v for k, v in topic.items() if k not in _SPEC_POST_TOPIC_ONLY}
            for topic in post_topics.get("topics") or ()
            if isinstance(topic, dict) and not str(topic.get("name", "")).startswith(_KSQLDB_INTERNAL)
        ]
    return raw_case


def _prepare(path: Path, result: CaseResult, holder: list[Prepared]) -> bool:
    folder = read_folder(path)
    raw_case = spec_case(folder)
    result.case = str(raw_case.get("name", result.case))
    file = str(path / SPEC_FILE)
    variants = list(expand(parse_case(raw_case, file=file, index=0), file=file, index=0))
    if len(variants) != 1:
        raise UnsupportedFeatureError(f"a testCase of {len(variants)} variants")
    variant = replace(variants[0], case=result.case)
    planned = _translated(folder, variant, result)
    if planned is None:
        return False
    result.planned = planned
    holder.append(Prepared(folder, result, variant, planned, _identity(planned, raw_case)))
    return True


def _identity(planned: PlannedCase, raw_case: dict[str, Any]) -> str:
    """What decides a replay's outcome: the translated plan's steps and the case's records and
    checks. Statement texts (each release prints them its own way) and names decide nothing."""
    statements = tuple(replace(statement, statement_text="") for statement in planned.plan.statements)
    plan = codec.dumps(replace(planned.plan, statements=statements))
    case = {k: v for k, v in raw_case.items() if k not in ("name", "statements")}
    return plan + json.dumps(case, sort_keys=True, default=str)


def _translated(folder: KsqldbFolder, variant: CaseVariant, result: CaseResult) -> PlannedCase | None:
    partitions = {t.name: t.partitions for t in variant.topics if t.partitions}
    try:
        return translate_plan(
            folder.plan,
            release=folder.release,
            recorded=folder.recorded_schemas(),
            partitions=partitions,
            properties=variant.properties,
        )
    except UnsupportedFeatureError as skip:
        result.status, result.reason = Status.SKIPPED, f"unsupported: {skip.feature}"
    except SqlError as error:
        result.status, result.reason = Status.FAILED, f"the plan does not translate: {error}"
    return None


def _take(result: CaseResult, outcome: CaseResult) -> None:
    """``result`` (one folder's) takes the outcome of the replay it shares."""
    result.status, result.reason = outcome.status, outcome.reason
    result.comparison, result.problems, result.log_problems = outcome.comparison, outcome.problems, outcome.log_problems
    result.replay, result.seconds = outcome.replay, outcome.seconds
