"""ksqlDB's suppression of a windowed aggregation's changes (``EMIT FINAL`` before ksqlDB 0.28).

Kept apart from :mod:`qtt.plan.ir.steps`; the codec imports this module so that the tag is
registered wherever plans are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from qtt.plan.ir.steps import ExecutionStep, Formats, StatefulStep, WindowExpression


@dataclass(frozen=True, kw_only=True)
class TableSuppressV1(StatefulStep):
    """Kafka Streams' suppress buffer (``untilWindowCloses``) over a windowed table's changes.

    Holds each window's newest row and emits it once stream time less the grace period of
    ``window`` reaches the window's end, however old the window (the aggregate's store
    retention does not limit it), in window-end order, then by key bytes (the key in
    ``internal_formats``) and start. ksqlDB planned it after the aggregate's projection for
    ``EMIT FINAL`` until 0.28; from then the aggregate emits on window close itself
    (``WindowExpression.emit_final``), by a rule that differs for windows past retention.
    """

    type_tag: ClassVar[str] = "tableSuppressV1"
    source: ExecutionStep
    window: WindowExpression
    internal_formats: Formats
