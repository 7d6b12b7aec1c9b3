"""ksqlDB's longer error texts, word for word, and how they print names and lists.

Case files match on these texts, so each is written once, here, and the planners only pick
which one to raise.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from qtt import sqltypes as t
from qtt.plan.ir.schema import KEY, Column, LogicalSchema
from qtt.sql import ast
from qtt.sql.formatter import format_expr, format_plain
from qtt.sql.references import rewrite_column_refs

#: the join messages ksqlDB gives as it builds a join (``JoinNode``'s joiners)
WITHIN_MISSING = (
    "Stream-Stream joins must have a WITHIN clause specified. None was provided. To learn about how to specify "
    "a WITHIN clause with a stream-stream join, please visit: "
    "https://docs.confluent.io/current/ksql/docs/syntax-reference.html#create-stream-as-select"
)
WITHIN_STREAM_TABLE = (
    "A window definition was provided for a Stream-Table join. These joins are not windowed. "
    "Please drop the window definition (ie. the WITHIN clause) and try to execute your join again."
)
WITHIN_TABLE_TABLE = (
    "A window definition was provided for a Table-Table join. These joins are not windowed. Please drop the "
    "window definition (i.e. the WITHIN clause) and try to execute your Table-Table join again."
)

_KEY_RULES = (
    "\nTables have PRIMARY KEYs, which are unique and NON NULL."
    "\nStreams have KEYs, which have no uniqueness or NON NULL constraints."
)


def and_join(items: Sequence[str]) -> str:
    """ksqlDB's GrammaticalJoiner.and(): ``A``, ``A and B``, ``A, B and C``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def column_name_sql(name: str) -> str:
    """A column name as ksqlDB prints it: bare when it needs no quoting, else backquoted."""
    return format_expr(ast.ColumnRef(name=name, source=None))


def qualified_sql(node: ast.Expr, source: str) -> str:
    """``node`` as SQL with bare column references qualified by ``source``, as ksqlDB prints it."""
    return format_expr(rewrite_column_refs(node, lambda ref: replace(ref, source=ref.source or source)))


def unqualified_sql(node: ast.Expr) -> str:
    """``node`` as SQL with every column reference bare (ksqlDB's rewrite of a single source's
    expressions)."""
    return format_expr(rewrite_column_refs(node, lambda ref: replace(ref, source=None)))


def wrong_key_constraint(column: str, *, stream: bool) -> str:
    """A stream column declared ``PRIMARY KEY``, or a table column declared ``KEY``."""
    if stream:
        return f"Column {t.quote(column)} is a 'PRIMARY KEY' column: please use 'KEY' for streams.{_KEY_RULES}"
    return f"Column {t.quote(column)} is a 'KEY' column: please use 'PRIMARY KEY' for tables.{_KEY_RULES}"


def map_in_key(column: Column) -> str:
    """A key column whose type is or contains a MAP."""
    return (
        "Map keys, including types that contain maps, are not supported as they may lead to unexpected "
        f"behavior due to inconsistent serialization. Key column name: {t.quote(column.name)}. "
        f"Column type: {column.type}. See https://github.com/confluentinc/ksql/issues/6621 for more."
    )


def schemas_do_not_match(physical: LogicalSchema, key_names: Collection[str]) -> str:
    """A projection whose value column is named like a key column: the sink's (logical) schema
    leaves that value out, the query's select step (physical) keeps it (PhysicalPlanBuilder)."""
    logical = LogicalSchema(tuple(c for c in physical.columns if c.namespace == KEY or c.name not in key_names))
    return f"Logical and Physical schemas do not match!\nLogical : {logical}\nPhysical: {physical}"


def key_selected_twice(key: str, aliases: Sequence[str]) -> str:
    """A stateless query selects one key column under several names."""
    return (
        f"The projection contains a key column ({t.quote(key)}) more than once, aliased as: "
        f"{and_join(sorted(aliases))}.\nEach key column must only be in the projection once. "
        "If you intended to copy the key into the value, then consider using the AS_VALUE "
        "function to indicate which key reference should be copied."
    )


def key_missing_from_projection(sink: str, noun: str, shown: Sequence[str], *, plural_key: bool = True) -> str:
    """The projection lacks a key: ``noun`` (singular) names what it lacks, ``shown`` lists them.

    ksqlDB writes ``Keys missing`` for several keys of a stateless query, but always ``Key
    missing`` for an aggregation (``plural_key=False``).
    """
    several = len(shown) > 1
    return (
        f"Key{'s' if several and plural_key else ''} missing from projection (ie, SELECT). \n"
        f"The query used to build {t.quote(sink)} must include the {noun}{'s' if several else ''} "
        f"{and_join(shown)} in its projection (eg, SELECT {', '.join(shown)}...)."
    )


def non_aggregate_select(shown: Sequence[str]) -> str:
    """SELECT expressions of an aggregation that are neither grouped nor aggregated."""
    return (
        f"Non-aggregate SELECT expression(s) not part of GROUP BY: {', '.join(shown)}\n"
        "Either add the column(s) to the GROUP BY or remove them from the SELECT."
    )


def non_aggregate_having(names: Sequence[str]) -> str:
    """Columns a HAVING clause reads that are neither grouped nor aggregated."""
    return (
        f"Non-aggregate HAVING expression not part of GROUP BY: {', '.join(column_name_sql(n) for n in names)}\n"
        "Consider switching the HAVING clause to a WHERE clause before the GROUP BY."
    )


def table_aggregates_without_group_by(shown: Sequence[str]) -> str:
    """A CREATE TABLE AS SELECT that aggregates without GROUP BY."""
    return (
        f"CREATE TABLE AS SELECT statement does not support aggregate function [{', '.join(shown)}] "
        "without a GROUP BY clause."
    )


def table_repartition(key: Sequence[str], partition: Sequence[str]) -> str:
    """PARTITION BY a table on anything but its key columns, in order (ksqlDB's
    SchemaKTable.selectKey: ``partition`` printed as a Java list)."""
    if len(key) > 1:
        return (
            "Cannot repartition a TABLE source. If this is a join, joins on tables with multiple columns "
            "is not yet supported."
        )
    return (
        "Cannot repartition a TABLE source. If this is a join, make sure that the criteria uses the "
        f"TABLE's key column {key[0]} instead of [{', '.join(partition)}]"
    )


def partition_by_unresolved(name: str) -> str:
    """PARTITION BY reads a column its source does not have."""
    return (
        f"PARTITION BY column '{name}' cannot be resolved. '{name}' must be a column in the "
        "source schema since PARTITION BY is applied on the input."
    )


def insert_values_unknown_target(name: str, alternative: str | None) -> str:
    """INSERT VALUES into a source that does not exist; ``alternative`` differs only in case."""
    msg = f"Cannot insert values into an unknown stream/table: {t.quote(name)}"
    if alternative is None or alternative == name:
        return msg
    if name == name.upper():
        return (
            msg + f'\nDid you mean "{alternative}"? Hint: wrap the source name in double quotes to make '
            "it case-sensitive."
        )
    return msg + f"\nDid you mean {alternative}? Hint: try removing double quotes from the source name."


def unknown_source(name: str) -> str:
    """ksqlDB's message for a FROM or JOIN source that does not exist: it resolves sources while
    preparing the statement, so the message carries the engine's prefix for that stage."""
    return f"Exception while preparing statement: {name} does not exist."


def not_subscriptable(node: ast.Subscript, type_: t.SqlType) -> str:
    """ksqlDB's ExpressionTypeManager on a subscript of anything but an array or a map."""
    msg = f"Subscript expression ({format_plain(node)}) do not apply to {type_}."
    if isinstance(type_, t.Struct):
        msg += f" Use the dereference operator for STRUCTS: {format_plain(node.base)}->{format_plain(node.index)}"
    return msg


_KAFKA_VALUE_FORMAT_DETAILS = (
    "The KAFKA format is primarily intended for use as a key format. It can be used as a value format, but can "
    "not be used in any operation that requires a repartition or changelog topic.\n"
    "Removing this limitation requires enhancements to the core of KSQL. This will come in a future release. "
    "Until then, avoid using the KAFKA format for values.\n"
    "If you have an existing topic with KAFKA formatted values you can duplicate the data and serialize using "
    "Avro or JSON with a statement such as: \n\n"
    "'CREATE STREAM <new-stream-name> WITH(VALUE_FORMAT='Avro') AS SELECT * FROM "
    "<existing-kafka-formated-stream-name>;'\n"
    "For more info see https://github.com/confluentinc/ksql/issues/3060"
)


def kafka_value_format(sources: Sequence[str], operation: str) -> str:
    """ksqlDB's Analyzer on a GROUP BY or JOIN over sources whose values are in the KAFKA format."""
    return (
        f"Source(s) {', '.join(sources)} are using the 'KAFKA' value format. This format does not yet support "
        f"{operation}.\n{_KAFKA_VALUE_FORMAT_DETAILS}"
    )


#: what ksqlDB's code generator calls each clause in the errors it finds compiling one
#: (``CodeGenRunner``: ``Invalid <type>: <reason>.``)
_CODEGEN_TYPES = {
    "SELECT": "Select",
    "WHERE": "Predicate",
    "HAVING": "Predicate",
    "PARTITION BY": "SelectKey",
    "GROUP BY": "Group By",
}


def codegen_error(clause: str, reason: str) -> str:
    """``reason`` as ksqlDB's code generator reports it for an expression of ``clause``."""
    kind = _CODEGEN_TYPES.get(clause)
    return f"Invalid {kind}: {reason}." if kind else reason


def null_comparison(left: t.SqlType, op: str, right: t.SqlType) -> str:
    """ksqlDB's ComparisonUtil on a comparison with a bare NULL: it names the base types
    (``INTEGER = NULL``), not the operands."""
    hint = "Use 'IS NULL' or 'IS NOT NULL' instead."
    return f"Comparison with NULL not supported: {left.base} {op} {right.base}\n{hint}"


def null_arithmetic(node: ast.Arithmetic, left: t.SqlType, right: t.SqlType) -> str:
    """ksqlDB's Operator on arithmetic with a bare NULL, which has no type (Java prints it ``null``)."""
    shown = ["null" if x.base == "NULL" else str(x) for x in (left, right)]
    return (
        f"Error processing expression: {format_plain(node)}. "
        f"Arithmetic on types {shown[0]} and {shown[1]} are not supported."
    )


#: ksqlDB's names of the comparison operators (``ComparisonExpression.Type``)
_COMPARISON_NAMES = {
    "=": "EQUAL",
    "<>": "NOT_EQUAL",
    "IS DISTINCT FROM": "IS_DISTINCT_FROM",
    "<": "LESS_THAN",
    "<=": "LESS_THAN_OR_EQUAL",
    ">": "GREATER_THAN",
    ">=": "GREATER_THAN_OR_EQUAL",
}


def cannot_compare(left: ast.Expr, left_type: t.SqlType, right: ast.Expr, right_type: t.SqlType, op: str) -> str:
    """ksqlDB's ExpressionTypeManager on a comparison ComparisonUtil refuses."""
    return (
        f"Cannot compare {format_plain(left)} ({left_type}) to {format_plain(right)} "
        f"({right_type}) with {_COMPARISON_NAMES.get(op, op)}."
    )


def not_boolean(clause: str, node: ast.Expr, type_: t.SqlType) -> str:
    """A condition that is not BOOLEAN (ksqlDB's ``FilterTypeValidator`` in WHERE and HAVING)."""
    where = f"{clause} expression" if clause in ("WHERE", "HAVING") else clause
    return f"Type error in {where}: Should evaluate to boolean but is {format_plain(node)} ({type_}) instead."
