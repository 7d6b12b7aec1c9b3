"""The canonical JSON form of plans, built on cattrs.

Canonical means: ``indent=2``, keys in declaration order with ``"@type"`` first, mapping
keys sorted, ``ensure_ascii=False`` and a trailing newline. ``dumps(loads(text)) == text``
for every file written by :func:`dumps`; the historical-plan suite relies on it.

cattrs does the per-class work; this module owns the tag dispatch so that an unknown tag
gets a message naming the JSON path and the known tags.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, TypeVar, get_origin

import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from qtt import sqltypes as t
from qtt.errors import PlanFileError
from qtt.plan.ir import gate_steps as _gate_steps  # noqa: F401 (registers the gate step tags)
from qtt.plan.ir import join_steps as _join_steps  # noqa: F401 (registers the join step tags)
from qtt.plan.ir import suppress_steps as _suppress_steps  # noqa: F401 (registers tableSuppressV1)
from qtt.plan.ir.depth import (
    MAX_JSON_DEPTH,
    deep_call,
    json_error_position,
    json_int,
    json_too_deep,
    too_deep_message,
)
from qtt.plan.ir.expressions import Expression
from qtt.plan.ir.schema import LogicalSchema
from qtt.plan.ir.steps import DdlCommand, ExecutionStep, FormatInfo, Formats, Plan, StatementPlan
from qtt.plan.ir.tagged import Tagged
from qtt.plan.ir.type_text import read_type
from qtt.serde.excerpt import json_value

TAG = "@type"
T = TypeVar("T")

_TAGGED_ROOTS: tuple[type[Tagged], ...] = (ExecutionStep, Expression, DdlCommand, StatementPlan)


class UnknownTagError(ValueError):
    """A ``"@type"`` that no registered class declares."""


def camel(name: str) -> str:
    """``source_schema`` -> ``sourceSchema``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _strict(kind: type) -> Any:
    def structure(value: Any, _: Any) -> Any:
        # bool is an int in Python; a JSON true must not pass for a number.
        if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
            return value
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        msg = f"expected {kind.__name__}, got {type(value).__name__} {json_value(value)}"
        raise TypeError(msg)

    return structure


def make_converter() -> cattrs.Converter:
    """A converter with strict primitives and camelCase keys for every dataclass."""
    conv = cattrs.Converter(forbid_extra_keys=True)
    for kind in (str, int, float, bool):
        conv.register_structure_hook(kind, _strict(kind))

    def is_mapping(tp: Any) -> bool:
        return get_origin(tp) in (Mapping, dict) or tp in (Mapping, dict)

    conv.register_structure_hook_func(is_mapping, lambda value, tp: _structure_mapping(value))
    conv.register_unstructure_hook_func(is_mapping, lambda value: {k: value[k] for k in sorted(value)})
    conv.register_structure_hook_func(lambda tp: tp is object, lambda value, _: value)

    def is_plain_dataclass(tp: Any) -> bool:
        return dataclasses.is_dataclass(tp) and not (isinstance(tp, type) and issubclass(tp, Tagged))

    conv.register_structure_hook_factory(is_plain_dataclass, lambda cl: _structure_fn(conv, cl))
    conv.register_unstructure_hook_factory(is_plain_dataclass, lambda cl: _unstructure_fn(conv, cl))
    return conv


def _structure_mapping(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        msg = f"expected an object, got {type(value).__name__}"
        raise TypeError(msg)
    return MappingProxyType(dict(value))


def camel_renames(cl: type) -> dict[str, Any]:
    """cattrs overrides that name each field of dataclass ``cl`` in camelCase."""
    return {f.name: override(rename=camel(f.name)) for f in dataclasses.fields(cl)}


def _structure_fn(conv: cattrs.Converter, cl: type) -> Any:
    return make_dict_structure_fn(cl, conv, _cattrs_forbid_extra_keys=True, **camel_renames(cl))


def _unstructure_fn(conv: cattrs.Converter, cl: type) -> Any:
    return make_dict_unstructure_fn(cl, conv, **camel_renames(cl))


def register_tagged(conv: cattrs.Converter, root: type[Tagged]) -> None:
    """Dispatch ``root`` and its subclasses on the ``"@type"`` key."""

    @cache
    def structure_class(cl: type) -> Any:
        plain = {k: v for k, v in camel_renames(cl).items()}
        return make_dict_structure_fn(cl, conv, _cattrs_forbid_extra_keys=True, **plain)

    @cache
    def unstructure_class(cl: type) -> Any:
        return make_dict_unstructure_fn(cl, conv, **camel_renames(cl))

    def structure(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            msg = f"expected a {root.registry_name} object, got {type(value).__name__}"
            raise TypeError(msg)
        tag = value.get(TAG)
        cl = root.registry.get(tag) if isinstance(tag, str) else None
        if cl is None:
            known = ", ".join(sorted(root.registry))
            msg = f"unknown {root.registry_name} type {tag!r}; known types: {known}"
            raise UnknownTagError(msg)
        body = {k: v for k, v in value.items() if k != TAG}
        return structure_class(cl)(body, cl)  # type: ignore[arg-type]  # classes are hashable

    def unstructure(value: Any) -> Any:
        return {TAG: type(value).type_tag, **unstructure_class(type(value))(value)}  # type: ignore[arg-type]

    conv.register_structure_hook_func(lambda tp: isinstance(tp, type) and issubclass(tp, root), structure)
    conv.register_unstructure_hook_func(lambda tp: isinstance(tp, type) and issubclass(tp, root), unstructure)


@cache
def converter() -> cattrs.Converter:
    """The plan converter: SQL types and schemas as ksqlDB strings, tagged steps."""
    conv = make_converter()
    conv.register_structure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, t.SqlType), lambda v, _: _parse_type(v)
    )
    conv.register_unstructure_hook_func(lambda tp: isinstance(tp, type) and issubclass(tp, t.SqlType), str)
    conv.register_structure_hook(LogicalSchema, lambda v, _: _parse_schema(v))
    conv.register_unstructure_hook(LogicalSchema, str)
    # a format written by qtt's first writer has no "writerVersion" key, as ksqlDB's FormatInfo
    format_info = _unstructure_fn(conv, FormatInfo)
    conv.register_unstructure_hook(
        FormatInfo, lambda value: {k: v for k, v in format_info(value).items() if k != "writerVersion" or v != 1}
    )
    # as ksqlDB's KeyFormat: a topic without windowed keys has no "window" key at all
    formats = _unstructure_fn(conv, Formats)
    conv.register_unstructure_hook(
        Formats, lambda value: {k: v for k, v in formats(value).items() if k != "window" or v is not None}
    )
    for root in _TAGGED_ROOTS:
        register_tagged(conv, root)
    return conv


def _parse_type(value: Any) -> t.SqlType:
    if not isinstance(value, str):
        msg = f"expected a SQL type string, got {type(value).__name__}"
        raise TypeError(msg)
    try:
        return read_type(value)
    except ValueError as e:
        msg = f"invalid SQL type {value!r}: {e}"
        raise ValueError(msg) from None


def _parse_schema(value: Any) -> LogicalSchema:
    if not isinstance(value, str):
        msg = f"expected a schema string, got {type(value).__name__}"
        raise TypeError(msg)
    try:
        return LogicalSchema.parse(value)
    except ValueError as e:
        msg = f"invalid schema {value!r}: {e}"
        raise ValueError(msg) from None


def to_json(value: Any) -> Any:
    """Unstructure any plan object into JSON-ready Python values."""
    return deep_call(converter().unstructure, value)


def dumps(value: Any) -> str:
    """Canonical JSON text for a plan (or any plan object)."""
    return deep_call(lambda: json.dumps(converter().unstructure(value), indent=2, ensure_ascii=False) + "\n")


def from_json(data: Any, cl: type[T], *, file: str | None = None) -> T:
    """Structure JSON data into ``cl``, raising :class:`PlanFileError` with a JSON path."""
    try:
        return deep_call(converter().structure, data, cl)
    except Exception as e:  # cattrs raises exception groups with notes carrying the path
        message, path = split_structure_error(describe_structure_error(e))
        raise PlanFileError(message, file=file, path=path) from None


def loads(text: str, *, file: str | None = None) -> Plan:
    """Parse a ``plan.json``.

    Raises:
        PlanFileError: the text is not JSON, nests deeper than
            :data:`~qtt.plan.ir.depth.MAX_JSON_DEPTH`, or is not a plan; with file, path and line.
    """
    deep = json_too_deep(text)
    if deep is not None:
        msg = too_deep_message("the plan", MAX_JSON_DEPTH)
        raise PlanFileError(msg, file=file, path=deep[0], line=deep[1], column=deep[2])
    try:
        data = deep_call(json.loads, text, parse_int=json_int)
    except ValueError as e:
        at = json_error_position(text, e)
        msg = f"not valid JSON: {getattr(e, 'msg', e)}"
        raise PlanFileError(msg, file=file, line=at[0], column=at[1]) from None
    return from_json(data, Plan, file=file)


def describe_structure_error(exc: BaseException) -> str:
    """Turn a cattrs error into lines of ``problem @ $.json.path`` with JSON key names."""

    def fmt(e: BaseException, type_: Any) -> str:
        wrong = _wrong_json_type(e, type_)
        if wrong:
            return wrong
        if isinstance(e, UnknownTagError | TypeError | ValueError) and str(e):
            return str(e)
        if isinstance(e, KeyError):
            return "required field missing"
        if isinstance(e, cattrs.ForbiddenExtraKeysError):
            return f"unknown field(s) {', '.join(sorted(map(repr, e.extra_fields)))}"
        return f"{type(e).__name__}: {e}"

    if isinstance(exc, cattrs.BaseValidationError):
        lines = cattrs.transform_error(exc, format_exception=fmt)
    else:
        lines = [fmt(exc, None)]
    return "; ".join(_camel_path(line) for line in lines)


#: Python's type names in its errors, as JSON calls the values
_JSON_KINDS = {
    "dict": "an object",
    "list": "an array",
    "str": "a string",
    "int": "a number",
    "float": "a number",
    "decimal.Decimal": "a number",
    "Decimal": "a number",
    "bool": "a boolean",
    "NoneType": "null",
}
_PYTHON_OBJECT = re.compile(
    r"'([\w.]+)' object (?:has no attribute 'keys'|is not iterable|is not subscriptable)"
    r"|argument of type '([\w.]+)' is not iterable"
)


def _wrong_json_type(error: BaseException, type_: Any) -> str:
    """``expected an object, got an array`` for what Python says as ``'list' object has no
    attribute 'keys'``; empty when ``error`` is not a value of the wrong JSON type."""
    found = _PYTHON_OBJECT.search(str(error)) if isinstance(error, AttributeError | TypeError) else None
    if found is None:
        return ""
    name = found.group(1) or found.group(2)
    got = _JSON_KINDS.get(name, name)
    origin = get_origin(type_) or type_
    if dataclasses.is_dataclass(origin) or (isinstance(origin, type) and issubclass(origin, Mapping)):
        expected = "an object"
    elif isinstance(origin, type) and issubclass(origin, tuple | list):
        expected = "an array"
    else:
        expected = "an object" if "keys" in str(error) or found.group(2) else "an array"
    return f"expected {expected}, got {got}"


def step_paths(root: ExecutionStep, base: str) -> dict[int, str]:
    """The JSON path of every step under ``root`` (by ``id``), ``root`` itself at ``base``."""
    paths = {id(root): base}
    stack = [(root, base)]
    while stack:
        step, path = stack.pop()
        for f in dataclasses.fields(step):
            value, key = getattr(step, f.name), f"{path}.{camel(f.name)}"
            children = [(key, value)] if isinstance(value, ExecutionStep) else []
            if isinstance(value, tuple):
                children = [(f"{key}[{i}]", v) for i, v in enumerate(value) if isinstance(v, ExecutionStep)]
            for child_path, child in children:
                paths.setdefault(id(child), child_path)
                stack.append((child, child_path))
    return paths


def split_structure_error(described: str) -> tuple[str, str]:
    """Split :func:`describe_structure_error`'s text into (message, JSON path of the first problem).

    A single problem loses its ``@ path`` suffix (the path is a field of the error then); several
    keep theirs. The path is ``$`` when cattrs did not name one.
    """
    problems = described.split("; ")
    head, sep, path = problems[0].rpartition(" @ ")
    if not sep or not path.startswith("$"):
        return described, "$"
    return (head if len(problems) == 1 else described), path


def _camel_path(line: str) -> str:
    head, sep, path = line.rpartition(" @ ")
    if not sep:
        return line
    return f"{head} @ " + re.sub(r"\.([a-z_][a-z0-9_]*)", lambda m: "." + camel(m.group(1)), path)
