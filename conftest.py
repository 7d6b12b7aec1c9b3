"""Repository-level pytest configuration: the shared SparkSession and fresh-interpreter fixtures.

The qtt plugin itself is loaded through its ``pytest11`` entry point.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import qtt

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def pytest_configure(config: pytest.Config) -> None:
    # `qtt run` records its failures for --lf; the suite's runs keep theirs out of the checkout
    if "QTT_CACHE_DIR" not in os.environ:
        os.environ["QTT_CACHE_DIR"] = _OWN_CACHE[0] = tempfile.mkdtemp(prefix="qtt-test-cache-")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _OWN_CACHE[0]:
        shutil.rmtree(_OWN_CACHE[0], ignore_errors=True)
        os.environ.pop("QTT_CACHE_DIR", None)


_OWN_CACHE: list[str] = [""]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Quick tests first: everything that needs no SparkSession runs before anything that does,
    so a broken quick test is found in the first minute, not after the replays (a stable sort:
    each group keeps its collection order)."""
    items.sort(key=lambda item: item.get_closest_marker("spark") is not None)


@pytest.fixture(scope="session")
def spark() -> SparkSession:
    """The one SparkSession of this test process (started on first use)."""
    from qtt.runtime.spark.session import get_session

    return get_session()


@pytest.fixture
def no_active_streams(spark: SparkSession) -> Iterator[None]:
    """Stop every streaming query a test leaves running."""
    yield
    for query in spark.streams.active:
        query.stop()


@pytest.fixture
def modules_loaded_by() -> Callable[..., set[str]]:
    """Import a module in a new, isolated interpreter and return every module that loaded.

    ``-I`` ignores PYTHONPATH and the user site, so nothing this process imported can leak
    in; the tested tree (this checkout, not an installed copy) goes first on ``sys.path``.
    ``then`` is more code to run after the import (it sees the module as ``loaded``). The
    import must succeed.
    """
    root = str(Path(qtt.__file__).resolve().parents[1])

    def run(module: str, then: str = "") -> set[str]:
        code = (
            "import importlib, json, sys\n"
            f"sys.path.insert(0, {root!r})\n"
            f"loaded = importlib.import_module({module!r})\n"
            f"assert loaded.__file__.startswith({root!r}), loaded.__file__\n"
            f"{then}\n"
            "print(json.dumps(sorted(sys.modules)))\n"
        )
        done = subprocess.run([sys.executable, "-I", "-c", code], check=False, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return set(json.loads(done.stdout))

    return run
