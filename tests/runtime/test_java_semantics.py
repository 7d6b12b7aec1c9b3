"""Java's arithmetic, ordering and equality on Python values."""

from __future__ import annotations

import datetime
import math
from decimal import Decimal

from qtt import sqltypes as t
from qtt.runtime.aggregates.java_semantics import canon, hashed_form, sort_key, wrap32, wrap64


def test_integers_wrap_around_as_java_ints_and_longs() -> None:
    assert wrap32(2**31) == -(2**31)
    assert wrap64(2**63 + 1) == -(2**63) + 1


def test_doubles_order_as_double_compare_to() -> None:
    values = [math.nan, 0.0, -0.0, -math.inf, 1.5]
    assert [str(v) for v in sorted(values, key=sort_key(t.DOUBLE))] == ["-inf", "-0.0", "0.0", "1.5", "nan"]


def test_strings_order_by_utf16_code_units_and_bytes_as_signed() -> None:
    # U+FF5E sorts above U+1F600 (a surrogate pair starting 0xD83D) in Java, below in Python.
    assert sorted(["\U0001f600", "\uff5e"], key=sort_key(t.STRING)) == ["\U0001f600", "\uff5e"]
    assert sorted([b"\x01", b"\xff"], key=sort_key(t.BYTES)) == [b"\xff", b"\x01"]


def test_equality_is_javas_equals() -> None:
    assert canon(math.nan) == canon(math.nan)
    assert canon(0.0) != canon(-0.0)
    assert canon(Decimal("1.0")) != canon(Decimal("1.00"))
    assert canon({"a": [1.0]}) == canon({"a": (1.0,)})


def test_hashed_form_is_what_a_java_to_string_tells_apart() -> None:
    # ByteBuffer.toString shows the length only; java.sql.Time.toString whole seconds only
    assert hashed_form(t.BYTES)(b"\x01\x02") == hashed_form(t.BYTES)(b"\x03\x04")
    assert hashed_form(t.BYTES)(b"\x01") != hashed_form(t.BYTES)(b"\x01\x02")
    time = hashed_form(t.TIME)
    assert time(datetime.time(1, 0, 0, 400000)) == time(datetime.time(1, 0, 0))
    assert time(datetime.time(1, 0, 1)) != time(datetime.time(1, 0, 0))
    listed = hashed_form(t.Array(t.BYTES))
    assert listed([b"\x01", None]) == listed([b"\x02", None])
    assert hashed_form(t.STRING)("a") != hashed_form(t.STRING)("b")
    # a List prints its strings unquoted and a null element as null
    strings = hashed_form(t.Array(t.STRING))
    assert strings(["a, b"]) == strings(["a", "b"])
    assert strings([None]) == strings(["null"])
    assert strings(["a"]) != strings(["b"])
    assert hashed_form(t.Array(t.DOUBLE))([0.0]) != hashed_form(t.Array(t.DOUBLE))([-0.0])
    # a Connect Struct leaves its null fields out
    pair = hashed_form(t.Struct((t.Field("A", t.STRING), t.Field("B", t.STRING))))
    assert pair(("x,B=y", None)) == pair(("x", "y"))
    assert pair((None, "x")) != pair(("x", None))
