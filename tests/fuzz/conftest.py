"""The fuzz suite: the quick profile always, the long one under ``pytest -m fuzz``.

Every fuzz test module carries the ``fuzz`` marker. The long profile is the same tests with
thousands of examples each; it is chosen when the ``-m`` expression asks for ``fuzz`` (and
not ``not fuzz``). Otherwise the fuzz tests run quickly, a few dozen examples per target.
"""

from __future__ import annotations

import pytest

from tests.fuzz import profiles


def wants_long_profile(markexpr: str) -> bool:
    """Whether a ``-m`` expression selects the long fuzz profile."""
    return "fuzz" in markexpr and "not fuzz" not in markexpr


def pytest_configure(config: pytest.Config) -> None:
    """Pick the profile before the fuzz test modules are imported."""
    if wants_long_profile(config.getoption("markexpr", "") or ""):
        profiles.active = profiles.LONG
