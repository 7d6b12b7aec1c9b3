"""Every form of the grammar has a case in cases/ that writes it."""

from __future__ import annotations

from pathlib import Path

from qtt.harness.upkeep.syntax_coverage import EXEMPT, uncovered
from qtt.sql.parser import forms_in, grammar_forms

CASES = str(Path(__file__).resolve().parents[2] / "cases")


def test_every_form_of_the_grammar_has_a_case() -> None:
    missing = uncovered([CASES])
    assert not missing, f"no case writes {missing}: add one (python -m qtt.harness.upkeep.syntax_coverage cases)"


def test_the_exempt_forms_are_forms_of_the_grammar() -> None:
    assert set(EXEMPT) <= grammar_forms()


def test_a_script_shows_its_forms_and_not_the_inlined_rules() -> None:
    forms = forms_in("CREATE STREAM o AS SELECT CASE a WHEN 1 THEN 'x' END AS c FROM s;")
    assert {"create_as", "simple_case"} <= forms
    assert "primary" not in grammar_forms()  # lark inlines it: it passes one child on
