"""Whether a string literal reads as a TIME, DATE, TIMESTAMP or BYTES value, as ksqlDB's
``DefaultSqlValueCoercer`` reads one when ``CoercionUtil`` converts a list's literals to the
list's type (``ARRAY[...]``, ``MAP(...)``, ``IN (...)``).

The text is trimmed, then read by ksqlDB's ``SqlTimeTypes`` parsers (a TIMESTAMP as a full or
partial ISO timestamp with an optional offset, a DATE as ``yyyy-MM-dd`` or a partial one, a TIME
as ``HH:mm[:ss[.fraction]]``) or as base64 (BYTES; the trailing ``=`` padding may be left out).
ksqlDB converts the literal while it types the list, so text that does not read fails the
statement rather than giving a null at run time.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re

from qtt.errors import StatementError
from qtt.plan.analysis.pseudo_timestamps import timestamp_millis
from qtt.serde.values import EPOCH

#: the base types text coerces to in a list, literal or not (ksqlDB's strict
#: ``DefaultSqlValueCoercer``), and a string literal is read as here
TEXT_READ = frozenset({"TIME", "DATE", "TIMESTAMP", "BYTES"})

_TIME = re.compile(r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def reads_as(text: str, base: str) -> bool:
    """Whether ``text`` is a value of the base type ``base`` (one of :data:`TEXT_READ`)."""
    try:
        parse_text(text.strip(), base)
    except ValueError:
        return False
    return True


def parse_text(text: str, base: str) -> object:
    """``text`` as a value of the base type ``base`` (one of :data:`TEXT_READ`): a datetime,
    date, time or bytes (``SqlTimeTypes``, ``BytesUtils``).

    Raises:
        ValueError: the text is no such value.
    """
    try:
        if base == "TIMESTAMP":
            return EPOCH + dt.timedelta(milliseconds=timestamp_millis(text))
        if base == "BYTES":
            # Java's decoder takes the text without its trailing '=' padding too
            return base64.b64decode(text + "=" * (-len(text) % 4 if len(text) % 4 > 1 else 0), validate=True)
        if base == "DATE":  # a partial date is completed: '2021-05' is 2021-05-01
            text = text + "-01" * max(0, 2 - text.count("-"))
        found = (_DATE if base == "DATE" else _TIME).fullmatch(text)
        if found is None:
            raise ValueError(f"not a {base}: {text!r}")
        if base == "DATE":
            return dt.date(*(int(part) for part in found.groups()))
        hour, minute, second, fraction = found.groups()
        micros = int((fraction or "0").ljust(9, "0")[:6])
        return dt.time(int(hour), int(minute), int(second or 0), micros)
    except (StatementError, OverflowError, binascii.Error) as e:
        raise ValueError(str(e)) from None
