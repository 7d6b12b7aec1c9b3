"""Which forms of the grammar no case writes: every form of the dialect needs a case.

A form is a named rule of ``qtt/sql/grammar.lark`` or one of its aliased alternatives
(``simple_case``, ``select_struct_all``, ``inner_join``). This parses every case under the
given paths and every SQL test file (no planning, no Spark) and lists the forms no statement
used, except the ones in :data:`EXEMPT`, each with its reason.
``tests/harness/test_syntax_coverage.py`` keeps the list of ``cases/`` empty. Run it with
``python -m qtt.harness.upkeep.syntax_coverage cases``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from qtt.errors import QttError
from qtt.harness.upkeep.signature_coverage import report
from qtt.sql.parser import forms_in, grammar_forms

#: forms a case cannot write, and why
EXEMPT: dict[str, str] = {
    "schema": "the start of a schema in ksqlDB's files (spec.json, post-conditions), not a statement",
    "schema_element": "a column of such a schema",
    "empty_grouping": "GROUP BY (): an aggregation without grouping columns, a skip naming it",
    "run_script": "RUN SCRIPT reads a file beside the script, which a case file has not",
    "unset_property": "UNSET undoes a SET for the statements after it, which no case can observe",
}


def uncovered(paths: Sequence[str]) -> list[str]:
    """The forms of the grammar that no case or SQL test under ``paths`` writes, sorted."""
    from qtt.harness.selection import load_variants

    variants, _ = load_variants(paths)
    scripts = ["\n".join(variant.statements) for variant in variants]
    for path in map(Path, paths):
        files = sorted(path.rglob("*.sql")) if path.is_dir() else [path] if path.suffix == ".sql" else []
        scripts += [file.read_text(encoding="utf-8") for file in files]
    seen: set[str] = set()
    for script in scripts:
        try:
            seen |= forms_in(script)
        except QttError:  # a case that expects a syntax error
            continue
    return sorted(grammar_forms() - seen - set(EXEMPT))


def main(argv: Sequence[str]) -> int:
    return report(uncovered(argv or ["cases"]), "form(s) of the grammar")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
