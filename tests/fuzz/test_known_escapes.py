"""Reproducers of escapes the fuzz suite found, kept as regression tests once fixed.

An escape found in code the fuzz suite does not own gets an ``xfail`` reproducer here and a
``KNOWN`` entry in :mod:`tests.fuzz.escapes` until its fix lands; then both marks go.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.fuzz.profiles import ROOT

# A key with an escaped control character and a "[": _line_of never finds its path and never
# stops shortening it. Run apart, so that the loop cannot hang the test run.
S4 = """
from qtt.errors import QttError
from qtt.harness.cases.loader import load_text
try:
    load_text('{"tests": [{"name": "x", "statements": ["s"], "inputs": [], "\\\\u0001[": 1}]}', file="c.json")
except QttError:
    pass
"""


def test_s4_a_key_that_no_line_matches() -> None:
    try:
        subprocess.run([sys.executable, "-c", S4], cwd=ROOT, check=True, timeout=5)
    except subprocess.TimeoutExpired:
        pytest.fail("load_text did not return within 5 s")
