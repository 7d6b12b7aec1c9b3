"""Step-level differences between two plans, for ``qtt snapshot`` and ``qtt check``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from deepdiff import DeepDiff

from qtt.plan.ir import codec
from qtt.plan.ir.steps import Plan, walk_steps


def _steps(plan: Plan) -> dict[str, dict[str, Any]]:
    """``"<query id> <step context>"`` -> the step's JSON without its source steps."""
    out: dict[str, dict[str, Any]] = {}
    for query in plan.queries():
        for step in walk_steps(query.physical_plan):
            body = {k: v for k, v in codec.to_json(step).items() if k != "source" and k != "sources"}
            out[f"{query.query_id} {step.context}"] = body
    return out


def _commands(plan: Plan) -> dict[str, dict[str, Any]]:
    return {f"{c.source_name} {type(c).type_tag}": codec.to_json(c) for c in plan.ddl_commands()}


def diff_lines(old: Plan | None, new: Plan) -> list[str]:
    """Human-readable differences, one line each: which step changed and how."""
    if old is None:
        added = [f"+ step {name} ({body['@type']})" for name, body in _steps(new).items()]
        return ["no plan was persisted before", *added]
    lines: list[str] = []
    if dict(old.config) != dict(new.config):
        lines.append(f"~ config: {dict(old.config)} -> {dict(new.config)}")
    lines += list(_compare("command", _commands(old), _commands(new)))
    lines += list(_compare("step", _steps(old), _steps(new)))
    if not lines and codec.dumps(old) != codec.dumps(new):
        lines.append("~ statement texts or order changed")
    return lines


def _compare(kind: str, old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> Iterator[str]:
    for name in old.keys() - new.keys():
        yield f"- {kind} {name} ({old[name]['@type']})"
    for name in new.keys() - old.keys():
        yield f"+ {kind} {name} ({new[name]['@type']})"
    for name in sorted(old.keys() & new.keys()):
        before, after = old[name], new[name]
        if before == after:
            continue
        if before["@type"] != after["@type"]:
            yield f"~ {kind} {name}: {before['@type']} -> {after['@type']}"
        else:
            yield f"~ {kind} {name} ({after['@type']})"
        delta = DeepDiff(before, after, verbose_level=2)
        for change_kind, items in delta.items():
            if not isinstance(items, dict):
                items = {path: None for path in items}
            for path, change in items.items():
                where = str(path).replace("root", "", 1)
                if where == "['@type']":
                    continue
                if isinstance(change, dict) and "old_value" in change:
                    yield f"    {where}: {_short(change['old_value'])} -> {_short(change['new_value'])}"
                elif change_kind.endswith("_added"):
                    yield f"    {where}: added {_short(change)}"
                elif change_kind.endswith("_removed"):
                    yield f"    {where}: removed {_short(change)}"
                else:
                    yield f"    {where}: {change_kind.replace('_', ' ')}"


def _short(value: Any, width: int = 100) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
