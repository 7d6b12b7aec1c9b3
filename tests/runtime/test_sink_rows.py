"""What a Spark Connect replay brings back: observed metrics as rows (no Spark needed)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from types import SimpleNamespace

from pyspark.sql import Row

from qtt.runtime.execute.sink_rows import _ConnectQuery
from qtt.runtime.spark import session

FIXTURES = Path(__file__).parent / "fixtures"


def test_connect_observed_metrics_become_the_rows_the_classic_client_gives():
    raw = json.loads((FIXTURES / "connect_observed_metrics.json").read_text())
    del raw["comment"]
    # the Connect client's own reading: each metric a Row(values=..., schema=...)
    update = SimpleNamespace(observedMetrics={name: Row(**metric) for name, metric in raw.items()})
    stream = SimpleNamespace(recentProgress=[update], exception=lambda: None)
    [progress] = _ConnectQuery(stream).recentProgress  # type: ignore[arg-type]
    errors = progress.observedMetrics["j0.CSAS_OUT_0.KsqlTopic_Source.processing_log"]["errors"]
    assert [e["seq"] for e in errors] == [1, 2]
    assert errors[0]["message"].endswith("Unexpected field count, csvFields:1 schemaFields:2")
    assert progress.observedMetrics["j1.CSAS_OUT_0.KsqlTopic_Source.processing_log"]["errors"] == []


def test_a_metric_that_is_already_a_row_is_kept():
    row = Row(errors=[Row(seq=0, message="x")])
    stream = SimpleNamespace(recentProgress=[SimpleNamespace(observedMetrics={"m": row})], exception=lambda: None)
    assert _ConnectQuery(stream).recentProgress[0].observedMetrics["m"] is row  # type: ignore[arg-type]


def test_the_shipped_zip_holds_every_module_and_the_grammars():
    shipped = zipfile.ZipFile(session._qtt_zip()).namelist()
    package = Path(session.__file__).parents[2]
    expected = {
        "qtt/" + path.relative_to(package).as_posix()
        for path in package.rglob("*")
        if path.suffix in {".py", ".lark"} and "__pycache__" not in path.parts
    }
    assert expected <= set(shipped)
    assert "qtt/sql/grammar.lark" in shipped
    assert not any("__pycache__" in name for name in shipped)
