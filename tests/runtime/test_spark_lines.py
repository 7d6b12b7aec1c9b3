"""The Spark lines qtt supports, and the replay source's stepping where pyspark has no admission control."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtt.errors import QttError
from qtt.runtime.spark import lines
from qtt.runtime.spark.source.stepped_reader import SteppedStreamReader, logged_position


@pytest.mark.parametrize(("version", "expected"), [("4.1.4", (4, 1)), ("4.3.0", (4, 3)), ("4.2.1.dev0", (4, 2))])
def test_a_version_belongs_to_its_line(version: str, expected: tuple[int, int]) -> None:
    assert lines.line(version) == expected


def test_every_supported_line_passes_and_another_is_refused_naming_the_supported_ones() -> None:
    for major, minor in lines.SUPPORTED:
        lines.check_supported(f"{major}.{minor}.0")
    with pytest.raises(
        QttError, match=r"pyspark 4\.0\.5 is not a Spark line qtt supports \(it supports 4\.1, 4\.2, 4\.3\)"
    ):
        lines.check_supported("4.0.5")


def test_the_pin_is_the_supported_range() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    oldest, newest = lines.SUPPORTED[0], lines.SUPPORTED[-1]
    assert f'"pyspark[connect]>={oldest[0]}.{oldest[1]},<{newest[0]}.{newest[1] + 1}"' in pyproject


def _steps(reader: SteppedStreamReader, calls: int) -> list[int]:
    return [reader.latestOffset()["next"] for _ in range(calls)]


def test_each_latest_offset_steps_one_chosen_micro_batch_and_stays_at_the_end() -> None:
    rows: list[list[object]] = [[i] for i in range(5)]
    assert _steps(SteppedStreamReader(rows, [1, 2, 3, 4]), 6) == [1, 2, 3, 4, 5, 5]
    assert _steps(SteppedStreamReader(rows, [2]), 3) == [2, 5, 5]  # everything after the mark at once
    assert _steps(SteppedStreamReader([], []), 2) == [0, 0]


def test_a_stop_file_holds_the_query_at_its_offset(tmp_path: Path) -> None:
    stop = tmp_path / "q.stop"
    stop.write_text("2", encoding="utf-8")
    reader = SteppedStreamReader([[i] for i in range(4)], [1, 2, 3], str(stop))
    assert _steps(reader, 3) == [1, 2, 2]
    stop.write_text("4", encoding="utf-8")  # the next start of the restart scenario goes further
    assert _steps(reader, 3) == [3, 4, 4]


def test_a_query_resumed_from_a_checkpoint_steps_on_from_its_offset_log(tmp_path: Path) -> None:
    offsets = tmp_path / "offsets"
    offsets.mkdir()
    for batch, at in enumerate([1, 3]):
        (offsets / str(batch)).write_text(f'v1\n{{"batchWatermarkMs":0}}\n{json.dumps({"next": at})}\n')
    (offsets / ".1.crc").write_text("")
    assert logged_position(str(tmp_path)) == 3
    assert logged_position(str(tmp_path / "missing")) == 0 and logged_position(None) == 0
    reader = SteppedStreamReader([[i] for i in range(5)], [1, 2, 3, 4], checkpoint=str(tmp_path))
    assert _steps(reader, 3) == [4, 5, 5]


def test_a_gap_of_an_older_line_is_named_with_the_line_that_has_it() -> None:
    cast = 'Cannot resolve "RUNG" due to data type mismatch: cannot cast "TIME(6)" to "TIMESTAMP".'
    text = 'Cannot resolve "CAST(T AS TIME(6))" due to data type mismatch: cannot cast "STRING" to "TIME(6)".'
    routine = "[UNRESOLVED_ROUTINE] Cannot resolve routine `time_from_millis` on search path"
    needs_43 = "TIME values cast to and from TIMESTAMP (CAST, FORMAT_TIME): needs pyspark 4.3 or later"
    assert lines.lacking(cast, "4.1.4") == f"{needs_43} (this is 4.1.4)"
    assert lines.lacking(cast, "4.2.1") == f"{needs_43} (this is 4.2.1)"  # 4.2 casts TIME to text only
    assert lines.lacking(text, "4.1.4") == (
        "TIME values cast to and from text (CAST, FORMAT_TIME): needs pyspark 4.2 or later (this is 4.1.4)"
    )
    assert "PARSE_TIME, TIMEADD, TIMESUB" in (lines.lacking(routine, "4.1.4") or "")
    assert lines.lacking(text, "4.2.1") is None  # on a line that has it, the error is the plan's own
    assert lines.lacking(cast, "4.3.0") is None
    assert lines.lacking("[UNRESOLVED_COLUMN] A column `X` cannot be resolved", "4.1.4") is None


def test_a_query_that_fails_for_a_gap_of_its_line_is_a_skip_naming_it(monkeypatch) -> None:
    from qtt.errors import LineGapError, ReplayError, UnsupportedFeatureError
    from qtt.runtime.spark import infrastructure

    failure = Exception("[INTERNAL_ERROR] Cannot evaluate expression: run(named_struct(F, CASE WHEN ...")
    monkeypatch.setattr(lines, "pyspark_version", lambda: "4.2.1")
    error = infrastructure.query_failure(failure, "streaming query failed: ...")
    assert isinstance(error, LineGapError) and isinstance(error, ReplayError)  # its group still runs apart
    assert isinstance(error, UnsupportedFeatureError)  # reported as a skip
    assert error.feature.startswith("a row encoded for its sink whose expression calls INSTR inside a lambda")
    assert error.feature.endswith("needs pyspark 4.3 or later (this is 4.2.1)")
    monkeypatch.setattr(lines, "pyspark_version", lambda: "4.3.0")
    assert type(infrastructure.query_failure(failure, "streaming query failed: ...")) is ReplayError


def test_a_failure_that_only_wraps_its_cause_names_spark_s_innermost_error_class() -> None:
    from qtt.runtime.spark.infrastructure import with_cause

    wrapped = Exception(
        "[STREAM_FAILED] Query terminated with exception: [FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred\n"
        "Traceback (most recent call last):\n"
        ": org.apache.spark.SparkException: [CANNOT_WRITE_STATE_STORE.CANNOT_COMMIT] Error writing state store files\n"
        "\tat org.apache.spark.sql.execution.streaming.state.RocksDB.commit(RocksDB.scala:1)"
    )
    assert with_cause(wrapped) == (
        "[STREAM_FAILED] Query terminated with exception: [FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred "
        "(caused by [CANNOT_WRITE_STATE_STORE.CANNOT_COMMIT] Error writing state store files)"
    )
    assert with_cause(Exception("[DIVIDE_BY_ZERO] Division by zero")) == "[DIVIDE_BY_ZERO] Division by zero"
