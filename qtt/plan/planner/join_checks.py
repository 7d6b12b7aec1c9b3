"""ksqlDB's checks of a join's sides: their windowing (its analyzer), the windowed keys a join
can neither re-key nor move to another key format, and their partition counts (``JoinNode``)."""

from __future__ import annotations

from collections.abc import Sequence

from qtt.errors import StatementError, UnsupportedFeatureError
from qtt.plan.ddl.metastore import DataSource
from qtt.serde.interface import INFERRED_KEY_FORMATS

#: the sources a join's input reads, leftmost first, with their qualifiers
Sources = Sequence[tuple[str, DataSource]]


def check_windowing(left: Sources, right: Sources) -> None:
    """Windowed sources join only windowed sources of a compatible kind (ksqlDB's analyzer)."""
    (left_name, left_source), (right_name, right_source) = left[0], right[0]
    left_window, right_window = left_source.formats.window, right_source.formats.window
    if (left_window is None) != (right_window is None):
        shown = [
            f"`{name}` is {window.type if window else 'not'} windowed"
            for name, window in (
                (left_name, left_window),
                (right_name, right_window),
            )
        ]
        raise StatementError("\n".join(["Can not join windowed source to non-windowed source.", *shown]))
    if left_window is None or right_window is None:
        return
    if (left_window.type == "SESSION") != (right_window.type == "SESSION"):
        msg = (
            f"Incompatible windowed sources.\nLeft source: {left_window.type}\nRight source: {right_window.type}\n"
            "Session windowed sources can only be joined to other session windowed sources, and may still not "
            "result in expected behaviour as session bounds must be an exact match for the join to work\n"
            "Hopping and tumbling windowed sources can only be joined to other hopping and tumbling windowed sources"
        )
        raise StatementError(msg)


def check_windowed_keys(left: Sources, right: Sources, left_keyed: bool, right_keyed: bool) -> None:
    """A windowed side can be neither re-keyed nor moved to the join's key format (the left's);
    a Schema-Registry key format is repartitioned as it is, which ksqlDB allows."""
    formats = [source.formats for _, source in (left[0], right[0])]
    if formats[0].window is None:
        return
    moved = (formats[0].key_format, formats[0].key_features, formats[0].window) != (
        formats[1].key_format,
        formats[1].key_features,
        formats[1].window,
    )
    forced = formats[0].key_format.format in INFERRED_KEY_FORMATS
    if not (left_keyed and right_keyed) or (moved and not forced):
        msg = "Implicit repartitioning of windowed sources is not supported. See https://github.com/confluentinc/ksql/issues/4385."
        raise StatementError(msg)
    if len(left) > 1:
        raise UnsupportedFeatureError("joining windowed sources in a multi-way join")


#: the partitions of a topic that neither ``PARTITIONS`` nor a case's ``topics`` section counts:
#: ksqlDB's test harness creates the topics its statements and records name with 4
#: (``KsqlConstants.legacyDefaultSinkPartitionCount``)
TEST_TOPIC_PARTITIONS = 4


def check_partitions(left: Sources, right: Sources) -> None:
    """The inputs of a primary-key join need as many partitions on both sides (ksqlDB's
    ``JoinNode.ensureMatchingPartitionCounts``), re-keyed ones too: each side counts its source
    topic's partitions, a join its right source's, and is named after its leftmost source.

    A source counts its topic's count in the case's ``topics`` section (ksqlDB's runner creates
    that topic first and a CREATE's ``PARTITIONS`` changes nothing), else its ``PARTITIONS``
    property, else a C*AS sink its query's source's; a topic none of them counts has
    :data:`TEST_TOPIC_PARTITIONS`."""
    (left_name, _), (right_name, right_source) = left[0], right[0]
    left_count = left[-1][1].partitions or TEST_TOPIC_PARTITIONS
    right_count = right_source.partitions or TEST_TOPIC_PARTITIONS
    if left_count != right_count:
        msg = (
            f"Can't join `{left_name}` with `{right_name}` since the number of partitions don't match. "
            f"`{left_name}` partitions = {left_count}; `{right_name}` partitions = {right_count}. "
            "Please repartition either one so that the number of partitions match."
        )
        raise StatementError(msg)


def check_prefixed_names(left: Sequence[tuple[str, object]], right: Sequence[tuple[str, object]]) -> None:
    """ksqlDB's JoinNode builds the join's schema from both sides' columns, each named
    ``<alias>_<column>`` (LogicalSchema.Builder): when the right side gives a name the left gave
    already (``A`` with a column ``B_C``, ``A_B`` with a column ``C``), the join is refused,
    whatever the query selects."""
    taken = {name for name, _ in left}
    for name, type_ in right:
        if name in taken:
            raise StatementError(f"Duplicate value columns found in schema: `{name}` {type_}")
