"""Another pyspark for one command: its environment, and the command line it runs there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt import cli
from qtt.errors import QttError
from qtt.harness import spark_envs


def test_the_spark_option_is_taken_out_of_the_command_and_nothing_else() -> None:
    argv = ["run", "cases", "--spark", "4.1.4", "-k", "spark", "--spark=4.2.1", "-q"]
    assert spark_envs.without_spark_option(argv) == ["run", "cases", "-k", "spark", "-q"]


@pytest.mark.parametrize("text", ["4.1", "latest", "4.1.4; rm -rf /", ""])
def test_a_version_that_is_not_a_release_is_refused_before_anything_is_made(text: str) -> None:
    with pytest.raises(QttError, match=r"expected a pyspark release such as 4\.1\.4"):
        spark_envs.check_version(text)
    assert spark_envs.check_version("4.1.4") == "4.1.4"


def test_a_ready_environment_is_reused_without_pip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QTT_CACHE_DIR", str(tmp_path))
    root = tmp_path / "spark" / "4.1.4"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").write_text("")
    source = spark_envs._source_tree()
    wanted = {"pyspark": "4.1.4", "qtt": str(source)}
    (root / "qtt-spark-env.json").write_text(json.dumps(wanted))
    monkeypatch.setattr(spark_envs, "_step", lambda *args: pytest.fail("pip ran for a ready environment"))
    said: list[str] = []
    assert spark_envs.environment("4.1.4", said.append) == root / "bin" / "python"
    assert said == []


def test_a_failed_install_says_what_failed_and_pips_last_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QTT_CACHE_DIR", str(tmp_path))
    with pytest.raises(QttError, match=r"(?s)could not make a virtual environment.*No module named") as raised:
        spark_envs._step(
            ["python3", "-m", "no_such_module_here"], f"could not make a virtual environment in {tmp_path}"
        )
    assert "pip index versions pyspark" in (raised.value.hint or "")


def test_run_and_snapshot_under_spark_rerun_the_command_there(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(spark_envs, "rerun", lambda version, argv, say: calls.append((version, list(argv))) or 3)
    assert cli.main(["run", "cases/smoke.json", "--spark", "4.2.1", "-q"]) == 3
    assert cli.main(["snapshot", "cases/tables.json", "--spark", "4.1.4"]) == 3
    assert calls == [
        ("4.2.1", ["run", "cases/smoke.json", "-q"]),
        ("4.1.4", ["snapshot", "cases/tables.json", "--checkpoints-only"]),
    ]


def test_a_bad_spark_version_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "cases/smoke.json", "--spark", "newest"]) == 2
    assert "--spark newest: expected a pyspark release" in capsys.readouterr().err
