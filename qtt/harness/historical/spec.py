"""``spec.json``: everything a historical plan needs to be replayed and checked, on its own.

It holds the statements and properties, every topic with its formats and column schemas,
the inputs and the outputs, the schema of every step, the processing log, the internal
topics, the schema registry's subjects, versions, ids and schema texts, and the qtt and
Spark versions. Inputs and outputs keep their exact bytes (base64):
a historical replay feeds the same bytes and must write the same bytes, whatever today's
serde would do with the case file's JSON. The decoded ``key``/``value`` next to them are for
people and for readable diffs.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import cattrs
from cattrs.gen import make_dict_unstructure_fn, override

from qtt.errors import PlanFileError
from qtt.plan.ir.codec import camel_renames, describe_structure_error, make_converter, split_structure_error
from qtt.plan.ir.depth import MAX_JSON_DEPTH, deep_call, json_error_position, json_too_deep, too_deep_message
from qtt.plan.ir.steps import Formats
from qtt.runtime.jobs import InternalTopic
from qtt.serde.excerpt import json_value
from qtt.serde.registry.schema_registry import RegisteredSchema

SPEC_VERSION = 1


def b64(data: bytes | None) -> str | None:
    """Standard base64 of ``data`` (``None`` stays ``None``)."""
    return None if data is None else base64.b64encode(data).decode("ascii")


def unb64(text: str | None, *, file: str | None = None, path: str | None = None) -> bytes | None:
    """Decode strict base64: a character outside the alphabet or bad padding is an error.

    Raises:
        PlanFileError: ``text`` is not valid base64, with ``file`` and ``path`` as its location.
    """
    if text is None:
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        shown = text if len(text) <= 40 else text[:40] + "..."
        msg = f"invalid base64 {shown!r} ({e}); expected the exact bytes as standard base64"
        raise PlanFileError(msg, file=file, path=path, hint="restore the file from version control") from None


@dataclass(frozen=True, kw_only=True)
class SpecCase:
    """Where the plan came from (informational: the folder never reads the case file)."""

    file: str
    name: str
    variant: str


@dataclass(frozen=True, kw_only=True)
class SpecTopic:
    """A topic, with the formats and columns of its key and value."""

    name: str
    formats: Formats
    schema: str
    partitions: int = 1


@dataclass(frozen=True, kw_only=True)
class SpecRecord:
    """A record with its exact bytes and, for people, the decoded documents."""

    topic: str
    timestamp: int
    key_bytes: str | None
    value_bytes: str | None
    key: Any = None
    value: Any = None
    partition: int = 0
    headers: tuple[tuple[str, str | None], ...] = ()


@dataclass(frozen=True, kw_only=True)
class SpecLogEntry:
    """A processing-log entry: which input was skipped, by which query step, and why."""

    input: int
    query_id: str
    context: str
    message: str


@dataclass(frozen=True, kw_only=True)
class SpecInternalRecord:
    """One change of a state store, read back with Spark's state data source, or one record of
    a repartition topic (``change`` ``append``, with its ``timestamp``)."""

    key: Any
    value: Any
    change: str
    batch: int
    partition: int = 0
    timestamp: int | None = None


@dataclass(frozen=True, kw_only=True)
class SpecInternalTopic:
    """A state store's change feed, under ``<queryId>-<stepContext>-<store>-changelog``."""

    name: str
    key_schema: str
    value_schema: str
    records: tuple[SpecInternalRecord, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Spec:
    spec_version: int
    qtt_version: str
    spark_version: str
    case: SpecCase
    statements: tuple[str, ...]
    properties: Mapping[str, Any] = field(default_factory=dict)
    topics: tuple[SpecTopic, ...] = ()
    inputs: tuple[SpecRecord, ...] = ()
    outputs: tuple[SpecRecord, ...] = ()
    step_schemas: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    processing_log: tuple[SpecLogEntry, ...] = ()
    internal_topics: tuple[SpecInternalTopic, ...] = ()
    #: every subject version the replay registered or read in the schema registry, in order
    schemas: tuple[RegisteredSchema, ...] = ()
    #: where a folder that qtt did not plan came from: ``{"ksqldb": {"version": ..., "folder":
    #: ..., "caseFile": ...}}`` for a plan imported from ksqlDB's historical plans; left out otherwise
    provenance: Mapping[str, Any] = field(default_factory=dict)


@cache
def _converter() -> cattrs.Converter:
    from qtt.plan.ir.codec import converter as plan_converter

    conv = make_converter()
    # Formats hold FormatInfo mappings: reuse the plan converter's hooks for them.
    conv.register_structure_hook(Formats, lambda v, _: plan_converter().structure(v, Formats))
    conv.register_unstructure_hook(Formats, lambda v: plan_converter().unstructure(v))
    # a state store's change has no timestamp: its records keep the shape of earlier releases
    conv.register_unstructure_hook(
        SpecInternalRecord,
        make_dict_unstructure_fn(
            SpecInternalRecord,
            conv,
            **{**camel_renames(SpecInternalRecord), "timestamp": override(omit_if_default=True)},
        ),
    )
    conv.register_unstructure_hook(
        Spec,
        make_dict_unstructure_fn(Spec, conv, **{**camel_renames(Spec), "provenance": override(omit_if_default=True)}),
    )
    return conv


def dumps(spec: Spec) -> str:
    """Canonical text: indent 2, declaration order, exact decimals, trailing newline."""
    import simplejson

    def dump() -> str:
        data = _converter().unstructure(spec)
        return simplejson.dumps(data, use_decimal=True, indent=2, ensure_ascii=False) + "\n"

    return deep_call(dump)


def loads(text: str, *, file: str | None = None) -> Spec:
    """Parse a ``spec.json``; every problem is a :class:`PlanFileError` with a JSON path."""
    from qtt.serde.values import loads as json_loads

    deep = json_too_deep(text)
    if deep is not None:
        msg = too_deep_message("the spec", MAX_JSON_DEPTH)
        raise PlanFileError(msg, file=file, path=deep[0], line=deep[1], column=deep[2])
    try:
        data = deep_call(json_loads, text)
    except ValueError as e:
        msg = f"not valid JSON: {getattr(e, 'msg', e)}"
        line, column = json_error_position(text, e)
        raise PlanFileError(msg, file=file, line=line, column=column) from None
    if isinstance(data, dict) and data.get("specVersion") not in (None, SPEC_VERSION):
        msg = (
            f"specVersion {json_value(data.get('specVersion'))} is not supported; this qtt reads version {SPEC_VERSION}"
        )
        raise PlanFileError(msg, file=file, path="$.specVersion")
    try:
        loaded = deep_call(_converter().structure, data, Spec)
    except Exception as e:
        message, path = split_structure_error(describe_structure_error(e))
        raise PlanFileError(message, file=file, path=path) from None
    _check_bytes(loaded, file)
    return loaded


def _check_bytes(loaded: Spec, file: str | None) -> None:
    """Decode every recorded byte string once, so that a bad one is named before any replay."""
    for kind, records in (("inputs", loaded.inputs), ("outputs", loaded.outputs)):
        for index, record in enumerate(records):
            where = f"$.{kind}[{index}]"
            unb64(record.key_bytes, file=file, path=f"{where}.keyBytes")
            unb64(record.value_bytes, file=file, path=f"{where}.valueBytes")
            for position, (_, header) in enumerate(record.headers):
                unb64(header, file=file, path=f"{where}.headers[{position}][1]")


def internal_topics_of(topics: Iterable[InternalTopic]) -> tuple[SpecInternalTopic, ...]:
    """The spec form of a replay's internal topics."""
    return tuple(
        SpecInternalTopic(
            name=topic.name,
            key_schema=topic.key_schema,
            value_schema=topic.value_schema,
            records=tuple(
                SpecInternalRecord(
                    key=r.key,
                    value=r.value,
                    change=r.change,
                    batch=r.batch,
                    partition=r.partition,
                    timestamp=r.timestamp,
                )
                for r in topic.records
            ),
        )
        for topic in topics
    )
