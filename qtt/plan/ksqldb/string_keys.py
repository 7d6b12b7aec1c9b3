"""Several grouping expressions in one STRING key: ksqlDB's group-by before multi-column keys.

Until multi-column keys (ksqlDB 0.15; plans written by 5.5 to 6.2), ``streamGroupByV1`` and
``tableGroupByV1`` over several expressions keyed each row by one STRING column
(``GroupByParamsV1Factory.MultiExpressionGrouper``): the values' Java text
(``StringBuilder.append``) joined with ``|+|``, a separator written only after a non-empty
text (an empty first string leaves none); a row with a null value, or one that fails, is
dropped. The key is named as ksqlDB recorded it, else ``ROWKEY`` before 0.10 and the next free
``KSQL_COL_<i>`` after.

qtt computes that key with CAST (Java's text of BOOLEAN, INTEGER, BIGINT, DOUBLE and STRING)
and CONCAT. ksqlDB's aggregate also copies the grouping columns into its value, which its
projection reads; qtt's aggregate carries only keys and aggregates, so the grouping values are
further key columns of qtt's group-by, *hidden*: the aggregate's projection drops them. They
make the same groups as the STRING key when no two value tuples print the same key: at most
one of the values may be a STRING (two may print alike: ``'a|+|b', 'c'`` and ``'a', 'b|+|c'``).
Other types, and two STRING values, do not translate.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from qtt import sqltypes as t
from qtt.plan.ir import expressions as e
from qtt.plan.ir import steps as s
from qtt.plan.ksqldb import fields
from qtt.plan.ksqldb.context import StepContext, Untranslatable, query_context

SEPARATOR = "|+|"
#: the types whose CAST to STRING is the Java text ksqlDB's StringBuilder appended
_PRINTED_AS_CAST = (t.BOOLEAN, t.INTEGER, t.BIGINT, t.DOUBLE, t.STRING)
_ROWKEY = "ROWKEY"
#: functions whose every call may differ: a grouping value that calls one does not translate
_EVERY_CALL_DIFFERS = frozenset({"RANDOM", "UUID"})
_NOW = frozenset({"UNIX_TIMESTAMP", "UNIX_DATE"})


def joined_key(step_type: str, expressions: Sequence[e.Expression]) -> e.Expression:
    """The STRING key ksqlDB made of ``expressions``' values; null when one of them is."""
    for x in expressions:
        if x.result_type not in _PRINTED_AS_CAST:
            raise Untranslatable(
                step_type,
                f"a {x.result_type} grouping value in one STRING key (ksqlDB before 0.15): "
                "qtt has no expression that prints it as Java's toString",
            )
    for node in (n for x in expressions for n in e.walk(x)):
        if isinstance(node, e.Call) and (node.name in _EVERY_CALL_DIFFERS or (node.name in _NOW and not node.args)):
            # qtt's key evaluates each value more than once (null test, text, hidden key); ksqlDB's once
            raise Untranslatable(step_type, f"a grouping value of {node.name}() in one STRING key (ksqlDB before 0.15)")
    if sum(x.result_type == t.STRING for x in expressions) > 1:
        raise Untranslatable(
            step_type,
            "several STRING grouping values in one STRING key (ksqlDB before 0.15): two groups may print one key",
        )
    texts = [x if x.result_type == t.STRING else e.Cast(operand=x, sql_type=t.STRING) for x in expressions]
    parts: list[e.Expression] = [texts[0]]
    # when the key so far may be empty (only strings before), the condition that it is not
    written: e.Expression | None = _non_empty(texts[0]) if expressions[0].result_type == t.STRING else None
    for x, text in zip(expressions[1:], texts[1:], strict=True):
        separator = e.Literal(value=SEPARATOR, sql_type=t.STRING)
        if written is not None:
            empty = e.Literal(value="", sql_type=t.STRING)
            parts.append(e.Case(whens=(e.When(condition=written, result=separator),), default=empty, sql_type=t.STRING))
            written = e.Or(left=written, right=_non_empty(text)) if x.result_type == t.STRING else None
        else:
            parts.append(separator)
        parts.append(text)
    joined = e.Call(name="CONCAT", args=tuple(parts), sql_type=t.STRING)
    nulls: list[e.Expression] = [e.IsNull(operand=x, negated=False) for x in expressions]
    any_null = functools.reduce(lambda left, right: e.Or(left=left, right=right), nulls)
    null = e.Literal(value=None, sql_type=t.STRING)
    return e.Case(whens=(e.When(condition=any_null, result=null),), default=joined, sql_type=t.STRING)


def _non_empty(text: e.Expression) -> e.Expression:
    return e.Comparison(op="<>", left=text, right=e.Literal(value="", sql_type=t.STRING))


def key_name(context: StepContext, raw: Mapping[str, Any], taken: Collection[str], *, rowkey_era: bool) -> str:
    """The STRING key's name: as ksqlDB recorded it, else as it named it."""
    recorded = context.recorded_schema(query_context(raw))
    if recorded is not None:
        keys = fields.schema(recorded).key
        if len(keys) == 1:
            return keys[0].name
    if rowkey_era:
        return _ROWKEY
    return _free("KSQL_COL_", taken, start=0)


def hidden_groups(
    step_type: str, expressions: Sequence[e.Expression], key: str, taken: Collection[str]
) -> tuple[s.SelectExpression, ...]:
    """The grouping values as further key columns: a column under its name, another expression
    under a free name; a literal groups nothing."""
    groups: list[s.SelectExpression] = []
    names = {key}
    for x in expressions:
        if isinstance(x, e.Literal) or any(g.expression == x for g in groups):
            continue
        if isinstance(x, e.ColumnRef):
            if x.name in names:
                raise Untranslatable(step_type, f"a grouping column {x.name} named like the STRING key")
            name = x.name
        else:
            name = _free("KSQL_GROUPING_", {*taken, *names}, start=len(groups))
        names.add(name)
        groups.append(s.SelectExpression(alias=name, expression=x))
    return tuple(groups)


def _free(prefix: str, taken: Collection[str], *, start: int) -> str:
    index = start
    while f"{prefix}{index}" in taken:
        index += 1
    return f"{prefix}{index}"
