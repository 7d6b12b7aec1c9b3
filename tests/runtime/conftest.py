"""Fixtures shared by the runtime tests."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import qtt


@pytest.fixture
def modules_loaded_by() -> Callable[[str], set[str]]:
    """Import a module in a new, isolated interpreter and return every module that loaded.

    ``-I`` ignores PYTHONPATH and the user site, so nothing this process imported can leak
    in; the tested tree (this checkout, not an installed copy) goes first on ``sys.path``.
    The import must succeed.
    """
    root = str(Path(qtt.__file__).resolve().parents[1])

    def run(module: str) -> set[str]:
        code = (
            "import importlib, json, sys\n"
            f"sys.path.insert(0, {root!r})\n"
            f"loaded = importlib.import_module({module!r})\n"
            f"assert loaded.__file__.startswith({root!r}), loaded.__file__\n"
            "print(json.dumps(sorted(sys.modules)))\n"
        )
        done = subprocess.run([sys.executable, "-I", "-c", code], check=False, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return set(json.loads(done.stdout))

    return run
