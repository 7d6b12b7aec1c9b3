"""The fuzz suite picks its long profile only when ``-m`` asks for ``fuzz``."""

from __future__ import annotations

import pytest

from tests.fuzz.conftest import wants_long_profile


@pytest.mark.parametrize(
    ("markexpr", "long"),
    [("", False), ("not spark", False), ("fuzz", True), ("fuzz and not spark", True), ("not fuzz", False)],
)
def test_the_long_profile_needs_m_fuzz(markexpr: str, long: bool) -> None:
    assert wants_long_profile(markexpr) is long
