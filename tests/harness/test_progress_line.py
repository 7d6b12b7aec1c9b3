"""A long run is never silent: the progress line repeats itself when nothing finished for a while."""

from __future__ import annotations

import io

from qtt.harness.progress import ProgressLine


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_each_update_is_a_line_of_its_own_in_a_log() -> None:
    out = io.StringIO()
    with ProgressLine(out, every=0) as line:
        progress = line.stage("case variants")
        progress(1, 3)
        progress(3, 3)
        later = line.stage("historical plans")
        later(2, 2)
    lines = out.getvalue().splitlines()
    assert [text.rsplit(" (", 1)[0] for text in lines] == [
        "  replayed 1/3 case variants",
        "  replayed 3/3 case variants",
        "  replayed 2/2 historical plans",
    ]


def test_the_heartbeat_repeats_the_line_while_nothing_finishes() -> None:
    out = io.StringIO()
    with ProgressLine(out, every=0.05) as line:
        line.stage("restored checkpoints")(1, 54)
        assert line.beat.wait(10), "no heartbeat"
        line.beat.clear()
        assert line.beat.wait(10), "one heartbeat only"
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3
    assert all(text.startswith("  replayed 1/54 restored checkpoints (") for text in lines)


def test_before_the_first_item_finishes_the_heartbeat_names_the_stage() -> None:
    out = io.StringIO()
    with ProgressLine(out, every=0.05) as line:
        line.stage("SQL tests")
        assert line.beat.wait(10)
    assert out.getvalue().startswith("  replaying SQL tests (")


def test_a_terminal_gets_one_line_rewritten_in_place() -> None:
    out = Tty()
    with ProgressLine(out, every=0) as line:
        progress = line.stage("case variants")
        progress(1, 2)
        progress(2, 2)
    text = out.getvalue()
    assert text.startswith("\r  replayed 1/2 case variants (") and "\r  replayed 2/2 case variants (" in text
    assert text.count("\n") == 1 and text.endswith("\n")


def test_an_ended_stage_cannot_move_the_line_back_and_quiet_prints_nothing() -> None:
    out = io.StringIO()
    with ProgressLine(out, every=0) as line:
        first = line.stage("case variants")
        line.stage("historical plans")(1, 5)
        first(3, 3)
        assert line.line().startswith("  replayed 1/5 historical plans")
    assert "case variants" not in out.getvalue()
    quiet = io.StringIO()
    with ProgressLine(quiet, every=0.01, quiet=True) as line:
        line.stage("case variants")(1, 1)
    assert quiet.getvalue() == ""
