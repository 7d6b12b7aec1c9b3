"""Planning the FROM clause of a join: sides, join criteria, key, and the steps up to the join.

The rules are ksqlDB's (JoinNode, JoinTree, PreJoinRepartitionNode): each side's columns are
renamed ``<alias>_<column>`` (``PrependAliasLeft`` / ``PrependAliasRight``); a join compares
one expression of the left input with one of the right; the right side must be joined on its
primary key, and a stream on the left is re-keyed by its expression when it is not already
keyed by it (``LeftSourceKeyed``). The result's key column is named after the left expression
when it is a column, else after the right one, else (and always for ``FULL OUTER``) it is the
synthetic ``ROWKEY`` (``ROWKEY_n`` when a column is so named). A left input that is itself a
join plans with its contexts prefixed ``L_``, as ksqlDB's multi-way joins do. A table joined on
a non-key expression of its own is a foreign-key join, keyed by its own key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qtt import sqltypes as t
from qtt.errors import SqlError, StatementError, UnsupportedFeatureError
from qtt.plan.analysis import messages
from qtt.plan.analysis.analyzer import Analyzer, Scope, ScopeColumn
from qtt.plan.ddl.metastore import STREAM, TABLE, DataSource, unknown_source_hint
from qtt.plan.ir import expressions as e
from qtt.plan.ir import join_steps as js
from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import KEY, PSEUDO_COLUMNS, WINDOW_BOUNDS, Column
from qtt.plan.planner.aliases import ColumnAliasGenerator
from qtt.plan.planner.join_checks import (
    check_partitions,
    check_prefixed_names,
    check_windowed_keys,
    check_windowing,
)
from qtt.plan.planner.planned import check_no_map_keys, reject_windowed_tables
from qtt.sql import ast
from qtt.sql.formatter import format_expr
from qtt.sql.parser import iter_nodes

#: the key column of a join whose key is no column of either side
SYNTHETIC_KEY = "ROWKEY"

#: the AST's join kinds as ksqlDB's plans name them
PLAN_JOIN_TYPES = {"INNER": "INNER", "LEFT": "LEFT", "RIGHT": "RIGHT", "FULL": "OUTER"}
#: how ksqlDB's messages show a join kind
_SHOWN_KIND = {
    "INNER": "[INNER] JOIN",
    "LEFT": "LEFT [OUTER] JOIN",
    "RIGHT": "RIGHT [OUTER] JOIN",
    "FULL": "[FULL] OUTER JOIN",
}


@dataclass(frozen=True)
class JoinColumn:
    """A column of one joined source, as the query sees it (``qualifier.name``) and as the
    join's rows hold it (``prefixed``)."""

    qualifier: str
    name: str
    type: t.SqlType

    @property
    def prefixed(self) -> str:
        return f"{self.qualifier}_{self.name}"

    @property
    def shown(self) -> str:
        return f"{self.qualifier}.{self.name}"


@dataclass(frozen=True)
class Joined:
    """One input of a join, or a join's result.

    Attributes:
        step: its last step.
        kind: STREAM or TABLE.
        key: the name and type of its key column (one: the join key, or a source's key).
        columns: every column its sources bring, in ksqlDB's processing order.
        star: the columns ``SELECT *`` lists, key first.
        equivalents: the columns whose values equal the key (the join expressions that are
            columns); any of them in the projection stands for the key.
        sources: the sources read, leftmost first, with their qualifiers.
    """

    step: s.ExecutionStep
    kind: str
    key: tuple[str, t.SqlType] | None
    columns: tuple[JoinColumn, ...]
    star: tuple[tuple[str, t.SqlType], ...]
    equivalents: tuple[JoinColumn, ...]
    sources: tuple[tuple[str, DataSource], ...]
    repartitioned: bool = False
    #: a foreign-key join: keyed by its left table's key columns, which the projection must hold
    foreign_key: bool = False
    #: every key column of a source (``key`` is None when there are several), or of a
    #: foreign-key join's left table
    keys: tuple[tuple[str, t.SqlType], ...] = ()
    #: the key is no column of either side (``ROWKEY``, or ``ROWKEY_n`` when that is taken)
    synthetic_key: bool = False
    #: every expression equal to the key: the join's two expressions, and an input's set when
    #: one of them is in it (ksqlDB's join equivalence set); empty for a source or an outer join
    equivalence: frozenset[e.Expression] = frozenset()

    @property
    def qualifiers(self) -> frozenset[str]:
        return frozenset(q for q, _ in self.sources)

    @property
    def shown(self) -> str:
        """How ksqlDB's messages name this input: its leftmost source."""
        return self.sources[0][0]

    def scope(self) -> Scope:
        """The columns expressions over this input may reference."""
        columns = [ScopeColumn(c.name, c.type, frozenset([c.qualifier]), input_name=c.prefixed) for c in self.columns]
        if self.key is not None and self.synthetic_key:
            columns.append(ScopeColumn(self.key[0], self.key[1], frozenset()))
        return Scope(columns, self.qualifiers)


class JoinPlanner:
    """Plans a FROM clause that joins sources."""

    def __init__(self, sources: Mapping[str, DataSource]) -> None:
        self.sources = sources

    def plan(self, relation: ast.Relation) -> Joined:
        """Plan a join tree: every join's criteria are checked first, as ksqlDB builds its
        join tree before it plans any join."""
        assert isinstance(relation, ast.Join)
        tree = self._check_tree(relation)
        reject_windowed_tables([source for _, source in tree.sources])
        # ksqlDB's Analyzer.validate names them by their aliases
        kafka = [alias for alias, source in tree.sources if source.formats.value_format.format == "KAFKA"]
        if kafka:
            raise StatementError(messages.kafka_value_format(kafka, "JOIN"))
        return self._plan(relation, "")

    def _check_tree(self, relation: ast.Join) -> Joined:
        """Each join's sides and criteria, checked from the innermost join out."""
        if isinstance(relation.left, ast.Join):
            left = self._check_tree(relation.left)
        else:
            assert isinstance(relation.left, ast.Table)
            left = self._side(relation.left, "", "Left")
        right = self._side(relation.right, "", "Right")
        names = [source.name for _, source in left.sources]
        if relation.right.name in names:
            if len(names) == 1:
                msg = f"Can not join '{names[0]}' to '{names[0]}': self joins are not yet supported."
            else:
                msg = (
                    "N-way joins do not support multiple occurrences of the same source. "
                    f"Source: '{relation.right.name}'."
                )
            raise StatementError(msg)
        # checked before the criteria, which read the columns by these names
        check_prefixed_names(*[[(c.prefixed, c.type) for c in side.columns] for side in (left, right)])
        criteria = self._criteria(relation, left, right)
        named = dict(_combined(left, right).sources)  # ksqlDB's analyzer: the sources as the criteria name them
        check_windowing(*[[(q, named[q])] for q in criteria.written])
        return _combined(left, right)

    def _plan(self, relation: ast.Join, prefix: str) -> Joined:
        if isinstance(relation.left, ast.Join):
            left = self._plan(relation.left, prefix + "L_")
        else:
            assert isinstance(relation.left, ast.Table)
            left = self._side(relation.left, prefix, "Left")
        right = self._side(relation.right, prefix, "Right")
        return self._join(relation, left, right, prefix)

    # ------------------------------------------------------------------ one side

    def _side(self, relation: ast.Table, prefix: str, side: str) -> Joined:
        source = self.sources.get(relation.name)
        if source is None:
            msg = messages.unknown_source(relation.name)
            raise SqlError(msg, hint=unknown_source_hint(relation.name, self.sources))
        qualifier = relation.alias or relation.name
        table = source.kind == TABLE
        step: s.ExecutionStep = (s.TableSourceV1 if table else s.StreamSourceV1)(
            context=f"{prefix}KafkaTopic_{side}/Source",
            topic=source.topic,
            source_name=source.name,
            source_schema=source.schema,
            formats=source.formats,
            timestamp_column=source.timestamp_column,
        )
        schema = source.schema
        # a windowed source's rows bring their window's bounds, which `*` lists after the key
        bounds = [JoinColumn(qualifier, n, t_) for n, t_ in WINDOW_BOUNDS.items()] if source.formats.window else []
        values = [JoinColumn(qualifier, c.name, c.type) for c in (*schema.value, *schema.headers)]
        pseudo = [JoinColumn(qualifier, name, type_) for name, type_ in PSEUDO_COLUMNS.items()]
        keys = [JoinColumn(qualifier, c.name, c.type) for c in schema.key]
        selects = [
            s.SelectExpression(alias=c.prefixed, expression=e.ColumnRef(name=c.name, sql_type=c.type))
            for c in (*keys, *bounds, *values, *pseudo)
        ]
        step = (s.TableSelectV1 if table else s.StreamSelectV1)(
            context=f"{prefix}PrependAlias{side}",
            source=step,
            key_column_names=tuple(c.prefixed for c in keys),
            select_expressions=tuple(selects),
        )
        return Joined(
            step=step,
            kind=source.kind,
            # a table with several key columns is joined on none of them: a foreign-key join
            key=(keys[0].prefixed, keys[0].type) if len(keys) == 1 else None,
            columns=tuple(bounds + values + pseudo + keys),
            star=tuple((c.prefixed, c.type) for c in (*keys, *bounds, *values)),
            equivalents=(),
            sources=((qualifier, source),),
            keys=tuple((c.prefixed, c.type) for c in keys),
        )

    # ------------------------------------------------------------------ the join

    def _join(self, relation: ast.Join, left: Joined, right: Joined, prefix: str) -> Joined:
        criteria = self._criteria(relation, left, right)
        left_expr, right_expr, got = criteria.left, criteria.right, criteria.got
        shown = criteria.shown(relation.kind)
        if left.kind == TABLE and right.kind == STREAM:
            msg = f"Invalid join order: table-stream joins are not supported; only stream-table joins. Got {shown}."
            raise StatementError(msg)
        stream_stream = left.kind == STREAM and right.kind == STREAM
        stream_table = left.kind == STREAM and right.kind == TABLE
        if stream_table and relation.kind == "FULL":
            msg = f"Invalid join type: full-outer join not supported for stream-table join. Got {shown}."
            raise StatementError(msg)
        right_keyed = right.key is not None and isinstance(right_expr, e.ColumnRef) and right_expr.name == right.key[0]
        if not right_keyed and not stream_stream:
            need = (
                "stream-table joins require to join on the table's primary key"
                if stream_table
                else "table-table joins require to join on the primary key of the right input table"
            )
            raise StatementError(f"Invalid join condition: {need}. Got {got}.")
        left_keyed = left.key is not None and isinstance(left_expr, e.ColumnRef) and left_expr.name == left.key[0]
        if left_keyed and left.kind == TABLE and _several_key_source(left, left_expr):
            # joinOnNonKeyAttribute: a column of an earlier join's table keyed by several columns is
            # no key, even the one a foreign-key join is keyed by first: a foreign-key join
            left_keyed = False
        # ksqlDB's joinOnNonKeyAttribute: the key column of an earlier join's table is a primary-key join
        on_key = not left_keyed and left.kind == TABLE and _source_key(left, left_expr)
        if not left_keyed and left.kind == TABLE and not on_key:
            foreign = _foreign_key_join(relation, left, right, criteria, prefix)
            _check_within(relation, left, right)
            return foreign
        if left_expr.result_type != right_expr.result_type:
            if left.kind == TABLE:  # ksqlDB's LogicalPlanner checks a table-table join's key types
                raise StatementError(f"Invalid join condition: types don't match. Got {criteria.typed_got}.")
            # others meet in JoinParamsFactory, on the keys the sides were re-keyed to
            raise StatementError(f"Invalid join. Key types differ: {left_expr.result_type} vs {right_expr.result_type}")
        # what ksqlDB checks as it builds the join: partition counts, WITHIN, the sides, the join type
        check_partitions(left.sources, right.sources)
        _check_within(relation, left, right)
        if on_key and left_expr not in left.equivalence:  # SchemaKTable.selectKey re-keys no table
            assert left.key is not None and isinstance(left_expr, e.ColumnRef)
            raise StatementError(messages.table_repartition([left.key[0]], [left_expr.name]))
        left_keyed = left_keyed or on_key
        check_windowed_keys(left.sources, right.sources, left_keyed, right_keyed)
        if stream_table and relation.kind == "RIGHT":  # JoinNode's StreamToTableJoiner knows no RIGHT
            raise StatementError(f"Invalid join type encountered: {_SHOWN_KIND[relation.kind]}")
        # a full outer join's columns may be null on either side: only its synthetic key is the key
        equivalence = frozenset() if relation.kind == "FULL" else _equivalence(left, right, left_expr, right_expr)
        equivalents = _viable(left, right, left_expr, right_expr, equivalence)
        synthetic = not equivalents
        if synthetic:
            key_name = _synthetic_key(left, right)
        elif on_key and left.key is not None:  # keyed as it is: the join's key keeps its name
            key_name = left.key[0]
        elif isinstance(left_expr, e.ColumnRef):
            key_name = left_expr.name
        elif isinstance(right_expr, e.ColumnRef):
            key_name = right_expr.name
        else:  # only an earlier join's criteria make a column equal to the key
            key_name = equivalents[0].prefixed
        check_no_map_keys([Column(key_name, right_expr.result_type, KEY)])
        left_step, right_step = left.step, right.step
        # Kafka Streams' join repartitions a re-keyed input under the join's name
        repartition = f"{prefix}Join"
        if not left_keyed:
            name = f"{repartition}-left" if stream_stream else repartition
            left_step = _rekeyed(left_step, f"{prefix}LeftSourceKeyed", key_name, left_expr, name)
        if not right_keyed:
            right_step = _rekeyed(right_step, f"{prefix}RightSourceKeyed", key_name, right_expr, f"{repartition}-right")
        join_type = PLAN_JOIN_TYPES[relation.kind]
        leftmost = left.sources[0][1]
        joined: dict[str, Any] = {
            "context": f"{prefix}Join",
            "left_source": left_step,
            "right_source": right_step,
            "join_type": join_type,
            "key_col_name": key_name,
        }
        step: s.ExecutionStep
        if stream_stream:
            assert relation.within is not None
            within = relation.within
            before, after = within.before_ms, within.after_ms
            if within.grace_ms is None:  # without GRACE PERIOD: no spurious-result fix (ksqlDB's JoinWindows.of)
                step = js.StreamStreamJoinV1(
                    **joined, before_ms=before, after_ms=after, internal_formats=leftmost.formats
                )
            else:
                step = js.StreamStreamJoinV2(
                    **joined,
                    before_ms=before,
                    after_ms=after,
                    grace_ms=within.grace_ms,
                    internal_formats=leftmost.formats,
                )
        elif stream_table:
            step = js.StreamTableJoinV1(**joined, internal_formats=leftmost.formats)
        else:
            step = js.TableTableJoinV1(**joined)
        if isinstance(step, js.StreamStreamJoinV2) and leftmost.formats.window is not None:
            raise UnsupportedFeatureError("joining windowed sources with a GRACE PERIOD")
        # an input's synthetic key is no source column: once re-keyed, `*` no longer lists it
        dropped = {side.key[0] for side in (left, right) if side.synthetic_key and side.key is not None}
        listed = [c for c in (*left.star, *right.star) if c[0] != key_name and c[0] not in dropped]
        star = [(key_name, right_expr.result_type), *listed]
        return Joined(
            step=step,
            kind=left.kind,
            key=(key_name, right_expr.result_type),
            columns=left.columns + right.columns,
            star=tuple(star),
            equivalents=equivalents,
            equivalence=equivalence,
            sources=left.sources + right.sources,
            repartitioned=left.repartitioned or not left_keyed or not right_keyed,
            synthetic_key=synthetic,
        )

    def _criteria(self, relation: ast.Join, left: Joined, right: Joined) -> _Criteria:
        """The join's left and right expressions, and the criteria as ksqlDB's messages show them."""
        on = relation.on
        # ksqlDB's analyzer: an AND or OR of two equalities is a multi-column join; others are unsupported
        if isinstance(on, (ast.And, ast.Or)) and all(_equality(side) for side in (on.left, on.right)):
            msg = f"Invalid join condition: joins on multiple conditions are not yet supported. Got {format_expr(on)}."
            raise StatementError(msg)
        if not isinstance(on, (ast.Comparison, ast.DistinctFrom)):  # IS DISTINCT FROM is a comparison too
            raise StatementError(f"Unsupported join expression: {format_expr(on)}")
        if not isinstance(on, ast.Comparison) or on.op != "=":
            raise StatementError("Only equality join criteria is supported.")
        both = _combined(left, right)
        scope = both.scope()
        for node in (on.left, on.right):
            for ref in _column_refs(node):
                if ref.source is not None and ref.source not in scope.sources:
                    msg = f"Failed to prepare statement: '{ref.source}' is not a valid stream/table name or alias."
                    raise StatementError(msg)
        analyzer = Analyzer(scope, "JOIN ON")
        typed = [analyzer(on.left), analyzer(on.right)]
        owners = [_owners(x, both) for x in typed]
        for node, found in zip((on.left, on.right), owners, strict=True):
            if len(found) != 1:
                msg = (
                    f"Invalid comparison expression '{format_expr(node)}' in join '{format_expr(on)}'. "
                    "Each side of the join comparision must contain references from exactly one source."
                )
                raise StatementError(msg)
        first, second = owners[0][0], owners[1][0]
        if first == second:
            msg = (
                "Each side of the join must reference exactly one source and not the same source. "
                f"Left side references `{first}` and right references `{second}`"
            )
            raise StatementError(msg)
        right_name = right.shown
        if right_name not in (first, second):
            msg = (
                f"A join criteria is expected to reference the source (`{right_name}`) in the FROM clause, "
                f"instead the right source references `{second}` and the left source references `{first}`"
            )
            raise StatementError(msg)
        shown = [_shown(node, x, both) for node, x in zip((on.left, on.right), typed, strict=True)]
        got = " = ".join(shown)
        typed_got = " = ".join(f"{text}{{{x.result_type}}}" for text, x in zip(shown, typed, strict=True))
        if first == right_name:
            typed.reverse()
        named = dict(both.sources)
        left_name = named[second if first == right_name else first].name
        return _Criteria(typed[0], typed[1], got, typed_got, left_name, named[right_name].name, (first, second))


def _check_within(relation: ast.Join, left: Joined, right: Joined) -> None:
    """A stream-stream join needs WITHIN, the others refuse it (checked as ksqlDB builds the join)."""
    if left.kind == STREAM and right.kind == STREAM:
        if relation.within is None:
            raise StatementError(messages.WITHIN_MISSING)
        # Kafka Streams' JoinWindows, which ksqlDB builds of the before size, then sets the after
        before, after, grace = relation.within.before_ms, relation.within.after_ms, relation.within.grace_ms
        interval = "Window interval (ie, beforeMs+afterMs) must not be negative."
        if before < 0:  # the windows of the before size: before + before
            raise StatementError(interval)
        if grace is not None and grace < 0:
            raise StatementError("Grace period must not be negative.")
        if before + after < 0:
            raise StatementError(interval)
        return
    if relation.within is not None:
        raise StatementError(messages.WITHIN_TABLE_TABLE if left.kind == TABLE else messages.WITHIN_STREAM_TABLE)


@dataclass(frozen=True)
class _Criteria:
    """A join's criteria: its left and right side's expressions, and as ksqlDB's messages show it."""

    left: e.Expression
    right: e.Expression
    got: str
    typed_got: str
    #: the names (not aliases) of the sources the left and right expressions read, as ksqlDB's
    #: messages about join kinds show them (``JoinInfo.getLeftSource().getDataSource().getName()``)
    left_source: str = ""
    right_source: str = ""
    #: the qualifiers of the sources the criteria's sides read, as written
    written: tuple[str, str] = ("", "")

    def shown(self, kind: str) -> str:
        return f"{self.left_source} {_SHOWN_KIND[kind]} {self.right_source}"


def _foreign_key_join(relation: ast.Join, left: Joined, right: Joined, criteria: _Criteria, prefix: str) -> Joined:
    """A table joined on a non-key expression of its own with the right table's key (ksqlDB's
    ``verifyForeignKeyJoin``): keyed by the left table's key, never re-keyed."""
    shown = criteria.shown(relation.kind)
    if relation.kind == "FULL":
        msg = f"Invalid join type: full-outer join not supported for foreign-key table-table join. Got {shown}."
        raise StatementError(msg)
    if len(left.sources) > 1:
        msg = (
            "Invalid join condition: foreign-key table-table joins are not supported as part of n-way joins. "
            f"Got {criteria.got}."
        )
        raise StatementError(msg)
    if criteria.left.result_type != criteria.right.result_type:
        raise StatementError(f"Invalid join condition: types don't match. Got {criteria.typed_got}.")
    if right.sources[0][1].formats.window is not None:
        raise StatementError("Foreign-key table-table joins are not supported on windowed tables.")
    if relation.kind == "RIGHT":
        raise StatementError("RIGHT OUTER JOIN on a foreign key is not supported")
    keys = left.keys
    key_name = keys[0][0]
    step = js.ForeignKeyTableTableJoinV1(
        context=f"{prefix}Join",
        left_source=left.step,
        right_source=right.step,
        join_type=PLAN_JOIN_TYPES[relation.kind],
        key_col_name=key_name,
        left_join_expression=criteria.left,
        internal_formats=left.sources[0][1].formats,
    )
    return Joined(
        step=step,
        kind=TABLE,
        key=keys[0],
        columns=left.columns + right.columns,
        star=(*keys, *[c for c in (*left.star, *right.star) if c not in keys]),
        equivalents=(),
        sources=left.sources + right.sources,
        foreign_key=True,
        keys=keys,
    )


def _rekeyed(
    step: s.ExecutionStep, context: str, key_name: str, expr: e.Expression, repartition: str
) -> s.ExecutionStep:
    """A stream side re-keyed by its join expression (ksqlDB's ``PreJoinRepartitionNode``),
    through the repartition topic named ``repartition``."""
    return s.StreamSelectKeyV2(
        context=context,
        source=step,
        key_expressions=(s.SelectExpression(alias=key_name, expression=expr),),
        repartition_name=repartition,
    )


def _combined(left: Joined, right: Joined) -> Joined:
    """Both inputs' columns and sources, for checking criteria (no key, no step of its own)."""
    return Joined(
        step=left.step,
        kind=left.kind,
        key=None,
        columns=left.columns + right.columns,
        star=(),
        equivalents=(),
        sources=left.sources + right.sources,
    )


def _synthetic_key(left: Joined, right: Joined) -> str:
    """ksqlDB's ``generateSyntheticJoinKey``: ``ROWKEY``, or ``ROWKEY_n`` with the first ``n`` no
    source column takes, a column ``ROWKEY_0`` taking ``ROWKEY`` as well (an earlier join's
    synthetic key does not count)."""
    return ColumnAliasGenerator([[c.name for c in (*left.columns, *right.columns)]]).next_named(SYNTHETIC_KEY)


def _source_key(joined: Joined, expr: e.Expression) -> bool:
    """Whether ``expr``, over a join's result, is the one key column of the source it reads."""
    column = _by_prefixed(joined).get(expr.name) if isinstance(expr, e.ColumnRef) else None
    if column is None or len(joined.sources) < 2:
        return False
    key = dict(joined.sources)[column.qualifier].schema.key
    return len(key) == 1 and key[0].name == column.name


def _several_key_source(joined: Joined, expr: e.Expression) -> bool:
    """Whether ``expr``, over a join's result, is a column of a source keyed by several columns."""
    column = _by_prefixed(joined).get(expr.name) if isinstance(expr, e.ColumnRef) else None
    if column is None or len(joined.sources) < 2:
        return False
    return len(dict(joined.sources)[column.qualifier].schema.key) > 1


def _equality(node: ast.Expr) -> bool:
    return isinstance(node, ast.Comparison) and node.op == "="


def _column_refs(node: object) -> list[ast.ColumnRef]:
    return [x for x in iter_nodes(node) if isinstance(x, ast.ColumnRef)]


def _by_prefixed(joined: Joined) -> dict[str, JoinColumn]:
    return {c.prefixed: c for c in joined.columns}


def _owners(expr: e.Expression, joined: Joined) -> list[str]:
    """The qualifiers of the sources ``expr`` reads, in order of first reference."""
    by_name = _by_prefixed(joined)
    out: list[str] = []
    for ref in e.walk(expr):
        if isinstance(ref, e.ColumnRef) and ref.name in by_name and by_name[ref.name].qualifier not in out:
            out.append(by_name[ref.name].qualifier)
    return out


def _shown(node: ast.Expr, expr: e.Expression, joined: Joined) -> str:
    """A join expression as ksqlDB's messages show it: ``T.ID`` for a column."""
    if isinstance(expr, e.ColumnRef):
        column = _by_prefixed(joined).get(expr.name)
        if column is not None:
            return column.shown
    return format_expr(node)


def _equivalence(
    left: Joined, right: Joined, left_expr: e.Expression, right_expr: e.Expression
) -> frozenset[e.Expression]:
    """The expressions equal to an inner or left join's key: its two join expressions, and each
    input's equivalence set that holds one of them (ksqlDB's ``JoinTree``)."""
    keys = frozenset({left_expr, right_expr})
    out = set(keys)
    for side in (left, right):
        if side.equivalence & keys:
            out |= side.equivalence
    return frozenset(out)


def _viable(
    left: Joined,
    right: Joined,
    left_expr: e.Expression,
    right_expr: e.Expression,
    equivalence: frozenset[e.Expression],
) -> tuple[JoinColumn, ...]:
    """The columns that may stand for the key in the projection, in ksqlDB's order: the left
    input's, the left expression, the right input's, the right expression."""
    by_name = {**_by_prefixed(left), **_by_prefixed(right)}

    def column(expr: e.Expression) -> list[JoinColumn]:
        return [by_name[expr.name]] if isinstance(expr, e.ColumnRef) and expr.name in by_name else []

    candidates = [*left.equivalents, *column(left_expr), *right.equivalents, *column(right_expr)]
    viable = [c for c in candidates if e.ColumnRef(name=c.prefixed, sql_type=c.type) in equivalence]
    return tuple(dict.fromkeys(viable))


def or_join(items: Sequence[str]) -> str:
    """``A``, ``A or B``, ``A, B or C``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]
