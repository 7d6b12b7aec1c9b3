"""The function status page of the dialect reference (``docs/reference/function-status.md``),
generated from qtt's own signature tables so that it cannot drift from them.

Every function of ksqlDB's reference (:mod:`qtt.plan.functions.reference`), and every aggregate
qtt knows beyond it, with the signatures qtt runs and its status: supported, partly supported
(an overload that needs a feature qtt does not have, named), skipped (the feature), or syntax.
Regenerate the page with ``python -m qtt.harness.upkeep.function_status docs/reference/function-status.md``;
``tests/harness/test_function_status.py`` fails when the page and the tables disagree.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

from qtt.plan.functions import aggregate_signatures, scalar_signatures
from qtt.plan.functions.reference import REFERENCE, ReferenceFunction
from qtt.plan.planner.table_functions import TABLE_FUNCTIONS

_SYNTAX = {
    "CAST": "`CAST(expression AS type)`: its own expression node",
    "ARRAY": "`ARRAY[element, ...]`: its own expression node",
    "MAP": "`MAP(key := value, ...)`: its own expression node",
}

_HEADER = """# Function status

Generated from qtt's signature tables by `python -m qtt.harness.upkeep.function_status
docs/reference/function-status.md`; do not edit by hand (a test compares the two). Every
function of ksqlDB's function reference, by the reference's sections, then the aggregates qtt
knows beyond the stored reference page; for each, the signatures qtt resolves and its status:

- **supported**: every signature listed runs;
- **partly**: the signatures marked *skipped* are ksqlDB's, and a call that resolves to one is
  a skip naming the feature;
- **skipped**: qtt knows the function and skips a case that calls it, naming the feature;
- **syntax**: qtt parses it as its own expression, not as a function call;
- **refused**: not a ksqlDB function: a call is ksqlDB's `Can't find any functions with the
  name ...`, and qtt runs it only in the plans persisted when its planner resolved one.

The column *on bad input* says `throws` for a scalar function whose ksqlDB implementation
throws on some arguments that are not null (text it cannot read, an unknown zone or encoding,
a value out of range): such a throw nulls the whole expression around the call, as
[Functions](functions.md#names-and-messages) describes.

In a signature, `T` is any type the arguments share, `X...` any number of arguments of type X
and `ANY...` any number of further arguments of any type.

How the functions behave, and where qtt differs from ksqlDB on purpose, is in
[Functions](functions.md) and [Tables and aggregations](tables-and-aggregations.md).
"""


def render() -> str:
    """The whole page, as Markdown."""
    lines = [_HEADER]
    sections: dict[str, list[ReferenceFunction]] = {}
    for function in REFERENCE:
        sections.setdefault(function.section, []).append(function)
    listed = {function.name for function in REFERENCE}
    extra = sorted(
        (aggregate_signatures.AGGREGATE_NAMES | set(aggregate_signatures.PERSISTED_ONLY_AGGREGATES)) - listed
    )
    if extra:
        sections["Aggregates beyond the stored reference page"] = [
            ReferenceFunction(name, "aggregate", "Aggregates beyond the stored reference page") for name in extra
        ]
    for section, functions in sections.items():
        lines += [
            f"## {section}",
            "",
            "| function | kind | status | on bad input | signatures in qtt |",
            "|---|---|---|---|---|",
        ]
        for function in sorted(functions, key=lambda f: f.name):
            status, signatures = _status(function)
            shown = "<br>".join(signatures) or "-"
            throws = "throws" if _throws_on_input(function) else "-"
            lines.append(f"| `{function.name}` | {function.kind} | {status} | {throws} | {shown} |")
        lines.append("")
    return "\n".join(lines)


def _status(function: ReferenceFunction) -> tuple[str, list[str]]:
    if function.kind == "syntax":
        return "syntax", [_SYNTAX[function.name]]
    if function.kind == "table":
        return "supported", [f"`{text}`" for text in TABLE_FUNCTIONS[function.name].alternatives]
    if function.kind == "aggregate":
        texts, unsupported = aggregate_signatures.overload_texts(function.name)
        why = aggregate_signatures.PERSISTED_ONLY_AGGREGATES.get(function.name)
        if why is not None:
            return f"refused: {why}", [f"`{text}`" for text in texts]
        if unsupported is not None:
            return f"skipped: {unsupported}", []
        return "supported", [f"`{text}`" for text in texts]
    return _scalar(function.name)


def _throws_on_input(function: ReferenceFunction) -> bool:
    found = scalar_signatures.FUNCTIONS.get(function.name) if function.kind == "scalar" else None
    return found is not None and found.throws_on_input


def _scalar(name: str) -> tuple[str, list[str]]:
    found = scalar_signatures.FUNCTIONS.get(name)
    if found is None:
        return "skipped: no signature", []
    shown, skipped = [], 0
    for signature in found.signatures:
        text = f"`{name}{signature.describe()}`"
        if signature.unsupported is not None:
            skipped += 1
            text += f" *skipped: {signature.unsupported}*"
        shown.append(text)
    if skipped == len(found.signatures):
        return "skipped", shown
    return ("partly" if skipped else "supported"), shown


def _main(argv: list[str]) -> Iterator[str]:
    page = render()
    if argv:
        Path(argv[0]).write_text(page + "\n", encoding="utf-8")
        yield f"wrote {argv[0]}"
    else:
        yield page


if __name__ == "__main__":
    for line in _main(sys.argv[1:]):
        print(line)
