"""The internal topics ksqlDB's Kafka Streams topology makes for a join, by ksqlDB's names.

A case's ``post.topics`` may name them (``<prefix>Join-right-repartition``,
``<prefix>KSTREAM-JOINTHIS-0000000012-store-changelog``). qtt's Spark plan has no such
topics, so the post-conditions see them as a description of the query: which sides ksqlDB
repartitions, in which key format, and what Kafka Streams calls the stores of a windowed join.
The rules are ksqlDB's (``JoinNode.resolveKeyFormats``, ``PreJoinRepartitionNode``):

- the join's key format is the left side's unless the left is re-keyed, then the right's,
  else the first source key format that is not ``NONE`` (else ``KAFKA``);
- a side is repartitioned when it is re-keyed, when its key format is not the join's, and
  always under a Schema-Registry key format (ksqlDB forces it: key schema ids may differ);
- a repartitioned stream goes through Kafka Streams' ``<join>-left-repartition`` /
  ``-right-repartition`` (``<join>-repartition`` in a stream-table join); a repartitioned
  table through ``<side>SourceKeyed-SelectKey-repartition`` and is materialized again as
  ``<side>SourceKeyed-Materialize-changelog``; a table source of a join is materialized as
  ``KafkaTopic_<side>-Reduce-changelog``;
- a windowed stream-stream join's two stores are numbered by Kafka Streams' node counter, as
  ksqlDB 8.0 builds the topology (:func:`_Numbering`): ``KSTREAM-JOINTHIS`` or ``OUTERTHIS``
  (left side, ``OUTER`` for a full join) and ``JOINOTHER`` or ``OUTEROTHER`` (right side,
  ``OUTER`` for a left or full join), and with a grace period a left or full join's shared
  ``OUTERSHARED`` store.

Foreign-key joins are left out (their subscription topics are Kafka Streams' own).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from qtt import sqltypes as t
from qtt.plan.ddl.with_properties import CONFIG_DEFAULT_KEY_FORMAT
from qtt.plan.ir import join_steps as js
from qtt.plan.ir import steps as s
from qtt.serde import get_format
from qtt.serde.interface import INFERRED_KEY_FORMATS, UNWRAPPED_KEY_FORMATS, SerdeColumn
from qtt.serde.registry.registry_format import RegistryFormat

#: ksqlDB's test driver's service id, unless a case sets ``ksql.service.id``
DEFAULT_SERVICE_ID = "some.ksql.service.id"


@dataclass(frozen=True)
class JoinTopic:
    """One internal topic: its full name, formats and the key column its key schema describes."""

    name: str
    formats: s.Formats
    key_name: str
    key_type: t.SqlType

    def key_schema(self) -> tuple[str, str] | None:
        """``(schema type, schema text)`` ksqlDB's key serializer registers, or None."""
        info = self.formats.key_format
        format_ = get_format(info.format)
        if not isinstance(format_, RegistryFormat) or not format_.uses_registry:
            return None
        text = format_.registered_schema_text(
            (SerdeColumn(self.key_name, self.key_type),),
            is_key=True,
            properties=info.properties,
            features=self.formats.key_features,
            writer_version=info.writer_version,
        )
        return format_.schema_type, text


@dataclass
class _Side:
    """One input of a join, as ksqlDB's planner sees it."""

    kind: str  # "STREAM" or "TABLE"
    rekeyed: bool
    source: s.StreamSourceV1 | s.TableSourceV1 | None  # None: the input is a join
    join: _Join | None
    key_type: t.SqlType
    repartitioned: bool = False
    formats: s.Formats | None = None  # the formats it is repartitioned in


@dataclass
class _Join:
    step: js.JoinStep
    prefix: str
    left: _Side
    right: _Side
    key_format: s.Formats | None = None
    stores: list[str] = field(default_factory=list)

    def preferred(self) -> s.Formats | None:
        return _preferred(self.left) or _preferred(self.right)

    def sources(self) -> list[s.StreamSourceV1 | s.TableSourceV1]:
        return [*_side_sources(self.left), *_side_sources(self.right)]


def join_topics(plan: s.Plan, properties: Mapping[str, object] | None = None) -> list[JoinTopic]:
    """The internal topics of every (non foreign-key) join of ``plan``'s queries."""
    config = {**plan.config, **(properties or {})}
    service_id = str(config.get("ksql.service.id", DEFAULT_SERVICE_ID))
    default_key = s.FormatInfo(format=str(config.get(CONFIG_DEFAULT_KEY_FORMAT, "KAFKA")).upper())
    found: list[JoinTopic] = []
    for query in plan.queries():
        root = _find_join(query.physical_plan)
        if root is None:
            continue
        tree = _join(root, "")
        if tree is None:
            continue
        _resolve(tree, None, default_key)
        _Numbering().build(tree)
        found += _topics(tree, f"_confluent-ksql-{service_id}query_{query.query_id}-")
    return found


def _find_join(step: s.ExecutionStep) -> js.JoinStep | None:
    if isinstance(step, js.JoinStep):
        return step
    for child in step.sources():
        found = _find_join(child)
        if found is not None:
            return found
    return None


def _join(step: js.JoinStep, prefix: str) -> _Join | None:
    if isinstance(step, js.ForeignKeyTableTableJoinV1):
        return None
    left_kind = "TABLE" if isinstance(step, js.TableTableJoinV1) else "STREAM"
    right_kind = "STREAM" if isinstance(step, (js.StreamStreamJoinV1, js.StreamStreamJoinV2)) else "TABLE"
    left = _side(step.left_source, left_kind, prefix + "L_")
    right = _side(step.right_source, right_kind, prefix + "R_")
    if left is None or right is None:
        return None
    return _Join(step, prefix, left, right)


def _side(step: s.ExecutionStep, kind: str, nested_prefix: str) -> _Side | None:
    rekeyed = False
    key_type: t.SqlType | None = None
    while not isinstance(step, (s.StreamSourceV1, s.TableSourceV1, js.JoinStep)):
        if isinstance(step, (s.StreamSelectKeyV1, s.StreamSelectKeyV2)):
            if len(step.key_expressions) != 1:
                return None  # a join key is one column
            rekeyed = True
            key_type = key_type or step.key_expressions[0].expression.result_type
        children = step.sources()
        if len(children) != 1:
            return None
        step = children[0]
    if isinstance(step, js.JoinStep):
        nested = _join(step, nested_prefix)
        if nested is None:
            return None
        return _Side(kind, rekeyed, None, nested, key_type or nested.left.key_type)
    key = step.source_schema.key
    if key_type is None:
        if len(key) != 1:
            return None
        key_type = key[0].type
    return _Side(kind, rekeyed, step, None, key_type)


def _side_sources(side: _Side) -> list[s.StreamSourceV1 | s.TableSourceV1]:
    if side.source is not None:
        return [side.source]
    assert side.join is not None
    return side.join.sources()


def _preferred(side: _Side) -> s.Formats | None:
    if side.rekeyed:
        return None
    if side.join is not None:
        return side.join.preferred()
    assert side.source is not None
    return side.source.formats


def _resolve(join: _Join, forced: s.Formats | None, default_key: s.FormatInfo) -> None:
    """``JoinNode.resolveKeyFormats`` / ``setKeyFormat``: the join's key format, then each side's."""
    key_format = forced or join.preferred() or _default_key_format(join, default_key)
    join.key_format = key_format
    for side in (join.left, join.right):
        _set_side_format(side, key_format, default_key)


def _default_key_format(join: _Join, default_key: s.FormatInfo) -> s.Formats:
    for source in join.sources():
        if source.formats.key_format.format != "NONE":
            return source.formats
    return s.Formats(key_format=default_key, value_format=s.FormatInfo(format="JSON"))


def _set_side_format(side: _Side, key_format: s.Formats, default_key: s.FormatInfo) -> None:
    """``PreJoinRepartitionNode.setKeyFormat``; a nested join keyed by the join's key has none."""
    forced = key_format.key_format.format in INFERRED_KEY_FORMATS
    if side.join is not None and not side.rekeyed:
        _resolve(side.join, key_format, default_key)
        return
    moved = side.source is not None and _key_of(side.source.formats) != _key_of(key_format)
    side.repartitioned = side.rekeyed or forced or moved
    if side.repartitioned:
        side.formats = key_format
    if side.join is not None:
        _resolve(side.join, None, default_key)


def _key_of(formats: s.Formats) -> tuple[object, ...]:
    info = formats.key_format
    return (info.format, tuple(sorted(info.properties.items())), tuple(sorted(formats.key_features)), formats.window)


class _Numbering:
    """Kafka Streams' processor counter over the topology ksqlDB 8.0 builds for a join tree.

    A stream source takes three numbers (source, value processor, peek), a table source six;
    re-keying one takes one more (a table, six). A stream-stream join takes three per
    repartitioned side and two for its windowed processors before its two stores, then one for
    its merge; a stream-table join builds its table side first and takes one; a re-keyed join
    takes one more. Counted from ksqlDB 8.0's topologies of its own join cases.
    """

    def __init__(self) -> None:
        self.next = 0

    def build(self, join: _Join) -> None:
        step = join.step
        if isinstance(step, (js.StreamStreamJoinV1, js.StreamStreamJoinV2)):
            self.side(join.left)
            self.side(join.right)
            self.next += 3 * sum(side.repartitioned for side in (join.left, join.right)) + 2
            this, other = self.next, self.next + 1
            outer_this = step.join_type == "OUTER"
            outer_other = step.join_type in ("LEFT", "RIGHT", "OUTER")
            join.stores = [
                f"KSTREAM-{'OUTER' if outer_this else 'JOIN'}THIS-{this:010d}-store",
                f"KSTREAM-{'OUTER' if outer_other else 'JOIN'}OTHER-{other:010d}-store",
            ]
            if isinstance(step, js.StreamStreamJoinV2) and step.join_type in ("LEFT", "OUTER"):
                join.stores.append(f"KSTREAM-OUTERSHARED-{this:010d}-store")
            self.next += 3
        elif isinstance(step, js.StreamTableJoinV1):
            self.side(join.right)
            self.side(join.left)
            self.next += 1 + 3 * join.left.repartitioned
        else:
            self.side(join.left)
            self.side(join.right)

    def side(self, side: _Side) -> None:
        if side.join is not None:
            self.build(side.join)
            self.next += 1 if side.rekeyed else 0
        elif side.kind == "STREAM":
            self.next += 3 + (1 if side.repartitioned else 0)
        else:
            self.next += 6 + (6 if side.repartitioned else 0)


def _topics(join: _Join, prefix: str) -> list[JoinTopic]:
    assert join.key_format is not None
    found: list[JoinTopic] = []
    key_name = join.step.key_col_name
    stream_stream = isinstance(join.step, (js.StreamStreamJoinV1, js.StreamStreamJoinV2))
    for label, side in (("Left", join.left), ("Right", join.right)):
        if side.join is not None:
            found += _topics(side.join, prefix)
        value = _value_formats(side)
        if side.source is not None and side.kind == "TABLE" and not side.repartitioned:
            found.append(
                JoinTopic(
                    f"{prefix}KafkaTopic_{join.prefix}{label}-Reduce-changelog",
                    side.source.formats,
                    key_name,
                    side.key_type,
                )
            )
        if not side.repartitioned:
            continue
        assert side.formats is not None
        formats = _internal(side.formats, value)
        if side.kind == "TABLE":
            for suffix in ("SelectKey-repartition", "Materialize-changelog"):
                found.append(
                    JoinTopic(f"{prefix}{join.prefix}{label}SourceKeyed-{suffix}", formats, key_name, side.key_type)
                )
        else:
            where = f"-{label.lower()}" if stream_stream else ""
            found.append(JoinTopic(f"{prefix}{join.prefix}Join{where}-repartition", formats, key_name, side.key_type))
    for store, side in zip(join.stores, (join.left, join.right, join.left), strict=False):
        formats = _internal(join.key_format, _value_formats(side))
        found.append(JoinTopic(f"{prefix}{store}-changelog", formats, key_name, join.left.key_type))
    return found


def _value_formats(side: _Side) -> s.Formats:
    sources = _side_sources(side)
    return sources[0].formats


def _internal(key: s.Formats, value: s.Formats) -> s.Formats:
    """Formats of an internal topic: the join's key format, the side's value format."""
    features = ("UNWRAP_SINGLES",) if key.key_format.format in UNWRAPPED_KEY_FORMATS else ()
    return replace(value, key_format=key.key_format, key_features=features, window=key.window)
