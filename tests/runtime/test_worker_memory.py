"""Python workers freeze their imports out of the garbage collector; other processes do not."""

from __future__ import annotations

import gc
import sys
from types import ModuleType, SimpleNamespace

import pytest

from qtt.runtime.spark.workers import worker_memory


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_memory, "_done", set())
    yield
    gc.unfreeze()


def _main_named(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    main = ModuleType("__main__")
    main.__spec__ = SimpleNamespace(name=name)  # type: ignore[assignment]
    monkeypatch.setitem(sys.modules, "__main__", main)


def test_a_worker_forked_by_pysparks_daemon_freezes_once_per_kind(monkeypatch: pytest.MonkeyPatch, fresh: None) -> None:
    _main_named(monkeypatch, "pyspark.daemon")
    before = gc.get_freeze_count()
    worker_memory.freeze_once("operator")
    frozen = gc.get_freeze_count()
    assert frozen > before
    # other threads of the test process may free a few frozen objects meanwhile: compare with a
    # margin far below what a second freeze of these lists would add
    made_since = [[n] for n in range(1000)]  # tracked by the collector, not frozen
    worker_memory.freeze_once("operator")
    assert gc.get_freeze_count() < frozen + len(made_since) // 2, "a kind freezes once"
    worker_memory.freeze_once("serde")
    assert gc.get_freeze_count() >= frozen + len(made_since) // 2, "another kind freezes what was made since"


@pytest.mark.parametrize("main", ["pytest", "pyspark.sql.streaming.transform_with_state_driver_worker"])
def test_other_processes_never_freeze(monkeypatch: pytest.MonkeyPatch, fresh: None, main: str) -> None:
    _main_named(monkeypatch, main)
    before = gc.get_freeze_count()
    worker_memory.freeze_once("operator")
    assert gc.get_freeze_count() == before
