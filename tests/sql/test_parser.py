"""The parser: statements, expressions, identifier case rules, types and syntax errors."""

from __future__ import annotations

import re

import pytest

from qtt import sqltypes as t
from qtt.errors import SqlSyntaxError, StatementError
from qtt.sql import ast, parse_expression, parse_schema, parse_statements, parse_type

# ---------------------------------------------------------------------------- statements


def test_test_statements_of_ksqldbs_sql_tests() -> None:
    values, tombstone, source, script = parse_statements(
        "ASSERT VALUES b (rowtime, id, v) VALUES (1, -2, 'x');\n"
        "ASSERT NULL VALUES b (id) KEY (2);\n"
        "ASSERT TABLE b (id INT PRIMARY KEY, v STRING) WITH (kafka_topic='B', value_format='JSON');\n"
        "RUN SCRIPT '/more.sql';"
    )
    assert isinstance(values, ast.AssertValues)
    assert (values.source, values.columns) == ("B", ("ROWTIME", "ID", "V"))
    assert values.values == (ast.IntegerLiteral(value=1), ast.IntegerLiteral(value=-2), ast.StringLiteral(value="x"))
    assert isinstance(tombstone, ast.AssertTombstone) and tombstone.key == (ast.IntegerLiteral(value=2),)
    assert isinstance(source, ast.AssertSource) and source.kind == "TABLE"
    assert [e.constraint for e in source.elements] == ["PRIMARY KEY", None]
    assert source.properties == {"KAFKA_TOPIC": "B", "VALUE_FORMAT": "JSON"}
    assert isinstance(script, ast.RunScript) and script.path == "/more.sql"


def test_assert_run_and_script_stay_usable_as_names() -> None:
    (statement,) = parse_statements(
        "CREATE STREAM run (script INT KEY, assert INT) WITH (kafka_topic='r', value_format='JSON');"
    )
    assert isinstance(statement, ast.CreateSource)
    assert [e.name for e in statement.elements] == ["SCRIPT", "ASSERT"]


def test_create_stream_with_columns_and_properties() -> None:
    (statement,) = parse_statements(
        "CREATE STREAM s (id STRING KEY, `v` INT) WITH (kafka_topic='t', value_format='JSON');"
    )
    assert isinstance(statement, ast.CreateSource)
    assert statement.kind == "STREAM"
    assert statement.name == "S"
    assert [(e.name, e.type, e.constraint) for e in statement.elements] == [
        ("ID", t.STRING, "KEY"),
        ("v", t.INTEGER, None),
    ]
    assert statement.properties == {"KAFKA_TOPIC": "t", "VALUE_FORMAT": "JSON"}


def test_create_as_select_with_clauses() -> None:
    (statement,) = parse_statements(
        "CREATE STREAM out AS SELECT a, b AS c, * FROM src s WHERE a > 1 PARTITION BY b EMIT CHANGES;"
    )
    assert isinstance(statement, ast.CreateAsSelect)
    query = statement.query
    assert [type(i).__name__ for i in query.select] == [
        "SingleColumn",
        "SingleColumn",
        "AllColumns",
    ]
    assert query.select[1] == ast.SingleColumn(expr=ast.ColumnRef(name="B"), alias="C")
    assert query.from_ == ast.Table(name="SRC", alias="S")
    assert query.where == ast.Comparison(op=">", left=ast.ColumnRef(name="A"), right=ast.IntegerLiteral(value=1))
    assert query.partition_by == (ast.ColumnRef(name="B"),)
    assert query.emit == "CHANGES"


def test_several_statements_keep_their_own_text() -> None:
    statements = parse_statements("CREATE STREAM a (x INT) WITH (kafka_topic='a');\nDROP STREAM a;")
    assert [s.text for s in statements] == [
        "CREATE STREAM a (x INT) WITH (kafka_topic='a')",
        "DROP STREAM a",
    ]


# ---------------------------------------------------------------------------- identifiers


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("abc", "ABC"),
        ("aBc", "ABC"),
        ("`aBc`", "aBc"),
        ('"aBc"', "aBc"),
        ("`a``b`", "a`b"),
        ("1R", "1R"),
    ],
)
def test_unquoted_names_are_upper_cased_and_quoted_ones_kept(text: str, name: str) -> None:
    assert parse_expression(text) == ast.ColumnRef(name=name)


def test_non_reserved_keywords_are_identifiers() -> None:
    assert parse_expression("key + size") == ast.Arithmetic(
        op="+", left=ast.ColumnRef(name="KEY"), right=ast.ColumnRef(name="SIZE")
    )


def test_qualified_column_and_dereference() -> None:
    assert parse_expression("s.a->b") == ast.Dereference(base=ast.ColumnRef(name="A", source="S"), field="B")


# ---------------------------------------------------------------------------- expressions


def test_precedence_of_arithmetic_comparison_and_logic() -> None:
    expr = parse_expression("NOT a + 2 * 3 > 4 AND b OR c")
    assert isinstance(expr, ast.Or)
    assert isinstance(expr.left, ast.And)
    assert isinstance(expr.left.left, ast.Not)
    comparison = expr.left.left.operand
    assert isinstance(comparison, ast.Comparison)
    assert comparison.left == ast.Arithmetic(
        op="+",
        left=ast.ColumnRef(name="A"),
        right=ast.Arithmetic(op="*", left=ast.IntegerLiteral(value=2), right=ast.IntegerLiteral(value=3)),
    )


@pytest.mark.parametrize(
    ("text", "node"),
    [
        ("42", ast.IntegerLiteral(value=42)),
        ("-42", ast.IntegerLiteral(value=-42)),
        ("1.50", ast.DecimalLiteral(text="1.50")),
        ("-1.5", ast.DecimalLiteral(text="-1.5")),
        ("1.5E3", ast.DoubleLiteral(text="1.5E3")),
        ("'it''s'", ast.StringLiteral(value="it's")),
        ("TRUE", ast.BooleanLiteral(value=True)),
        ("null", ast.NullLiteral()),
        # a minus touching the number is part of the literal; before parentheses it is an operator
        ("- 42", ast.IntegerLiteral(value=-42)),
        ("-(42)", ast.Negate(operand=ast.IntegerLiteral(value=42))),
        ("+42", ast.UnaryPlus(operand=ast.IntegerLiteral(value=42))),
        # the longest token wins, the number on a tie (ksqlDB's lexer)
        ("4e2", ast.DoubleLiteral(text="4e2")),
        ("4e2x", ast.ColumnRef(name="4E2X")),
    ],
)
def test_literals(text: str, node: ast.Expr) -> None:
    assert parse_expression(text) == node


def test_a_type_followed_by_array_is_an_array_of_it() -> None:
    assert parse_type("INT ARRAY ARRAY") == t.Array(t.Array(t.INTEGER))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("CREATE STREAM o AS SELECT * FROM s LIMIT 1.5;", "Value must be integer for command: LIMIT"),
        ("CREATE STREAM s (d DECIMAL(2.5, 1)) WITH (kafka_topic='s');", "command: DECIMAL(PRECISION)"),
        ("CREATE STREAM s (d DECIMAL(2, 1E0)) WITH (kafka_topic='s');", "command: DECIMAL(SCALE)"),
        # source names and aliases, as ParserUtil.getSourceName checks them while parsing
        ("CREATE STREAM o AS SELECT * FROM s AS `a b`;", "Illegal argument at Line: 1, Col: 39."),
        ('CREATE STREAM o AS SELECT * FROM s "a""b";', "Illegal argument at Line: 1, Col: 36."),
        ("DROP TABLE IF EXISTS\n  `a b`;", "Illegal argument at Line: 2, Col: 3."),
    ],
)
def test_what_ksqldb_refuses_while_it_builds_the_statement(text: str, message: str) -> None:
    with pytest.raises(SqlSyntaxError, match=re.escape(message)):
        parse_statements(text)


def test_predicates() -> None:
    assert parse_expression("a NOT BETWEEN 1 AND 2") == ast.Between(
        value=ast.ColumnRef(name="A"),
        low=ast.IntegerLiteral(value=1),
        high=ast.IntegerLiteral(value=2),
        negated=True,
    )
    assert parse_expression("a IN (1, 2)") == ast.InList(
        value=ast.ColumnRef(name="A"),
        items=(ast.IntegerLiteral(value=1), ast.IntegerLiteral(value=2)),
    )
    assert parse_expression("a LIKE 'x!%' ESCAPE '!'") == ast.Like(
        value=ast.ColumnRef(name="A"), pattern=ast.StringLiteral(value="x!%"), escape="!"
    )
    assert parse_expression("a IS NOT NULL") == ast.IsNull(operand=ast.ColumnRef(name="A"), negated=True)
    assert parse_expression("a IS NOT DISTINCT FROM b") == ast.DistinctFrom(
        left=ast.ColumnRef(name="A"), right=ast.ColumnRef(name="B"), negated=True
    )
    assert parse_expression("a != b") == ast.Comparison(
        op="<>", left=ast.ColumnRef(name="A"), right=ast.ColumnRef(name="B")
    )


def test_constructors_subscripts_and_calls() -> None:
    assert parse_expression("ARRAY[1, 2][1]") == ast.Subscript(
        base=ast.CreateArray(items=(ast.IntegerLiteral(value=1), ast.IntegerLiteral(value=2))),
        index=ast.IntegerLiteral(value=1),
    )
    assert parse_expression("MAP('a' := 1)") == ast.CreateMap(
        entries=((ast.StringLiteral(value="a"), ast.IntegerLiteral(value=1)),)
    )
    assert parse_expression("STRUCT(f := 1)") == ast.CreateStruct(fields=(("F", ast.IntegerLiteral(value=1)),))
    assert parse_expression("count(*)") == ast.FunctionCall(name="COUNT", star=True)
    assert parse_expression("round(x, 2)") == ast.FunctionCall(
        name="ROUND", args=(ast.ColumnRef(name="X"), ast.IntegerLiteral(value=2))
    )
    assert parse_expression("transform(a, x => x + 1)").args[1] == ast.Lambda(  # type: ignore[attr-defined]
        params=("X",),
        body=ast.Arithmetic(op="+", left=ast.ColumnRef(name="X"), right=ast.IntegerLiteral(value=1)),
    )


@pytest.mark.parametrize(
    ("text", "params"),
    [
        ("transform(a, x => x + 1)", ("X",)),
        ("transform(a, (x) => x + 1)", ("X",)),
        ("transform(a, ( `x` ) => x + 1)", ("x",)),
        ("reduce(a, 0, (s, x) => s + x)", ("S", "X")),
    ],
)
def test_a_lambda_takes_its_parameters_bare_or_in_parentheses(text: str, params: tuple[str, ...]) -> None:
    lam = parse_expression(text).args[-1]  # type: ignore[attr-defined]
    assert isinstance(lam, ast.Lambda) and lam.params == params


def test_a_parenthesised_argument_is_still_an_expression() -> None:
    call = parse_expression("transform(a, (x) + 1, (y))")
    assert call == ast.FunctionCall(
        name="TRANSFORM",
        args=(
            ast.ColumnRef(name="A"),
            ast.Arithmetic(op="+", left=ast.ColumnRef(name="X"), right=ast.IntegerLiteral(value=1)),
            ast.ColumnRef(name="Y"),
        ),
    )


@pytest.mark.parametrize("param", ["x + 1", "t.x", "1"])
def test_a_parenthesised_lambda_parameter_must_be_a_name(param: str) -> None:
    with pytest.raises(SqlSyntaxError, match="A lambda parameter must be a name"):
        parse_expression(f"transform(a, ({param}) => 1)")


def test_case_and_cast() -> None:
    expr = parse_expression("CASE a WHEN 1 THEN 'x' ELSE 'y' END")
    assert isinstance(expr, ast.SimpleCase)
    assert expr.default == ast.StringLiteral(value="y")
    assert parse_expression("CAST(a AS DECIMAL(4, 2))") == ast.Cast(
        operand=ast.ColumnRef(name="A"), type=t.Decimal(4, 2)
    )


def test_positions_are_line_and_column() -> None:
    (statement,) = parse_statements("CREATE STREAM o AS SELECT\n  a + 1 FROM s;")
    assert isinstance(statement, ast.CreateAsSelect)
    item = statement.query.select[0]
    assert isinstance(item, ast.SingleColumn)
    assert item.expr.pos == ast.Pos(2, 3)


# ---------------------------------------------------------------------------- types


@pytest.mark.parametrize(
    ("text", "type_"),
    [
        ("INT", t.INTEGER),
        ("varchar", t.STRING),
        ("STRING", t.STRING),
        ("DECIMAL(10, 2)", t.Decimal(10, 2)),
        ("ARRAY<MAP<STRING, BIGINT>>", t.Array(t.Map(t.STRING, t.BIGINT))),
        (
            "STRUCT<a INT, `b` ARRAY<DOUBLE>>",
            t.Struct((t.Field("A", t.INTEGER), t.Field("b", t.Array(t.DOUBLE)))),
        ),
        ("STRUCT<>", t.Struct(())),
    ],
)
def test_types(text: str, type_: t.SqlType) -> None:
    assert parse_type(text) == type_


def test_types_round_trip_through_their_ksqldb_spelling() -> None:
    type_ = t.Struct((t.Field("a b", t.Map(t.STRING, t.Decimal(4, 2))), t.Field("X", t.Array(t.BYTES))))
    assert str(type_) == "STRUCT<`a b` MAP<STRING, DECIMAL(4, 2)>, `X` ARRAY<BYTES>>"
    assert parse_type(str(type_)) == type_


def test_schema_with_key_columns() -> None:
    (key, value) = parse_schema("`K` STRING KEY, `V` INTEGER")
    assert (key.name, key.type, key.constraint) == ("K", t.STRING, "KEY")
    assert (value.name, value.type, value.constraint) == ("V", t.INTEGER, None)


# ---------------------------------------------------------------------------- errors


def test_syntax_error_names_the_token_line_and_column() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements("CREATE STREAM o AS SELECT\n  a b c FROM s;")
    error = info.value
    assert (error.line, error.column) == (2, 7)
    assert error.message.startswith("line 2:7: Syntax Error\nExpecting {',', 'FROM'}\n")
    assert "Statement: CREATE STREAM o AS SELECT\n  a b c FROM s;" in error.message
    assert "line 2:7: mismatched input 'c'" in error.message


def test_a_reserved_keyword_where_a_name_would_go_fails_where_it_stands() -> None:
    # lark's contextual lexer would read the second AND as a column name and fail later, at V
    # ("missing 'HAVING' at 'V'"); ksqlDB's lexer never makes a name of a reserved keyword
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements("CREATE STREAM O AS SELECT ID, V FROM S\n WHERE V = 'x' AND AND V = 'y';")
    error = info.value
    assert (error.line, error.column) == (2, 20)
    # ksqlDB's message lists no more than three expected tokens; qtt's detail lists them all
    assert error.message.startswith("line 2:20: Syntax Error\n\nStatement: ")
    assert error.detail is not None and error.detail.startswith("Syntax Error: unexpected 'AND'; expecting {'(', ")
    # the non-reserved keywords and the quoted forms of a name are what IDENTIFIER stands for
    assert error.detail.endswith(", FLOATING_POINT_VALUE, IDENTIFIER}") and "'ADD'" not in error.detail
    assert error.snippet == " WHERE V = 'x' AND AND V = 'y';\n                   ^^^"


def test_a_reserved_keyword_is_a_name_only_when_quoted() -> None:
    assert parse_expression("`AND` + by + size") == ast.Arithmetic(
        op="+",
        left=ast.Arithmetic(op="+", left=ast.ColumnRef(name="AND"), right=ast.ColumnRef(name="BY")),
        right=ast.ColumnRef(name="SIZE"),
    )
    with pytest.raises(SqlSyntaxError, match="unexpected 'and'"):
        parse_expression("x + and")


@pytest.mark.parametrize(
    ("sql", "detail", "caret"),
    [
        ("CREATE STREAM o AS SELECT a FROM", "Syntax Error: unexpected end of input; expecting {", 33),
        ("CREATE STREAM o AS SELECT a # b FROM s;", "Syntax Error: unexpected character '#'", 29),
        (
            "CREATE TABLE t AS SELECT a, COUNT(*) FROM s GROUP BY a, (b, c);",
            "Syntax Error: missing ')' before ','",
            59,
        ),
        ("CREATE STREAM o AS SELECT 9223372036854775808 FROM s;", "Invalid numeric literal: 9223372036854775808", 27),
        ("CREATE STREAM o AS SELECT CAST(a AS FOO) FROM s;", "Cannot resolve unknown type: FOO", 37),
    ],
)
def test_a_syntax_error_names_the_offending_token_and_carries_a_caret_under_it(
    sql: str, detail: str, caret: int
) -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements(sql)
    error = info.value
    assert error.detail is not None and error.detail.startswith(detail)
    assert "line " not in error.detail
    source, marks = (error.snippet or "").split("\n")
    assert source == sql and marks.index("^") == caret - 1


def test_a_long_line_is_cut_around_the_mistake_in_the_snippet() -> None:
    sql = "CREATE STREAM o AS SELECT " + "a + " * 100 + "FROM s;"
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements(sql)
    source, marks = (info.value.snippet or "").split("\n")
    assert source.startswith("...") and len(source) < 140
    assert source[marks.index("^") :].startswith("FROM")


def test_syntax_error_names_ksqldbs_expected_tokens_in_antlrs_words() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements(
            "CREATE STREAM s (x INT) WITH (kafka_topic='a;b', format='JSON');\nCREATE STREAM t (k STRING (KEY));"
        )
    assert info.value.message.startswith("line 2:28: Syntax Error\nExpecting {'STRING', INTEGER_VALUE}\n")
    assert "Statement: CREATE STREAM t (k STRING (KEY));\n" in info.value.message


def test_a_token_the_parser_misses_is_named_as_antlr_does() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements("CREATE TABLE t AS SELECT a, COUNT(*) FROM s GROUP BY a, (b, c);")
    assert info.value.message.startswith("line 1:59: Syntax Error\nmissing ')' at ','\nStatement: CREATE TABLE")


def test_syntax_error_at_end_of_input() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements("CREATE STREAM o AS SELECT a FROM")
    assert "mismatched input '<EOF>'" in info.value.message


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        # ksqlDB's SyntaxErrorValidator: an unknown first word, with the closest statement word
        (
            "creat STREAM s (v INT) WITH (kafka_topic='s');",
            "line 1:1: Syntax Error\nUnknown statement 'creat'\nDid you mean 'CREATE'?\n",
        ),
        (
            "DROP STREAM s;\nINSERTT INTO s SELECT * FROM t;",
            "line 2:1: Syntax Error\nUnknown statement 'INSERTT'\nDid you mean 'INSERT'?\n",
        ),
        # input that ends too soon, and a missing last semicolon
        (
            "CREATE STREAM s (v INT) WITH (kafka_topic='s'",
            "Syntax Error\nSyntax error at or near \";\"\n'}', ']', or ')' is missing\n",
        ),
        ("DROP STREAM s", "line 1:14: Syntax Error\nmissing ';' at '<EOF>'\n"),
        # one expected token without braces; more than three not listed
        ("CREATE STREAM s (v INT) WITH (kafka_topic='s') X;", "Syntax Error\nExpecting ';'\nStatement: "),
        ("CREATE STREAM s (v INT) WITH (kafka_topic=);", "Syntax Error\n\nStatement: "),
        # an error inside the primary expression a select item starts with: no viable alternative
        (
            "CREATE STREAM o AS SELECT ABS(a +) FROM s;",
            "line 1:34: Syntax Error\nSyntax error at or near ')' at line 1:34\n",
        ),
        ("CREATE STREAM o AS SELECT ABS(a) ) FROM s;", "line 1:34: Syntax Error\nExpecting {',', 'FROM'}\n"),
        # inside the WITH clause of a CREATE without columns: CREATE or CREATE ... AS is still open
        ("CREATE STREAM o WITH (kafka_topic=) AS SELECT * FROM s;", "Syntax error at or near ')' at line 1:35\n"),
    ],
)
def test_a_syntax_error_is_worded_as_ksqldbs_syntax_error_validator_words_it(sql: str, words: str) -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements(sql)
    assert words in info.value.message


def test_only_a_select_items_leading_primary_expression_is_predicted() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements("CREATE STREAM o AS SELECT a FROM s WHERE ABS(a +) > 1;")
    assert info.value.message.startswith("line 1:49: Syntax Error\n") and "at or near" not in info.value.message


def test_a_statement_qtt_has_no_grammar_for_is_named_at_its_first_word() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements("SHOW STREAMS;")
    assert info.value.message.startswith("line 1:1: Syntax Error: qtt does not support SHOW statements\n")


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE SOURCE CONNECTOR IF NOT EXISTS c WITH ('connector.class'='x');",
        "CREATE SINK CONNECTOR c WITH ('connector.class'='x');",
        "DROP CONNECTOR c;",
    ],
)
def test_a_connector_statement_is_named_at_its_first_word(sql: str) -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements(f"CREATE STREAM s (a INT) WITH (kafka_topic='s', value_format='JSON');\n{sql}")
    assert info.value.message.startswith("line 2:1: Syntax Error: qtt does not support CONNECTOR statements\n")


def test_a_create_source_stream_mistake_is_not_a_connector_statement() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements("CREATE SOURCE STREAM s (a INT) WITH kafka_topic='s';")
    assert "CONNECTOR" not in info.value.message


def test_unknown_type() -> None:
    with pytest.raises(StatementError) as info:
        parse_type("FOO")
    assert info.value.message == "Failed to prepare statement: Cannot resolve unknown type: FOO"


def test_a_literal_keyword_as_type_is_a_syntax_error() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements("CREATE STREAM o AS SELECT\n  cast(f0 as NULL) FROM s;")
    assert "Syntax error at or near 'NULL' at line 2:14" in info.value.message


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        ("9223372036854775808", "Invalid numeric literal: 9223372036854775808"),
        ("-9223372036854775809", "Invalid numeric literal: -9223372036854775809"),
        ("1.7976931348623159E308", "Number overflows DOUBLE: 1.7976931348623159E308"),
    ],
)
def test_out_of_range_literals(literal: str, message: str) -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statements(f"CREATE STREAM o AS SELECT\n  k, {literal} FROM s;")
    # ksqlDB reports these one column further on, behind its statement-preparation prefix.
    assert info.value.line == 2
    column = info.value.column
    assert f"Failed to prepare statement: line 2:{column + 1}: {message}" in info.value.message  # type: ignore[operator]


def test_bigint_minimum_is_a_valid_literal() -> None:
    assert parse_expression("-9223372036854775808") == ast.IntegerLiteral(value=-(2**63))


@pytest.mark.parametrize(
    "script",
    [
        "CREATE STREAM O AS SELECT {n} AS X FROM S;",
        "CREATE STREAM O AS SELECT CAST(1 AS DECIMAL({n}, 2)) AS X FROM S;",
        "CREATE TABLE O AS SELECT K, COUNT(*) FROM S WINDOW TUMBLING (SIZE {n} SECONDS) GROUP BY K;",
    ],
)
def test_an_integer_of_more_than_4300_digits_is_a_located_syntax_error(script: str) -> None:
    text = script.format(n="9" * 5000)
    with pytest.raises(SqlSyntaxError, match=r"Invalid numeric literal: 9{20}\.\.\. \(5,000 digits\)") as info:
        parse_statements(text)
    assert info.value.line == 1 and info.value.column == text.index("9") + 1


def test_a_time_unit_keyword_is_a_unit_only_where_a_time_function_takes_one() -> None:
    sql = "CREATE STREAM X AS SELECT FORMAT_DATE(day, 'y') A, DATEADD(DAYS, 1, day) B FROM S;"
    (statement,) = parse_statements(sql)
    assert isinstance(statement, ast.CreateAsSelect)
    formatted, shifted = (item.expr for item in statement.query.select)
    assert isinstance(formatted, ast.FunctionCall) and isinstance(shifted, ast.FunctionCall)
    assert formatted.args[0] == ast.ColumnRef(name="DAY", source=None)
    assert shifted.args[0] == ast.IntervalUnit(unit="DAY")
    assert shifted.args[2] == ast.ColumnRef(name="DAY", source=None)
